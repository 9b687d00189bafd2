package engine

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/icesql/icesql/engine/internal/vecexec"
	"github.com/icesql/icesql/pushdown/vector"
)

// Finding the rows an UPDATE or DELETE changes is a scan of the whole
// target: every row would become a go-mysql-server row and go through its
// WHERE, which for a scattered 1% change of a large table is nearly all of
// the statement's time (expression evaluation boxes every value, and % goes
// through decimals). Instead the conjuncts of the WHERE that the vector
// evaluator computes exactly run on the Arrow batches of the row-identity
// scan, and only the rows where they are TRUE become rows. The Filter node
// stays above the scan and evaluates the whole condition on what is left,
// so the vector part only has to be exact about which rows it drops: a
// conjunct that does not translate (a subquery, a function, a column of
// another table) is left to the Filter alone, and a batch whose values
// leave the evaluator's exact range is passed on whole.

// withChangedRowSelection is n, a Filter directly above a row-identity
// scan (through a table alias), with the scan given the conjuncts the
// vector evaluator translates; ok false when n is something else or
// nothing translates. It is applied when the plan is built (vecexec/vecfilter.go's
// builder) rather than by an analyzer rule: go-mysql-server analyzes a
// single-table UPDATE or DELETE with a short fixed rule list that runs no
// rule of ours.
func withChangedRowSelection(ctx *sql.Context, n sql.Node) (sql.Node, bool, error) {
	f, ok := n.(*plan.Filter)
	if !ok || !vecexec.VectorizeOn(ctx) {
		return nil, false, nil
	}
	child, err := withRowSelection(ctx, f.Child, f.Expression)
	if err != nil || child == nil {
		return nil, false, err
	}
	nf, err := f.WithChildren(ctx, child)
	return nf, err == nil, err
}

// withRowSelection is scan reading only the rows where the translatable
// conjuncts of cond hold, or nil when scan is no row-identity scan or
// nothing translates.
func withRowSelection(ctx *sql.Context, scan sql.Node, cond sql.Expression) (sql.Node, error) {
	if alias, ok := scan.(*plan.TableAlias); ok {
		child, err := withRowSelection(ctx, alias.Child, cond)
		if err != nil || child == nil {
			return nil, err
		}
		return alias.WithChildren(ctx, child)
	}
	if ita, ok := scan.(*plan.IndexedTableAccess); ok {
		// The WHERE's Iceberg part was taken as a lookup (lookup.go).
		t, ok := ita.Table.(*Table)
		if !ok {
			return nil, nil
		}
		nt := t.WithRowSelection(ctx, cond, ita.Id())
		if nt == nil {
			return nil, nil
		}
		return ita.WithTable(nt)
	}
	rt, ok := scan.(*plan.ResolvedTable)
	if !ok {
		return nil, nil
	}
	// At build time the process list wraps the table to track progress.
	pt, wrapped := rt.Table.(*plan.ProcessTable)
	inner := rt.Table
	if wrapped {
		inner = pt.Table
	}
	t, ok := inner.(*Table)
	if !ok {
		return nil, nil
	}
	nt := t.WithRowSelection(ctx, cond, rt.Id())
	if nt == nil {
		return nil, nil
	}
	if !wrapped {
		return rt.WithTable(ctx, nt)
	}
	npt := *pt
	npt.Table = nt
	return rt.WithTable(ctx, &npt)
}

// withRowSelection is a copy of the row-identity table t picking its rows
// by the translatable conjuncts of cond, or nil. id is the plan's id of
// the scan: go-mysql-server's short rule list for a single-table UPDATE or
// DELETE does not run bindScanIDs, and without the id only columns
// qualified by the table's own name (not an alias) would be known as its.
func (t *Table) WithRowSelection(ctx *sql.Context, cond sql.Expression, id sql.TableId) *Table {
	if t.identity == nil || t.rowSelect != nil || t.snapshotID != nil {
		return nil
	}
	names := t
	if t.scan.ID == 0 && id != 0 {
		bound := *t
		bound.scan = &vecexec.ScanID{ID: id}
		names = &bound
	}
	sel := names.RowSelection_(ctx, cond)
	if sel == nil {
		return nil
	}
	nt := *t
	nt.rowSelect = sel
	return &nt
}

// rowSelection translates the conjuncts of cond it can; nil if none.
func (t *Table) RowSelection_(ctx *sql.Context, cond sql.Expression) *vecexec.RowSelection {
	tr := &vecexec.VecTranslator{Ctx: ctx, T: t, Cols: map[string]bool{}, RowLevel: true}
	var pred vector.Expr
	for _, c := range expression.SplitConjunction(ctx, cond) {
		p, err := tr.Predicate(c)
		if err != nil {
			continue
		}
		if pred == nil {
			pred = p
		} else {
			pred = vector.And{L: pred, R: p}
		}
	}
	if pred == nil {
		return nil
	}
	sel := &vecexec.RowSelection{Pred: pred}
	for _, name := range t.names {
		if tr.Cols[name] {
			sel.Cols = append(sel.Cols, name)
		}
	}
	return sel
}

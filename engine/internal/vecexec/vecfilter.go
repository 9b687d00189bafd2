package vecexec

import (
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown/vector"
)

// A WHERE clause directly over an Iceberg scan (a plain SELECT, each input
// of a join, the rows under a GROUP BY the vector path declined) runs on
// Arrow batches when it translates: the predicate gives each batch a
// selection of rows, and only those rows become go-mysql-server rows (late
// materialisation: a rejected row's values are never converted). This
// happens when the plan is built into iterators, not in an analyzer rule,
// because go-mysql-server analyzes simple single-table SELECTs with a
// short rule set of its own that runs no rule icesql adds; building sees
// every statement's final plan, with its column indexes assigned.

// VectorBuilder is the exec builder's priority builder: it builds Filters
// over Iceberg scans on the vector path, folds constant date literals into
// the Filters it leaves to the row path, and passes everything else on.
type VectorBuilder struct {
	Next sql.NodeExecBuilder // the EXPLAIN builder
	Base sql.NodeExecBuilder // go-mysql-server's builder
	// ChangedRows is n, a Filter directly above a row-identity scan, with
	// the scan picking its rows on Arrow batches; ok false when n is
	// something else (engine's withChangedRowSelection, engine/rowselect.go).
	ChangedRows func(ctx *sql.Context, n sql.Node) (_ sql.Node, ok bool, _ error)
}

func (b VectorBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	switch n := n.(type) {
	case *plan.Filter:
		iter, err := b.buildFilter(ctx, n, row)
		if iter != nil || err != nil {
			return iter, err
		}
		f, err := withFoldedDates(ctx, n)
		if err != nil {
			return nil, err
		}
		return b.Next.Build(ctx, f, row)
	case *plan.TopN:
		if VectorizeOn(ctx) {
			if iter, err := buildJoinAggTopN(ctx, n, row); iter != nil || err != nil {
				return iter, err
			}
			if iter, err := buildAggTopN(ctx, b, n, row); iter != nil || err != nil {
				return iter, err
			}
			if len(row) == 0 {
				if top, _ := newRowsTopN(ctx, n); top != nil {
					return top.iter(ctx) // vecrowstopn.go
				}
			}
		}
	case *plan.Having:
		if VectorizeOn(ctx) && len(row) == 0 {
			h, err := pushHaving(ctx, n) // vechaving.go
			if err != nil {
				return nil, err
			}
			if h != nil {
				return b.Base.Build(ctx, h, row)
			}
		}
	case *plan.GroupBy:
		if VectorizeOn(ctx) {
			if iter, err := buildJoinAgg(ctx, n, row); iter != nil || err != nil {
				return iter, err
			}
		}
	case *plan.JoinNode:
		if VectorizeOn(ctx) {
			if vj, _ := NewVectorJoin(ctx, n, row); vj != nil {
				return vj.iter(ctx)
			}
		}
	case *plan.DescribeQuery:
		// As the exec builder will run it (sqlfunc/overflow.go, sqlfunc/decimalcompare.go).
		q, _, err := sqlfunc.CheckNodeArithmetic(ctx, n.Query())
		if err != nil {
			return nil, err
		}
		noteVectorFilters(ctx, q)
	}
	return b.Next.Build(ctx, n, row)
}

// buildFilter builds f on the vector path, or returns nil to leave it to
// the builders after this one.
func (b VectorBuilder) buildFilter(ctx *sql.Context, f *plan.Filter, row sql.Row) (sql.RowIter, error) {
	if !VectorizeOn(ctx) {
		return nil, nil
	}
	// The WHERE of an UPDATE or DELETE picks the rows of its row-identity
	// scan on Arrow batches (rowscan_fast.go).
	if sel, ok, err := b.ChangedRows(ctx, f); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return b.Base.Build(ctx, sel, row)
	}
	// A Filter built with a parent row is a join's inner side or in a
	// subquery, built again for each outer row: the row path's cache of
	// small tables serves those rescans, which the vector path would read
	// from storage each time.
	if len(row) == 0 {
		if vf, _ := newVectorFilter(ctx, f); vf != nil {
			return vf.iter(ctx)
		}
	}
	return nil, nil
}

// withFoldedDates is f with its constant date literals folded, when the
// vector path is on; OFF leaves go-mysql-server's row path as it is,
// folding included: the differential tests compare with it.
func withFoldedDates(ctx *sql.Context, f *plan.Filter) (*plan.Filter, error) {
	if !VectorizeOn(ctx) {
		return f, nil
	}
	cond, changed, err := sqlval.FoldDateLiterals(ctx, f.Expression)
	if err != nil || !changed {
		return f, err
	}
	return plan.NewFilter(ctx, cond, f.Child), nil
}

// noteVectorFilters tells EXPLAIN, per scan, whether the Filter above it
// runs on the vector path.
func noteVectorFilters(ctx *sql.Context, n sql.Node) {
	for _, t := range ScanTables(ctx, n) {
		t.ScanRef().filterNote = ""
	}
	inner, once := innerFilters(ctx, n), onceFilters(ctx, n)
	WalkPlan(ctx, n, func(n sql.Node) {
		if j, ok := n.(*plan.JoinNode); ok && VectorizeOn(ctx) {
			if vj, _ := NewVectorJoin(ctx, j, nil); vj != nil {
				vj.left.t.ScanRef().filterNote = "yes: the WHERE clause and the hash join's probe run on Arrow batches; rows are built only for rows that join"
				vj.right.t.ScanRef().filterNote = "yes: the WHERE clause runs on Arrow batches; its rows fill the hash join's table"
			}
			return
		}
		f, ok := n.(*plan.Filter)
		if !ok {
			return
		}
		t, _ := filteredScan(f.Child)
		if t == nil || t.ScanRef().filterNote != "" {
			return
		}
		switch _, why := newVectorFilter(ctx, f); {
		case !VectorizeOn(ctx):
			t.ScanRef().filterNote = "no, icesql_vectorize is OFF"
		case once[f] != "":
			t.ScanRef().filterNote = "no, the row path evaluates the WHERE clause once per statement, as " + once[f]
		case inner[f]:
			t.ScanRef().filterNote = "no, the row path evaluates the WHERE clause: the scan is read again for each outer row"
		case why == "":
			t.ScanRef().filterNote = "yes: the WHERE clause runs on Arrow batches; rows are built for the rows it keeps"
		default:
			t.ScanRef().filterNote = "no, the row path evaluates the WHERE clause: " + why
		}
	})
	noteJoinAggregates(ctx, n)
	noteAggTopN(ctx, n)
	noteRowsTopN(ctx, n, inner)
}

// innerFilters is the Filters and TopNs of n built with a parent row:
// those on the inner side of a join, and those in subqueries.
func innerFilters(ctx *sql.Context, n sql.Node) map[sql.Node]bool {
	inner := map[sql.Node]bool{}
	mark := func(n sql.Node) {
		WalkPlan(ctx, n, func(n sql.Node) {
			switch n.(type) {
			case *plan.Filter, *plan.TopN:
				inner[n] = true
			}
		})
	}
	WalkPlan(ctx, n, func(n sql.Node) {
		if j, ok := n.(*plan.JoinNode); ok {
			mark(j.Right())
		}
		if ex, ok := n.(sql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
					if sq, ok := e.(*plan.Subquery); ok {
						mark(sq.Query)
					}
					return false
				})
			}
		}
	})
	return inner
}

// ReadOnce is a plan node whose rows are read once per statement though
// it is built again for each outer row: planrules' keyed sources and OR
// lookups, whose rows fill tables that the outer rows probe.
// OncePerStatement says what the rows fill, for EXPLAIN; "" when the node
// reads its rows for each outer row after all.
type ReadOnce interface {
	OncePerStatement(ctx *sql.Context) string
}

// onceFilters is the Filters of n that are built with a parent row but
// read once per statement, each with what their rows fill: those below a
// hash join's table (HashLookup) or a ReadOnce node, and those of a
// subquery that reads no outer column (go-mysql-server keeps its rows).
// A nested-loop join's right side and the subqueries within are left to
// innerFilters: they are read again for each of their outer rows.
func onceFilters(ctx *sql.Context, n sql.Node) map[sql.Node]string {
	once := map[sql.Node]string{}
	var mark func(n sql.Node, what string)
	mark = func(n sql.Node, what string) {
		transform.Inspect(n, func(n sql.Node) bool {
			switch n := n.(type) {
			case *plan.Filter:
				once[n] = what
			case *plan.JoinNode:
				mark(n.Left(), what)
				return false
			}
			return true
		})
	}
	WalkPlan(ctx, n, func(n sql.Node) {
		switch r := n.(type) {
		case *plan.HashLookup:
			mark(r.Child, "its rows fill the join's hash table")
		case ReadOnce:
			if what := r.OncePerStatement(ctx); what != "" {
				mark(n, what)
			}
		}
		if ex, ok := n.(sql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
					if sq, ok := e.(*plan.Subquery); ok && sq.CanCacheResults() {
						mark(sq.Query, "the subquery reads no outer column and its rows are kept")
					}
					return false
				})
			}
		}
	})
	return once
}

// filteredScan is the Iceberg table a Filter's child scans, when the
// child is a scan whose rows are the table's projected columns.
func filteredScan(child sql.Node) (ScanTable, string) {
	if ta, ok := child.(*plan.TableAlias); ok {
		child = ta.Child
	}
	var st sql.Table
	switch c := child.(type) {
	case *plan.ResolvedTable:
		st = c.Table
	case *plan.IndexedTableAccess:
		if !c.IsStatic() {
			return nil, "an index lookup keyed by another table"
		}
		st = c.Table
	default:
		return nil, ""
	}
	if _, ok := plan.FindVirtualColumnTable(st); ok {
		return nil, "virtual columns"
	}
	t, ok := AsScanTable(st)
	if !ok {
		return nil, ""
	}
	return t, ""
}

// vectorFilter is a Filter over an Iceberg scan, computed on batches.
type vectorFilter struct {
	t    ScanTable
	cols []string       // Iceberg names of the row's columns, in row order
	read []string       // what is read: cols, or the first column for none
	pred vector.Expr    // nil: every row
	cond sql.Expression // the row path's condition, for inexact batches
	// condMu serializes the workers' evaluations of cond.
	condMu sync.Mutex
	width  int
	// scales is per column of cols the scale of a decimal column, else -1:
	// native decoding hands decimals over as unscaled int64s.
	scales []int32
}

// newVectorFilter translates f, or says why it cannot.
func newVectorFilter(ctx *sql.Context, f *plan.Filter) (*vectorFilter, string) {
	return newVectorScan(ctx, f.Child, f.Expression)
}

// vectorSource is n, a scan or a Filter over one, read on the vector path.
func vectorSource(ctx *sql.Context, n sql.Node) (*vectorFilter, string) {
	if f, ok := n.(*plan.Filter); ok {
		return newVectorFilter(ctx, f)
	}
	return newVectorScan(ctx, n, nil)
}

// newVectorScan reads scan on the vector path, keeping the rows where cond
// (nil: every row) is TRUE, or says why it cannot.
func newVectorScan(ctx *sql.Context, scan sql.Node, cond sql.Expression) (*vectorFilter, string) {
	t, why := filteredScan(scan)
	if t == nil {
		if why == "" {
			why = "not over an Iceberg scan"
		}
		return nil, why
	}
	switch {
	case t.AsOf() != nil:
		return nil, "time travel reads are not vectorized"
	case t.RowIdentity():
		return nil, "rows of a row-level change"
	}
	cols := t.ResolveColumns(t.Projection())
	if t.Projection() == nil {
		cols = t.ColumnNames()
	}
	read := cols
	if len(read) == 0 {
		read = t.ColumnNames()[:1]
	}
	v := &vectorFilter{t: t, cols: cols, read: read, cond: cond, width: len(cols), scales: decimalScales(t.Iceberg().Schema(), cols)}
	if cond == nil {
		return v, ""
	}
	tr := &VecTranslator{Ctx: ctx, T: t, Cols: map[string]bool{}}
	// Column references index the scan's rows: each must be the projected
	// column of its name, or the row path and this one would disagree.
	var bad string
	walkGetFields(cond, func(gf *expression.GetField) {
		j := t.AllColumns().IndexOfColName(gf.Name())
		if bad == "" && (gf.Index() < 0 || gf.Index() >= len(cols) || j < 0 || j >= len(t.ColumnNames()) || cols[gf.Index()] != t.ColumnNames()[j] || !t.Owns(gf)) {
			bad = "column " + gf.String() + " is not the scan's"
		}
	})
	if bad != "" {
		return nil, bad
	}
	pred, err := tr.Predicate(cond)
	if err != nil {
		return nil, err.Error()
	}
	if err := vector.Check(pred, true); err != nil {
		return nil, err.Error()
	}
	v.pred = pred
	return v, ""
}

// decimalScales is the scale of each decimal column of cols in sc, -1 for
// the other columns.
func decimalScales(sc *iceberg.Schema, cols []string) []int32 {
	out := make([]int32, len(cols))
	for i, name := range cols {
		out[i] = -1
		if f, ok := sc.FindFieldByName(name); ok {
			if d, ok := f.Type.(iceberg.DecimalType); ok {
				out[i] = int32(d.Scale())
			}
		}
	}
	return out
}

func walkGetFields(e sql.Expression, f func(*expression.GetField)) {
	if gf, ok := e.(*expression.GetField); ok {
		f(gf)
	}
	for _, c := range e.Children() {
		walkGetFields(c, f)
	}
}

// DescribeFilter is the EXPLAIN line of a scan's Filter, if one was noted.
func (s *ScanID) DescribeFilter() string {
	if s.filterNote == "" {
		return ""
	}
	return "vectorized filter: " + strings.TrimSpace(s.filterNote)
}

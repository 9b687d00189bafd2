package engine

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown"
)

// go-mysql-server hands a table its WHERE conjuncts only through
// sql.IndexSearchableTable.LookupForExpressions (it never calls
// sql.FilteredTable), and expects an index lookup back. It does so for
// simple single-table SELECTs; other statements get their filters from
// pushRowFilters (lookup.go), which explains why. icesql answers with a
// lookup on a pseudo-index, rowFilterIndex, whose ranges carry the Iceberg
// row filter; the table returned by IndexedAccess scans with that filter.
//
// PreciseMatch is false, so go-mysql-server keeps the whole WHERE clause
// above the scan: the Iceberg filter only prunes manifests, files and row
// groups (and drops rows early), and SQL decides which rows qualify. A
// predicate pushed to Iceberg may therefore match more rows than SQL would,
// never fewer (see pushdown/filter.go).

var (
	_ sql.IndexSearchableTable = (*Table)(nil)
	_ sql.IndexedTable         = (*Table)(nil)
)

// pushedFilter is the part of a WHERE clause a scan gives Iceberg.
type pushedFilter struct {
	expr iceberg.BooleanExpression
	text string // expr as EXPLAIN prints it
	// residual is the conjuncts Iceberg cannot evaluate. (SQL evaluates
	// the whole WHERE clause again in any case: PreciseMatch is false.)
	residual []string
}

// SkipIndexCosting implements sql.IndexSearchable: Iceberg tables have no
// indexes for go-mysql-server to cost.
func (t *Table) SkipIndexCosting() bool { return true }

// LookupForExpressions implements sql.IndexSearchable.
func (t *Table) LookupForExpressions(ctx *sql.Context, exprs ...sql.Expression) (sql.IndexLookup, *sql.FuncDepSet, sql.Expression, bool, error) {
	if sessionOf(ctx).fullAnalysis(ctx) {
		// The join planner would cost the lookup as one row; pushRowFilters
		// pushes the filter after join planning instead (lookup.go).
		return sql.IndexLookup{}, nil, nil, false, nil
	}
	f := t.translate(ctx, exprs)
	if f == nil {
		return sql.IndexLookup{}, nil, nil, false, nil
	}
	lookup := sql.IndexLookup{Index: &rowFilterIndex{t: t}, Ranges: rowFilterRanges{f: f}}
	return lookup, nil, expression.JoinAnd(exprs...), true, nil
}

// translate turns the conjuncts that Iceberg can evaluate into one row
// filter, or returns nil when none can be.
func (t *Table) translate(ctx *sql.Context, exprs []sql.Expression) *pushedFilter {
	tr := translator{ctx: ctx, t: t}
	f := &pushedFilter{}
	for _, e := range exprs {
		// The short rule sets hand over comparisons as bound, before
		// mysqlOperation made them exact (sqlfunc/decimalcompare.go).
		e = sqlfunc.ExactComparisons(ctx, e)
		ice, _, ok := tr.expr(e)
		if !ok {
			f.residual = append(f.residual, e.String())
			continue
		}
		if f.expr == nil {
			f.expr = ice
		} else {
			f.expr = iceberg.NewAnd(f.expr, ice)
		}
	}
	if f.expr == nil {
		return nil
	}
	f.text = pushdown.Describe(t.tbl.Schema(), f.expr)
	return f
}

// IndexedAccess implements sql.IndexAddressable.
func (t *Table) IndexedAccess(_ *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	nt := *t
	if r, ok := lookup.Ranges.(rowFilterRanges); ok {
		nt.filter = r.f
	}
	return &nt
}

// GetIndexes (indexes.go) lists no index a query could choose.

// PreciseMatch implements sql.IndexAddressable: see the comment at the top.
func (t *Table) PreciseMatch() bool { return false }

// LookupPartitions implements sql.IndexedTable.
func (t *Table) LookupPartitions(ctx *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	return t.Partitions(ctx)
}

// translator maps go-mysql-server expressions on one table's columns to
// Iceberg expressions.
type translator struct {
	ctx *sql.Context
	t   *Table
}

// expr translates e. exact says the result matches exactly the rows for
// which e is true; otherwise it matches a superset, which is enough to prune
// but cannot be negated.
func (tr translator) expr(e sql.Expression) (out iceberg.BooleanExpression, exact, ok bool) {
	switch e := e.(type) {
	case *expression.And:
		l, lExact, lok := tr.expr(e.LeftChild)
		r, rExact, rok := tr.expr(e.RightChild)
		switch {
		case lok && rok:
			return iceberg.NewAnd(l, r), lExact && rExact, true
		case lok:
			return l, false, true
		case rok:
			return r, false, true
		}
		return nil, false, false
	case *expression.Or:
		l, lExact, lok := tr.expr(e.LeftChild)
		r, rExact, rok := tr.expr(e.RightChild)
		if !lok || !rok {
			return nil, false, false
		}
		return iceberg.NewOr(l, r), lExact && rExact, true
	case *expression.Not:
		if _, ok := sqlfunc.SelfEquality(e.Child); ok {
			// never(x) of sqlfunc/decimalcompare.go: true for no row. (Not exact:
			// its negation is NULL, not true, for a NULL x.)
			return iceberg.AlwaysFalse{}, false, true
		}
		c, cExact, cok := tr.expr(e.Child)
		if !cok || !cExact {
			return nil, false, false
		}
		return iceberg.NewNot(c), true, true
	case *expression.IsNull:
		if f, ok := tr.column(e.Child, false); ok {
			return pushdown.IsNull(f)
		}
	case *expression.Equals:
		return tr.compare(e.Left(), e.Right(), iceberg.OpEQ)
	case *expression.NullSafeEquals:
		if l, ok := e.Right().(*expression.Literal); ok && l.Val == nil {
			if f, ok := tr.column(e.Left(), false); ok {
				return pushdown.IsNull(f)
			}
		}
		// x <=> v is FALSE, not NULL, where x is NULL, so its negation
		// holds there and Iceberg's negated equality would lose those
		// rows: usable to prune, not to negate.
		out, _, ok := tr.compare(e.Left(), e.Right(), iceberg.OpEQ)
		return out, false, ok
	case *expression.LessThan:
		return tr.compare(e.Left(), e.Right(), iceberg.OpLT)
	case *expression.LessThanOrEqual:
		return tr.compare(e.Left(), e.Right(), iceberg.OpLTEQ)
	case *expression.GreaterThan:
		return tr.compare(e.Left(), e.Right(), iceberg.OpGT)
	case *expression.GreaterThanOrEqual:
		return tr.compare(e.Left(), e.Right(), iceberg.OpGTEQ)
	case *expression.Between:
		lo, loExact, lok := tr.compare(e.Val, e.Lower, iceberg.OpGTEQ)
		hi, hiExact, hok := tr.compare(e.Val, e.Upper, iceberg.OpLTEQ)
		if lok && hok {
			return iceberg.NewAnd(lo, hi), loExact && hiExact, true
		}
	case *expression.InTuple:
		return tr.in(e.Left(), e.Right())
	case *expression.HashInTuple:
		return tr.in(e.Left(), e.Right())
	case *expression.Like:
		return tr.like(e)
	}
	return nil, false, false
}

// compare translates `left op right` with a column on one side and a
// constant on the other.
func (tr translator) compare(left, right sql.Expression, op iceberg.Operation) (iceberg.BooleanExpression, bool, bool) {
	if _, isLit := left.(*expression.Literal); isLit {
		left, right = right, left
		switch op {
		case iceberg.OpLT:
			op = iceberg.OpGT
		case iceberg.OpLTEQ:
			op = iceberg.OpGTEQ
		case iceberg.OpGT:
			op = iceberg.OpLT
		case iceberg.OpGTEQ:
			op = iceberg.OpLTEQ
		}
	}
	f, ok := tr.column(left, true)
	if !ok {
		return nil, false, false
	}
	lit, ok := right.(*expression.Literal)
	if !ok {
		return nil, false, false
	}
	if op != iceberg.OpEQ && !tr.t.rangeBoundTrusted(f, lit.Val) { // partitionbounds.go
		return nil, false, false
	}
	return pushdown.Compare(f, op, sqlval.InstantIn(tr.ctx, f, lit.Val)) // sqlval/timezone.go
}

func (tr translator) in(left, right sql.Expression) (iceberg.BooleanExpression, bool, bool) {
	f, ok := tr.column(left, true)
	if !ok {
		return nil, false, false
	}
	tuple, ok := right.(expression.Tuple)
	if !ok {
		return nil, false, false
	}
	vals := make([]any, len(tuple))
	for i, e := range tuple {
		lit, ok := e.(*expression.Literal)
		if !ok {
			return nil, false, false
		}
		vals[i] = sqlval.InstantIn(tr.ctx, f, lit.Val) // sqlval/timezone.go
	}
	out, ok := pushdown.In(f, vals)
	return out, ok, ok
}

func (tr translator) like(e *expression.Like) (iceberg.BooleanExpression, bool, bool) {
	f, ok := tr.column(e.Left(), true)
	if !ok {
		return nil, false, false
	}
	pat, ok := e.Right().(*expression.Literal)
	if !ok {
		return nil, false, false
	}
	pattern, ok := pat.Val.(string)
	if !ok {
		return nil, false, false
	}
	escape := '\\'
	if e.Escape != nil {
		lit, ok := e.Escape.(*expression.Literal)
		if !ok {
			return nil, false, false
		}
		s, ok := lit.Val.(string)
		if !ok || utf8.RuneCountInString(s) != 1 {
			return nil, false, false
		}
		escape = []rune(s)[0]
	}
	return pushdown.Like(f, pattern, escape)
}

// column resolves e to an Iceberg field of the table when e is one of its
// columns. compared says the column is compared with a value: a text
// column then qualifies only under a collation that compares bytes, as
// Iceberg does, without padding (utf8mb4_0900_bin, binary).
func (tr translator) column(e sql.Expression, compared bool) (iceberg.NestedField, bool) {
	gf, ok := e.(*expression.GetField)
	if !ok || !tr.t.Owns(gf) {
		return iceberg.NestedField{}, false
	}
	i := tr.t.schema.IndexOfColName(gf.Name())
	if i < 0 {
		return iceberg.NestedField{}, false
	}
	col := tr.t.schema[i]
	f, ok := tr.t.tbl.Schema().FindFieldByNameCaseInsensitive(col.Name)
	if !ok || pushdown.Promoted(tr.t.tbl.Metadata().Schemas(), f) || !tr.t.boundsTrusted(tr.ctx, f) {
		return iceberg.NestedField{}, false
	}
	if compared && types.IsText(col.Type) {
		st, ok := col.Type.(sql.StringType)
		if !ok {
			return iceberg.NestedField{}, false
		}
		switch st.Collation() {
		case sql.Collation_utf8mb4_0900_bin, sql.Collation_binary:
		default:
			return iceberg.NestedField{}, false
		}
		// CHAR(n) drops trailing spaces on read; Iceberg keeps what was
		// written, so equal values could differ in storage.
		if strings.HasPrefix(strings.ToLower(col.Type.String()), "char") {
			return iceberg.NestedField{}, false
		}
	}
	return f, true
}

// rowFilterIndex is the pseudo-index of LookupForExpressions' lookups. It
// is never listed by GetIndexes, so nothing but those lookups uses it.
type rowFilterIndex struct{ t *Table }

var _ sql.Index = (*rowFilterIndex)(nil)

func (i *rowFilterIndex) ID() string                                                    { return "iceberg_row_filter" }
func (i *rowFilterIndex) Database() string                                              { return i.t.db.name }
func (i *rowFilterIndex) Table() string                                                 { return i.t.name }
func (i *rowFilterIndex) Expressions() []string                                         { return []string{"iceberg row filter"} }
func (i *rowFilterIndex) IsUnique() bool                                                { return false }
func (i *rowFilterIndex) IsSpatial() bool                                               { return false }
func (i *rowFilterIndex) IsFullText() bool                                              { return false }
func (i *rowFilterIndex) IsVector() bool                                                { return false }
func (i *rowFilterIndex) Comment() string                                               { return "" }
func (i *rowFilterIndex) IndexType() string                                             { return "ICEBERG" }
func (i *rowFilterIndex) IsGenerated() bool                                             { return true }
func (i *rowFilterIndex) CanSupport(*sql.Context, ...sql.Range) bool                    { return true }
func (i *rowFilterIndex) CanSupportOrderBy(sql.Expression) bool                         { return false }
func (i *rowFilterIndex) CoversColumns([]string) bool                                   { return false }
func (i *rowFilterIndex) PrefixLengths() []uint16                                       { return nil }
func (i *rowFilterIndex) ColumnExpressionTypes(*sql.Context) []sql.ColumnExpressionType { return nil }

// rowFilterRanges carries the row filter through go-mysql-server's lookup,
// as its one range.
type rowFilterRanges struct{ f *pushedFilter }

type rowFilterRange struct{ f *pushedFilter }

var (
	_ sql.RangeCollection = rowFilterRanges{}
	_ sql.Range           = rowFilterRange{}
)

func (r rowFilterRanges) String() string                  { return rowFilterRange(r).String() }
func (r rowFilterRanges) DebugString(*sql.Context) string { return r.String() }
func (r rowFilterRanges) Len() int                        { return 1 }
func (r rowFilterRanges) ToRanges() []sql.Range           { return []sql.Range{rowFilterRange(r)} }
func (r rowFilterRanges) Equals(_ context.Context, other sql.RangeCollection) (bool, error) {
	o, ok := other.(rowFilterRanges)
	return ok && o.String() == r.String(), nil
}

func (r rowFilterRange) String() string                  { return "iceberg(" + r.f.text + ")" }
func (r rowFilterRange) DebugString(*sql.Context) string { return r.String() }
func (r rowFilterRange) Equals(_ context.Context, other sql.Range) (bool, error) {
	o, ok := other.(rowFilterRange)
	return ok && o.String() == r.String(), nil
}

// Row filters reach a scan in one of two ways (see lookup.go):
//
//   - In a simple single-table SELECT, go-mysql-server runs a short rule set
//     that offers the WHERE conjuncts to LookupForExpressions, which takes them.
//   - Every other statement goes through the full analyzer, whose join
//     planner costs an accepted lookup as a one-row index scan
//     (memo.MemoizeStaticIndexAccess uses RowCnt 1), which made any filtered
//     table the inner side of a nested-loop join: TPC-H Q3 at SF 0.01 ran for
//     minutes. There markFullAnalysis makes LookupForExpressions decline, and
//     pushRowFilters pushes the filters after the joins are planned with the
//     tables' real row counts.

// markFullAnalysis runs first in the full analyzer only.
func markFullAnalysis(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	sessionOf(ctx).markFullAnalysis(ctx)
	return n, transform.SameTree, nil
}

// pushRowFilters gives every Iceberg scan with a Filter directly above it
// (possibly through a table alias) the conjuncts Iceberg can evaluate, as
// its row filter.
func pushRowFilters(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		child, err := withRowFilter(ctx, f.Child, f.Expression)
		if err != nil || child == nil {
			return n, transform.SameTree, err
		}
		nf, err := f.WithChildren(ctx, child)
		return nf, transform.NewTree, err
	})
}

// withRowFilter returns scan (a ResolvedTable of an Iceberg table, or an
// alias of one) reading with the translatable conjuncts of cond, or nil when
// scan is something else or nothing translates.
func withRowFilter(ctx *sql.Context, scan sql.Node, cond sql.Expression) (sql.Node, error) {
	if alias, ok := scan.(*plan.TableAlias); ok {
		child, err := withRowFilter(ctx, alias.Child, cond)
		if err != nil || child == nil {
			return nil, err
		}
		return alias.WithChildren(ctx, child)
	}
	rt, ok := scan.(*plan.ResolvedTable)
	if !ok {
		return nil, nil
	}
	t, ok := rt.Table.(*Table)
	if !ok || t.filter != nil {
		return nil, nil
	}
	pushed := t.translate(ctx, expression.SplitConjunction(ctx, cond))
	if pushed == nil {
		return nil, nil
	}
	nt := *t
	nt.filter = pushed
	return rt.WithTable(ctx, &nt)
}

// rowFilter is the Iceberg filter of the scan, nil for none.
func (t *Table) RowFilter() iceberg.BooleanExpression {
	if t.filter == nil {
		return nil
	}
	return t.filter.expr
}

// planned is the planning shared by every scan of this table in the
// statement that has the same row filter.
func (t *Table) Planned() *pushdown.Planned { return t.plan.For(t.RowFilter()) }

// scanOptions adds the row filter and planning report to opts.
func (t *Table) ScanOptions(p *pushdown.Planned, opts ...table.ScanOption) []table.ScanOption {
	opts = append(opts, table.WithReporter(p))
	if f := t.RowFilter(); f != nil {
		opts = append(opts, table.WithRowFilter(f))
	}
	return opts
}

// countingTable is the pinned table reading through an IO that records, for
// EXPLAIN ANALYZE, what its scans read. The transaction's staged files are
// read through the table's own IO.
func (t *Table) countingTable(ctx context.Context, p *pushdown.Planned) *table.Table {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return t.tbl
	}
	counting := p.IO(fs)
	return table.New(t.tbl.Identifier(), t.tbl.Metadata(), t.tbl.MetadataLocation(),
		func(context.Context) (icebergio.IO, error) { return counting, nil }, nil)
}

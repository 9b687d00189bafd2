package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"

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

// vectorBuilder is the exec builder's priority builder: it builds Filters
// over Iceberg scans on the vector path, folds constant date literals into
// the Filters it leaves to the row path, and passes everything else on.
type vectorBuilder struct {
	next sql.NodeExecBuilder // the EXPLAIN builder
	base sql.NodeExecBuilder // go-mysql-server's builder
}

func (b vectorBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	switch n := n.(type) {
	case *plan.Filter:
		return b.buildFilter(ctx, n, row)
	case *plan.DescribeQuery:
		noteVectorFilters(ctx, n.Query())
	}
	return b.next.Build(ctx, n, row)
}

func (b vectorBuilder) buildFilter(ctx *sql.Context, f *plan.Filter, row sql.Row) (sql.RowIter, error) {
	// OFF leaves go-mysql-server's row path as it is, folding included:
	// the differential tests compare with it.
	if !vectorizeOn(ctx) {
		return nil, nil
	}
	if vf, _ := newVectorFilter(ctx, f); vf != nil {
		return vf.iter(ctx)
	}
	cond, changed, err := foldDateLiterals(ctx, f.Expression)
	if err != nil || !changed {
		return nil, err
	}
	child, err := b.base.Build(ctx, f.Child, row)
	if err != nil {
		return nil, err
	}
	return plan.NewFilterIter(cond, child), nil
}

// noteVectorFilters tells EXPLAIN, per scan, whether the Filter above it
// runs on the vector path.
func noteVectorFilters(ctx *sql.Context, n sql.Node) {
	walkPlan(ctx, n, func(n sql.Node) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return
		}
		t, _ := filteredScan(f.Child)
		if t == nil {
			return
		}
		switch _, why := newVectorFilter(ctx, f); {
		case !vectorizeOn(ctx):
			t.scan.filterNote = "no, icesql_vectorize is OFF"
		case why == "":
			t.scan.filterNote = "yes: the WHERE clause runs on Arrow batches; rows are built for the rows it keeps"
		default:
			t.scan.filterNote = "no, the row path evaluates the WHERE clause: " + why
		}
	})
}

// filteredScan is the Iceberg table a Filter's child scans, when the
// child is a scan whose rows are the table's projected columns.
func filteredScan(child sql.Node) (*Table, string) {
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
	t, ok := unwrapTable(st)
	if !ok {
		return nil, ""
	}
	return t, ""
}

// vectorFilter is a Filter over an Iceberg scan, computed on batches.
type vectorFilter struct {
	t     *Table
	cols  []string // Iceberg names of the row's columns, in row order
	read  []string // what is read: cols, or the first column for none
	pred  vector.Expr
	cond  sql.Expression // the row path's condition, for inexact batches
	width int
}

// newVectorFilter translates f, or says why it cannot.
func newVectorFilter(ctx *sql.Context, f *plan.Filter) (*vectorFilter, string) {
	t, why := filteredScan(f.Child)
	if t == nil {
		if why == "" {
			why = "not over an Iceberg scan"
		}
		return nil, why
	}
	switch {
	case t.snapshotID != nil:
		return nil, "time travel reads are not vectorized"
	case t.identity != nil:
		return nil, "rows of a row-level change"
	}
	cols := t.resolveColumns(t.projection)
	if t.projection == nil {
		cols = t.names
	}
	tr := &vecTranslator{ctx: ctx, t: t, cols: map[string]bool{}}
	// Column references index the scan's rows: each must be the projected
	// column of its name, or the row path and this one would disagree.
	var bad string
	walkGetFields(f.Expression, func(gf *expression.GetField) {
		j := t.schema.IndexOfColName(gf.Name())
		if bad == "" && (gf.Index() < 0 || gf.Index() >= len(cols) || j < 0 || j >= len(t.names) || cols[gf.Index()] != t.names[j] || !t.owns(gf)) {
			bad = "column " + gf.String() + " is not the scan's"
		}
	})
	if bad != "" {
		return nil, bad
	}
	pred, err := tr.predicate(f.Expression)
	if err != nil {
		return nil, err.Error()
	}
	if err := vector.Check(pred, true); err != nil {
		return nil, err.Error()
	}
	read := cols
	if len(read) == 0 {
		read = t.names[:1]
	}
	return &vectorFilter{t: t, cols: cols, read: read, pred: pred, cond: f.Expression, width: len(cols)}, ""
}

func walkGetFields(e sql.Expression, f func(*expression.GetField)) {
	if gf, ok := e.(*expression.GetField); ok {
		f(gf)
	}
	for _, c := range e.Children() {
		walkGetFields(c, f)
	}
}

func (v *vectorFilter) iter(ctx *sql.Context) (sql.RowIter, error) {
	sel, err := vector.NewSelector(v.pred)
	if err != nil {
		return nil, fmt.Errorf("vectorized filter over %s: %w", v.t.String(), err)
	}
	src, _, err := v.t.openBatches(ctx, v.cols, false)
	if err != nil {
		return nil, err
	}
	return &vectorFilterIter{v: v, src: src, sel: sel, rows: rowBlocks{width: v.width}}, nil
}

// vectorFilterIter gives the rows of each batch the selector keeps.
type vectorFilterIter struct {
	v    *vectorFilter
	src  batchSource
	sel  *vector.Selector
	rec  arrow.RecordBatch
	cols []arrow.Array // rec's columns in row order
	keep []int32       // selected rows of rec not yet given
	rows rowBlocks
	// pending holds a batch's rows the row path filtered (an inexact
	// batch), given before the next batch is read.
	pending []sql.Row
}

func (it *vectorFilterIter) Next(ctx *sql.Context) (sql.Row, error) {
	for len(it.keep) == 0 && len(it.pending) == 0 {
		if err := it.nextBatch(ctx); err != nil {
			return nil, err
		}
	}
	if len(it.pending) > 0 {
		r := it.pending[0]
		it.pending = it.pending[1:]
		return r, nil
	}
	r := int(it.keep[0])
	it.keep = it.keep[1:]
	return it.row(r)
}

func (it *vectorFilterIter) row(r int) (sql.Row, error) {
	row := it.rows.next()
	for i, col := range it.cols {
		val, err := rowValue(col, r)
		if err != nil {
			return nil, err
		}
		row[i] = val
	}
	return row, nil
}

func (it *vectorFilterIter) nextBatch(ctx *sql.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rec, err := it.src.Next()
	if err != nil {
		return err // io.EOF ends the rows
	}
	it.rec = rec
	it.cols = it.cols[:0]
	for _, name := range it.v.cols {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return fmt.Errorf("scan of %s returned no column %s", it.v.t.String(), name)
		}
		it.cols = append(it.cols, rec.Column(idx[0]))
	}
	keep, err := it.sel.Select(rec)
	if errors.Is(err, vector.ErrInexact) {
		return it.filterRows(ctx)
	}
	if err != nil {
		return fmt.Errorf("vectorized filter over %s: %w", it.v.t.String(), err)
	}
	it.keep = keep
	return nil
}

// filterRows filters the current batch on the row path: one of its values
// is outside what the vector path computes exactly.
func (it *vectorFilterIter) filterRows(ctx *sql.Context) error {
	it.keep, it.pending = nil, it.pending[:0]
	for r := range int(it.rec.NumRows()) {
		row, err := it.row(r)
		if err != nil {
			return err
		}
		ok, err := sql.EvaluateCondition(ctx, it.v.cond, row)
		if err != nil {
			return err
		}
		if sql.IsTrue(ok) {
			it.pending = append(it.pending, row)
		}
	}
	return nil
}

func (it *vectorFilterIter) Close(*sql.Context) error {
	it.src.Close()
	return nil
}

var _ sql.RowIter = (*vectorFilterIter)(nil)

// describeFilter is the EXPLAIN line of a scan's Filter, if one was noted.
func (s *scanID) describeFilter() string {
	if s.filterNote == "" {
		return ""
	}
	return "vectorized filter: " + strings.TrimSpace(s.filterNote)
}

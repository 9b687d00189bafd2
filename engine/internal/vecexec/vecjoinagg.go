package vecexec

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/icesql/icesql/pushdown/vector"
)

// A GROUP BY directly over a join that the vector path probes (vecjoin.go:
// two Iceberg scans, each with its WHERE clause, on a key vecjoinkey.go
// codes) runs wholly on Arrow batches, as TPC-H Q3 needs: the build side's
// kept rows are gathered into one array per column and indexed by key;
// each probe batch is filtered and probed, and the columns the aggregation
// reads are gathered for the pairs that join, from both sides, into a
// batch the vectorized hash aggregation (pushdown/vector) takes as it
// takes a scan's. In a LEFT JOIN a probe row that joins nothing is
// gathered with NULLs for the build side's columns. Each core aggregates its own batches; the partial
// groups merge at the end. No go-mysql-server row exists until the
// groups: the row path built one per joined row and grouped them on one
// goroutine.
//
// It happens when the plan is built into iterators, where the join's
// column indexes are final (newVectorJoin reads them). Anything it does
// not translate, and any batch whose values leave the exact range, runs on
// the row path (the GroupBy is built as go-mysql-server builds it).

// vectorJoinAgg is a GroupBy over a tree of vectorized joins (vecrel.go).
type vectorJoinAgg struct {
	rel  *vecRel
	plan *vector.Plan
	outs []vecOutput
	need map[string]bool // the batch columns the aggregation reads
}

// newVectorJoinAgg translates gb, or says why it cannot ("" when gb is not
// over a join at all).
func newVectorJoinAgg(ctx *sql.Context, gb *plan.GroupBy, row sql.Row) (*vectorJoinAgg, string) {
	if joinUnder(gb) == nil {
		return nil, ""
	}
	if len(row) != 0 {
		return nil, "the join: a join inside a subquery"
	}
	child, inline := derivedColumns(gb.Child)
	var ids int
	rel, why := newRel(ctx, child, &ids, 0)
	if rel == nil {
		return nil, "the join: " + why
	}
	ja := &vectorJoinAgg{rel: rel, plan: &vector.Plan{}, need: map[string]bool{}}
	tr := &VecTranslator{Ctx: ctx, columnOf: func(gf *expression.GetField) (vector.Column, iceberg.Type, error) {
		c, it, err := rel.column(gf)
		if err == nil {
			ja.need[c.Name] = true
		}
		return c, it, err
	}}
	keyFields := map[string]int{}
	var keyValues []func(vector.Value) any
	for _, k := range gb.GroupByExprs {
		gf, ok := k.(*expression.GetField)
		if !ok {
			return nil, "grouping by " + k.String()
		}
		key, value, err := tr.groupKey(ctx, inline(gf))
		if err != nil {
			return nil, err.Error()
		}
		keyFields[strings.ToLower(gf.String())] = len(ja.plan.Keys)
		ja.plan.Keys = append(ja.plan.Keys, key)
		keyValues = append(keyValues, value)
	}
	for _, dep := range gb.SelectDeps {
		e, _ := unalias(dep)
		if gf, ok := e.(*expression.GetField); ok {
			k, isKey := keyFields[strings.ToLower(gf.String())]
			if !isKey {
				return nil, "selecting " + gf.String() + ", which is not grouped by"
			}
			ja.outs = append(ja.outs, vecOutput{key: k, agg: -1, value: keyValues[k]})
			continue
		}
		e, err := inlineAll(ctx, e, inline)
		if err != nil {
			return nil, err.Error()
		}
		out, agg, err := tr.aggregate(e)
		if err != nil {
			return nil, err.Error()
		}
		out.key, out.agg = -1, len(ja.plan.Aggs)
		ja.plan.Aggs = append(ja.plan.Aggs, agg)
		ja.outs = append(ja.outs, out)
	}
	if err := ja.plan.Check(); err != nil {
		return nil, err.Error()
	}
	return ja, ""
}

// derivedColumns is the node whose rows gb's columns are computed from:
// gb's child, or, when that is a derived table (FROM (SELECT ...) AS x,
// as TPC-H Q7–Q9 group), the derived table's Project's child, with
// inline giving the expression a reference to a derived column stands
// for.
func derivedColumns(child sql.Node) (sql.Node, func(*expression.GetField) sql.Expression) {
	same := func(gf *expression.GetField) sql.Expression { return gf }
	sa, ok := child.(*plan.SubqueryAlias)
	if !ok {
		return child, same
	}
	p, ok := sa.Child.(*plan.Project)
	if !ok {
		return child, same
	}
	return p.Child, func(gf *expression.GetField) sql.Expression {
		i := gf.Index()
		if i < 0 || i >= len(p.Projections) {
			return gf
		}
		e, name := unalias(p.Projections[i])
		if !strings.EqualFold(name, gf.Name()) && !strings.EqualFold(p.Projections[i].String(), gf.Name()) {
			return gf // not the column it names: the translator declines it
		}
		return e
	}
}

// inlineAll is e with each column reference replaced by inline's.
func inlineAll(ctx *sql.Context, e sql.Expression, inline func(*expression.GetField) sql.Expression) (sql.Expression, error) {
	out, _, err := transform.Expr(ctx, e, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if gf, ok := e.(*expression.GetField); ok {
			return inline(gf), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
	return out, err
}

// groupKey translates a grouping key: a column, or the year of a date
// (TPC-H Q7–Q9's EXTRACT(YEAR FROM ...)), and how its value looks in the
// row path's rows.
func (tr *VecTranslator) groupKey(ctx *sql.Context, e sql.Expression) (vector.Expr, func(vector.Value) any, error) {
	switch e := e.(type) {
	case *expression.GetField:
		c, it, err := tr.column(e)
		if err != nil {
			return nil, nil, err
		}
		return c, columnValue(c.T, it), nil
	case *function.Extract: // an int, as go-mysql-server's Extract gives it
		k, err := tr.value(e)
		return k, func(v vector.Value) any { return int(v.I) }, err
	case *function.Year:
		k, err := tr.value(e)
		return k, func(v vector.Value) any { return int32(v.I) }, err
	}
	return nil, nil, decline("grouping by %s", e)
}

// joinUnder is the join gb groups, through Filters, Projects and a
// derived table.
func joinUnder(gb *plan.GroupBy) *plan.JoinNode {
	child := gb.Child
	for {
		switch n := child.(type) {
		case *plan.SubqueryAlias:
			child = n.Child
		case *plan.Filter:
			child = n.Child
		case *plan.Project:
			child = n.Child
		case *plan.JoinNode:
			return n
		default:
			return nil
		}
	}
}

// buildJoinAgg is the exec builder's hook: gb's rows computed on the
// vector path, or nil to build gb on the row path.
func buildJoinAgg(ctx *sql.Context, gb *plan.GroupBy, row sql.Row) (sql.RowIter, error) {
	ja, _ := newVectorJoinAgg(ctx, gb, row)
	if ja == nil {
		return nil, nil
	}
	groups, err := ja.run(ctx)
	if rowPathAnswers(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &groupIter{outs: ja.outs, groups: groups}, nil
}

// rowPathAnswers says err leaves the query to the row path: a value
// outside the exact range, or a batch column of an unexpected form.
func rowPathAnswers(err error) bool {
	return errors.Is(err, vector.ErrInexact) || errors.Is(err, errBatchShape)
}

// groupRow is group g as the GroupBy's row.
func groupRow(outs []vecOutput, g vector.Group) (sql.Row, error) {
	r := make(sql.Row, len(outs))
	for j, o := range outs {
		if o.key >= 0 {
			if k := g.Keys[o.key]; !k.Null {
				r[j] = o.value(k)
			}
			continue
		}
		val, err := o.aggregateValue(g.Aggs[o.agg])
		if err != nil {
			return nil, err
		}
		r[j] = val
	}
	return r, nil
}

// groupIter gives the groups' rows one at a time, each built when asked
// and its group then dropped: a consumer that keeps few of them (a HAVING
// over a million groups) never has them all in memory as rows.
type groupIter struct {
	outs   []vecOutput
	groups []vector.Group
}

func (it *groupIter) Next(*sql.Context) (sql.Row, error) {
	if len(it.groups) == 0 {
		return nil, io.EOF
	}
	g := it.groups[0]
	it.groups[0] = vector.Group{}
	it.groups = it.groups[1:]
	return groupRow(it.outs, g)
}

func (it *groupIter) Close(*sql.Context) error {
	it.groups = nil
	return nil
}

// buildChunk is one build batch's kept rows.
type buildChunk struct {
	keys []int64
	cols []arrow.Array
}

func (ja *vectorJoinAgg) run(ctx *sql.Context) ([]vector.Group, error) {
	workers := runtime.GOMAXPROCS(0)
	parts := make([]*vector.Partial, workers)
	reserve := ja.rel.probeScan().t.StateReserve() // memlimit/vecreserve.go
	var err error
	for i := range parts {
		if parts[i], err = vector.NewPartialWithin(ja.plan, reserve); err != nil {
			return nil, err
		}
	}
	mem := memory.DefaultAllocator
	err = ja.rel.run(ctx, workers, ja.need, func(w int, rec arrow.RecordBatch, keep []int32) error {
		if keep == nil {
			return parts[w].Add(rec)
		}
		cols := make([]arrow.Array, 0, rec.NumCols())
		defer func() { releaseAll(cols) }()
		for _, c := range rec.Columns() {
			g, err := gather(mem, c, keep)
			if err != nil {
				return err
			}
			cols = append(cols, g)
		}
		kept := array.NewRecordBatch(rec.Schema(), cols, int64(len(keep)))
		defer kept.Release()
		return parts[w].Add(kept)
	})
	if err != nil {
		return nil, fmt.Errorf("vectorized join aggregate over %s: %w", ja.rel.probeScan().t.String(), err)
	}
	for _, p := range parts[1:] {
		if err := parts[0].Merge(p); err != nil {
			return nil, err
		}
	}
	return parts[0].Groups()
}

// selectKept is the rows of rec that sel keeps (every row when sel is nil).
func selectKept(sel *vector.Selector, rec arrow.RecordBatch, all *[]int32) ([]int32, error) {
	if sel != nil {
		return sel.Select(rec)
	}
	n := int(rec.NumRows())
	if cap(*all) < n {
		*all = make([]int32, n)
		for i := range *all {
			(*all)[i] = int32(i)
		}
	}
	return (*all)[:n], nil
}

func batchColumn(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("scan returned no column %s", name)
	}
	return rec.Column(idx[0]), nil
}

// keyTable indexes the chunks' keys, in chunk order: the rows of the
// concatenated build columns.
func keyTable(chunks []buildChunk) *joinTable {
	n := 0
	for _, c := range chunks {
		n += len(c.keys)
	}
	t := &joinTable{keys: make([]int64, 0, n)}
	for _, c := range chunks {
		for _, k := range c.keys {
			if len(t.keys) == 0 || k < t.lo {
				t.lo = k
			}
			if len(t.keys) == 0 || k > t.hi {
				t.hi = k
			}
			t.keys = append(t.keys, k)
		}
	}
	t.index()
	return t
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}

// eachBatch reads t's columns on the vector path (native decoding) and
// calls fn for every batch on workers goroutines, fn's w being the
// goroutine's number. A source that splits is read by each goroutine
// itself (pushdown's native reader decodes on the goroutine that asks).
func eachBatch(ctx *sql.Context, t ScanTable, cols []string, workers int, fn func(w int, rec arrow.RecordBatch) error) error {
	ctx, stop := t.WatchBudget(ctx) // memlimit/memlimit.go
	defer stop()
	src, _, err := t.OpenBatches(t.WithNativeDecode(ctx), cols, false)
	if err != nil {
		return err
	}
	defer src.Close()
	return vector.EachBatch(ctx, src, workers, fn)
}

// noteJoinAggregates tells EXPLAIN, on the scans of each join under a
// GROUP BY, whether the GROUP BY runs on the vector path with the join or
// on the row path over the joined rows, and why.
func noteJoinAggregates(ctx *sql.Context, n sql.Node) {
	if !VectorizeOn(ctx) {
		return
	}
	WalkPlan(ctx, n, func(n sql.Node) {
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return
		}
		ja, why := newVectorJoinAgg(ctx, gb, nil)
		if ja != nil {
			ja.note()
			return
		}
		if joinUnder(gb) == nil || why == "" {
			return
		}
		var ids int
		child, _ := derivedColumns(gb.Child)
		if rel, _ := newRel(ctx, child, &ids, 0); rel != nil {
			addNote(rel.probeScan().t.ScanRef(), "the GROUP BY above runs on the row path: "+why)
		} else if ts := ScanTables(ctx, gb.Child); len(ts) > 0 {
			addNote(ts[0].ScanRef(), "the GROUP BY above and its joins run on the row path: "+why)
		}
	})
	WalkPlan(ctx, n, func(n sql.Node) {
		if tn, ok := n.(*plan.TopN); ok {
			if top, _ := newJoinAggTopN(ctx, tn, nil); top != nil {
				top.src.(*vectorJoinAgg).rel.probeScan().t.ScanRef().filterNote += "; " + top.note()
			}
		}
	})
}

// addNote adds note to s's EXPLAIN line.
func addNote(s *ScanID, note string) {
	if s.filterNote != "" {
		note = s.filterNote + "; " + note
	}
	s.filterNote = note
}

// note tells EXPLAIN, on each scan of ja's joins, that it runs on the
// vector path.
func (ja *vectorJoinAgg) note() {
	joins := "the hash join's probe"
	if n := ja.rel.joins(); n > 1 {
		joins = fmt.Sprintf("the probes of %d hash joins", n)
	}
	probe := ja.rel.probeScan()
	ja.rel.leaves(true, func(vf *vectorFilter, streams bool) {
		switch {
		case vf == probe:
			vf.t.ScanRef().filterNote = "yes: the WHERE clause, " + joins + " and the GROUP BY above it run on Arrow batches; no row is built before the groups"
		case streams:
			vf.t.ScanRef().filterNote = "yes: the WHERE clause runs on Arrow batches; its batches probe a hash join's table"
		default:
			vf.t.ScanRef().filterNote = "yes: the WHERE clause runs on Arrow batches; the columns read above fill a hash join's table"
		}
	})
}

// concatColumn is one column of the build side's batches as one array. A
// scan's batches can hold a column in two Arrow types: the native reader
// gives strings as dictionaries and decimals of up to 18 digits as
// unscaled int64s, iceberg-go's reader (for the files the native reader
// leaves to it: those lacking a column added later, or with deletes) plain
// strings and decimal128s. arrow-go concatenates only arrays of one type,
// so mixed parts are first brought to iceberg-go's: dictionaries unpacked,
// unscaled decimals widened to the decimal128 type of the other parts.
func concatColumn(ctx *sql.Context, parts []arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	mixed := slices.ContainsFunc(parts, func(a arrow.Array) bool {
		return !arrow.TypeEqual(a.DataType(), parts[0].DataType())
	})
	if !mixed {
		return array.Concatenate(parts, mem)
	}
	var dec *arrow.Decimal128Type
	for _, a := range parts {
		if t, ok := a.DataType().(*arrow.Decimal128Type); ok {
			dec = t
		}
	}
	plain := make([]arrow.Array, 0, len(parts))
	defer func() { releaseAll(plain) }()
	for _, a := range parts {
		switch a := a.(type) {
		case *array.Dictionary:
			v, err := compute.TakeArray(compute.WithAllocator(ctx, mem), a.Dictionary(), a.Indices())
			if err != nil {
				return nil, err
			}
			plain = append(plain, v)
		case *array.Int64:
			if dec == nil {
				a.Retain()
				plain = append(plain, a)
				continue
			}
			plain = append(plain, unscaledAsDecimal(a, dec, mem))
		default:
			a.Retain()
			plain = append(plain, a)
		}
	}
	return array.Concatenate(plain, mem)
}

// unscaledAsDecimal is a, unscaled decimal values, as decimal128s of type t.
func unscaledAsDecimal(a *array.Int64, t *arrow.Decimal128Type, mem memory.Allocator) arrow.Array {
	b := array.NewDecimal128Builder(mem, t)
	defer b.Release()
	b.Reserve(a.Len())
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(decimal128.FromI64(a.Value(i)))
	}
	return b.NewArray()
}

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
	"github.com/dolthub/go-mysql-server/sql/plan"

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

// vectorJoinAgg is a GroupBy over a vectorized join.
type vectorJoinAgg struct {
	vj    *vectorJoin
	plan  *vector.Plan
	outs  []vecOutput
	probe []string // Iceberg names of the probe side's (left) columns the aggregation reads
	build []string // and of the build side's (right)
}

// Column name prefixes in the joined batches: a self-join reads one name
// on both sides.
const (
	probePrefix = "p."
	buildPrefix = "b."
)

// newVectorJoinAgg translates gb, or says why it cannot ("" when gb is not
// over a join at all).
func newVectorJoinAgg(ctx *sql.Context, gb *plan.GroupBy, row sql.Row) (*vectorJoinAgg, string) {
	j, where := joinUnder(gb)
	if j == nil {
		return nil, ""
	}
	vj, why := NewVectorJoin(ctx, j, row)
	if vj == nil {
		return nil, "the join: " + why
	}
	if vj.Outer && vj.cond != nil {
		// Only the key decides which pairs join: the rows a condition
		// beyond it rejects would be padded, not dropped.
		return nil, "an outer join whose condition is more than its key"
	}
	ja := &vectorJoinAgg{vj: vj, plan: &vector.Plan{}}
	tr := &VecTranslator{Ctx: ctx, columnOf: ja.column}
	// The rest of the join condition and a WHERE clause over both tables
	// filter the joined pairs: for an inner join they are one.
	for _, c := range []sql.Expression{vj.cond, where} {
		if c == nil {
			continue
		}
		f, err := tr.Predicate(c)
		if err != nil {
			return nil, err.Error()
		}
		if ja.plan.Filter != nil {
			f = vector.And{L: ja.plan.Filter, R: f}
		}
		ja.plan.Filter = f
	}
	keys, keyFields, keyTypes, why := tr.groupKeys(gb) // vectorize.go
	if why != "" {
		return nil, why
	}
	ja.plan.Keys = keys
	for _, dep := range gb.SelectDeps {
		e, _ := unalias(dep)
		if gf, ok := e.(*expression.GetField); ok {
			k, isKey := keyFields[strings.ToLower(gf.String())]
			if !isKey {
				return nil, "selecting " + gf.String() + ", which is not grouped by"
			}
			ja.outs = append(ja.outs, vecOutput{key: k, agg: -1, value: columnValue(ja.plan.Keys[k].Type(), keyTypes[k])})
			continue
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

// joinUnder is the join gb groups, directly or through a Filter whose
// condition it returns.
func joinUnder(gb *plan.GroupBy) (*plan.JoinNode, sql.Expression) {
	child := gb.Child
	var where sql.Expression
	if f, ok := child.(*plan.Filter); ok {
		child, where = f.Child, f.Expression
	}
	j, _ := child.(*plan.JoinNode)
	return j, where
}

// column resolves a column of either side to its name in the joined
// batches.
func (ja *vectorJoinAgg) column(gf *expression.GetField) (vector.Column, iceberg.Type, error) {
	for _, side := range []struct {
		v      *vectorFilter
		prefix string
		names  *[]string
	}{{ja.vj.left, probePrefix, &ja.probe}, {ja.vj.right, buildPrefix, &ja.build}} {
		if !side.v.t.Owns(gf) {
			continue
		}
		st := &VecTranslator{Ctx: nil, T: side.v.t, Cols: map[string]bool{}}
		c, it, err := st.column(gf)
		if err != nil {
			return vector.Column{}, nil, err
		}
		if !slices.Contains(side.v.read, c.Name) {
			return vector.Column{}, nil, decline("column %s is not read by its scan", gf.String())
		}
		if !slices.Contains(*side.names, c.Name) {
			*side.names = append(*side.names, c.Name)
		}
		c.Name = side.prefix + c.Name
		return c, it, nil
	}
	return vector.Column{}, nil, decline("column %s is of neither side of the join", gf.String())
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

// joinBuild is the build side: its kept rows with a non-NULL key, the
// columns the aggregation reads gathered into one array each, and the
// keys indexed.
type joinBuild struct {
	table *joinTable
	cols  []arrow.Array // in the order of vectorJoinAgg.build
}

func (b *joinBuild) release() {
	for _, c := range b.cols {
		c.Release()
	}
}

// buildChunk is one build batch's kept rows.
type buildChunk struct {
	keys []int64
	cols []arrow.Array
}

func (ja *vectorJoinAgg) run(ctx *sql.Context) ([]vector.Group, error) {
	workers := runtime.GOMAXPROCS(0)
	b, err := ja.buildSide(ctx, workers)
	if err != nil {
		return nil, err
	}
	defer b.release()
	parts := make([]*vector.Partial, workers)
	reserve := ja.vj.left.t.StateReserve() // memlimit/vecreserve.go
	for i := range parts {
		if parts[i], err = vector.NewPartialWithin(ja.plan, reserve); err != nil {
			return nil, err
		}
	}
	if len(b.table.keys) > 0 || ja.vj.Outer {
		probers := make([]*joinAggProber, workers)
		for i := range probers {
			if probers[i], err = ja.newProber(b, parts[i]); err != nil {
				return nil, err
			}
		}
		left := ja.vj.left
		err = eachBatch(ctx, left.t, left.read, workers, func(w int, rec arrow.RecordBatch) error {
			return probers[w].add(rec)
		})
		if err != nil {
			return nil, fmt.Errorf("vectorized join aggregate over %s: %w", left.t.String(), err)
		}
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

// buildSide reads, filters and indexes the build side on every core.
func (ja *vectorJoinAgg) buildSide(ctx *sql.Context, workers int) (*joinBuild, error) {
	right := ja.vj.right
	keyName := right.cols[ja.vj.rkey]
	chunks := make([][]buildChunk, workers)
	sels := make([]*vector.Selector, workers)
	alls := make([][]int32, workers)
	for i := range sels {
		if right.pred != nil {
			s, err := vector.NewSelector(right.pred)
			if err != nil {
				return nil, err
			}
			sels[i] = s
		}
	}
	mem := memory.DefaultAllocator
	err := eachBatch(ctx, right.t, right.read, workers, func(w int, rec arrow.RecordBatch) error {
		keep, err := selectKept(sels[w], rec, &alls[w])
		if err != nil {
			return err
		}
		keyArr, err := batchColumn(rec, keyName)
		if err != nil {
			return err
		}
		rows, keys, err := ja.vj.keys.buildKeys(keyArr, keep)
		if err != nil {
			return fmt.Errorf("key column %s: %w", keyName, err)
		}
		if len(rows) == 0 {
			return nil
		}
		c := buildChunk{keys: keys}
		for _, name := range ja.build {
			arr, err := batchColumn(rec, name)
			if err == nil {
				arr, err = gather(mem, arr, rows)
			}
			if err != nil {
				releaseAll(c.cols)
				return err
			}
			c.cols = append(c.cols, arr)
		}
		chunks[w] = append(chunks[w], c)
		return nil
	})
	all := slices.Concat(chunks...)
	defer func() {
		for _, c := range all {
			releaseAll(c.cols)
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("vectorized join aggregate over %s: %w", right.t.String(), err)
	}
	b := &joinBuild{table: keyTable(all)}
	if len(all) == 0 {
		return b, nil
	}
	for j := range ja.build {
		parts := make([]arrow.Array, len(all))
		for i, c := range all {
			parts[i] = c.cols[j]
		}
		col, err := concatColumn(ctx, parts, mem)
		if err != nil {
			b.release()
			return nil, fmt.Errorf("vectorized join aggregate over %s: %w", right.t.String(), err)
		}
		if d, ok := col.(*array.Dictionary); ok {
			// arrow-go builds a dictionary column's dictionary array on
			// first use; the probe workers share the column, so build it
			// here, before they start.
			d.Dictionary()
		}
		b.cols = append(b.cols, col)
	}
	return b, nil
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

// joinAggProber joins one worker's probe batches and aggregates the pairs.
type joinAggProber struct {
	ja     *vectorJoinAgg
	b      *joinBuild
	part   *vector.Partial
	sel    *vector.Selector
	all    []int32
	pi, bi []int32 // the pairs of a batch: probe row, build row
	fields []arrow.Field
	cols   []arrow.Array
}

func (ja *vectorJoinAgg) newProber(b *joinBuild, part *vector.Partial) (*joinAggProber, error) {
	p := &joinAggProber{ja: ja, b: b, part: part}
	if ja.vj.left.pred != nil {
		s, err := vector.NewSelector(ja.vj.left.pred)
		if err != nil {
			return nil, err
		}
		p.sel = s
	}
	return p, nil
}

func (p *joinAggProber) add(rec arrow.RecordBatch) error {
	keep, err := selectKept(p.sel, rec, &p.all)
	if err != nil {
		return err
	}
	left := p.ja.vj.left
	keyArr, err := batchColumn(rec, left.cols[p.ja.vj.lkey])
	if err != nil {
		return err
	}
	key, err := p.ja.vj.keys.reader(keyArr, false)
	if err != nil {
		return err
	}
	t := p.b.table
	pi, bi := p.pi[:0], p.bi[:0]
	outer := p.ja.vj.Outer
	for _, r := range keep {
		k, ok := key(int(r))
		if !ok || t.first(k) < 0 {
			if outer {
				// A left row that joins nothing, padded with NULLs.
				pi = append(pi, r)
				bi = append(bi, -1)
			}
			continue
		}
		for i := t.first(k); i >= 0; i = t.next[i] {
			pi = append(pi, r)
			bi = append(bi, i)
		}
	}
	p.pi, p.bi = pi, bi
	if len(pi) == 0 {
		return nil
	}
	return p.aggregate(rec, pi, bi)
}

// aggregate gathers the pairs' columns into one batch and aggregates it.
func (p *joinAggProber) aggregate(rec arrow.RecordBatch, pi, bi []int32) error {
	mem := memory.DefaultAllocator
	p.fields, p.cols = p.fields[:0], p.cols[:0]
	defer func() { releaseAll(p.cols) }()
	for _, name := range p.ja.probe {
		arr, err := batchColumn(rec, name)
		if err == nil {
			arr, err = gather(mem, arr, pi)
		}
		if err != nil {
			return err
		}
		p.cols = append(p.cols, arr)
		p.fields = append(p.fields, arrow.Field{Name: probePrefix + name, Type: arr.DataType(), Nullable: true})
	}
	if len(p.b.cols) < len(p.ja.build) {
		// An outer join's empty build side leaves no column to pad from.
		return fmt.Errorf("%w: no build rows to pad", errBatchShape)
	}
	for j, name := range p.ja.build {
		arr, err := gather(mem, p.b.cols[j], bi)
		if err != nil {
			return err
		}
		p.cols = append(p.cols, arr)
		p.fields = append(p.fields, arrow.Field{Name: buildPrefix + name, Type: arr.DataType(), Nullable: true})
	}
	joined := array.NewRecordBatch(arrow.NewSchema(p.fields, nil), p.cols, int64(len(pi)))
	defer joined.Release()
	return p.part.Add(joined)
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
			ja.vj.left.t.ScanRef().filterNote = "yes: the WHERE clause, the hash join's probe and the GROUP BY above it run on Arrow batches; no row is built before the groups"
			ja.vj.right.t.ScanRef().filterNote = "yes: the WHERE clause runs on Arrow batches; the columns the GROUP BY reads fill the hash join's table"
			return
		}
		if j, _ := joinUnder(gb); j != nil && why != "" && !strings.HasPrefix(why, "the join: ") {
			if vj, _ := NewVectorJoin(ctx, j, nil); vj != nil {
				vj.left.t.ScanRef().filterNote += "; the GROUP BY above runs on the row path: " + why
			}
		}
	})
	WalkPlan(ctx, n, func(n sql.Node) {
		if tn, ok := n.(*plan.TopN); ok {
			if top, _ := newJoinAggTopN(ctx, tn, nil); top != nil {
				top.src.(*vectorJoinAgg).vj.left.t.ScanRef().filterNote += "; " + top.note()
			}
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

package vecexec

import (
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/icesql/icesql/pushdown/vector"
)

// A tree of joins under a GROUP BY (TPC-H Q3's customer ⋈ orders ⋈
// lineitem, Q5's six tables, Q21's EXISTS and NOT EXISTS) runs on Arrow
// batches as a vecRel: each leaf an Iceberg scan with its WHERE clause
// (vecfilter.go), each inner node a hash join whose build side (the
// plan's right, under its HashLookup) is read first into one array per
// column its ancestors read, indexed by key (vecjointable.go), and whose
// probe side (the left) streams batch by batch on every core. A probe
// batch's pairs are gathered into a new batch holding only the columns the
// nodes above read, which goes up to the next join or to the aggregation;
// no go-mysql-server row exists until the groups. Semi and anti joins
// (EXISTS, NOT EXISTS) narrow the probe batch's selection without
// gathering; a join whose probe side is a Distinct of the key alone (how
// go-mysql-server plans Q4's EXISTS) marks the build rows some probe key
// finds and gives those. A Project of columns renames nothing: it only
// says which columns a node's rows hold. Batch columns are named
// t<leaf>.<Iceberg name>, unique in the tree (a self-join reads one name
// twice).

// relColumn is one column of a vecRel's rows: the scan it comes from and
// its name in the batches. A column of a semi join's build side, or of a
// Distinct's, is not in the batches (src nil).
type relColumn struct {
	src   *vectorFilter
	index int    // in src's rows
	field string // in the batches
}

type relKind uint8

const (
	relScan   relKind = iota
	relJoin           // inner or left outer hash join
	relSemi           // left rows with a match (EXISTS)
	relAnti           // left rows with no match (NOT EXISTS)
	relMarked         // right rows some left key finds, once each (a Distinct probe side)
	relFilter         // a WHERE clause over a join
)

// vecRel is a relation computed on Arrow batches.
type vecRel struct {
	kind relKind
	cols []relColumn
	// relScan
	scan *vectorFilter
	id   int
	// the joins
	left, right *vecRel
	lkey, rkey  relColumn
	keys        *joinKeys
	outer       bool
	// cond is a semi or anti join's condition beyond its key, on the
	// pair's columns (nil for none); pairCols the columns it reads.
	cond vector.Expr
	// relFilter
	child *vecRel
	pred  vector.Expr
}

// relFunc takes a batch of a relation and the rows of it that belong to
// the relation (nil: all), on worker w.
type relFunc func(w int, rec arrow.RecordBatch, keep []int32) error

// newRel translates n, or says why it cannot.
//
// scope is the width of the rows go-mysql-server puts in front of n's
// rows when it runs n: a join's right side is run with the left row in
// front, and the column references of the joins, Projects and Filters in
// it count those columns (a Filter directly over a scan does not).
func newRel(ctx *sql.Context, n sql.Node, ids *int, scope int) (*vecRel, string) {
	switch n := n.(type) {
	case *plan.JoinNode:
		return newJoinRel(ctx, n, ids, scope)
	case *plan.Project:
		child, why := newRel(ctx, n.Child, ids, scope)
		if child == nil {
			return nil, why
		}
		cols := make([]relColumn, len(n.Projections))
		for i, p := range n.Projections {
			gf, ok := p.(*expression.GetField)
			if !ok {
				return nil, "projecting " + p.String()
			}
			gf = gf.WithIndex(gf.Index() - scope).(*expression.GetField)
			if _, _, err := child.column(gf); err != nil {
				return nil, "projecting " + p.String() + ": " + err.Error()
			}
			cols[i] = child.cols[gf.Index()]
		}
		r := *child
		r.cols = cols
		return &r, ""
	case *plan.Filter:
		if t, _ := filteredScan(n.Child); t != nil {
			break // a leaf
		}
		child, why := newRel(ctx, n.Child, ids, scope)
		if child == nil {
			return nil, why
		}
		cond, ok := unscoped(ctx, n.Expression, scope)
		if !ok {
			return nil, "a condition on an outer row: " + n.Expression.String()
		}
		pred, err := child.translator(ctx).Predicate(cond)
		if err != nil {
			return nil, err.Error()
		}
		return &vecRel{kind: relFilter, cols: child.cols, child: child, pred: pred}, ""
	case *plan.Distinct:
		return nil, "a DISTINCT"
	}
	vf, why := vectorSource(ctx, n)
	if vf == nil {
		return nil, why
	}
	*ids++
	return scanRel(vf, *ids), ""
}

// scanRel is the leaf reading vf, numbered id.
func scanRel(vf *vectorFilter, id int) *vecRel {
	r := &vecRel{kind: relScan, scan: vf, id: id}
	for i, name := range vf.cols {
		r.cols = append(r.cols, relColumn{src: vf, index: i, field: fmt.Sprintf("t%d.%s", id, name)})
	}
	return r
}

// newJoinRel translates a join.
func newJoinRel(ctx *sql.Context, j *plan.JoinNode, ids *int, scope int) (*vecRel, string) {
	if j.ScopeLen != 0 {
		return nil, "a join inside a subquery"
	}
	if j.Filter == nil {
		return nil, "a join without a condition"
	}
	r := &vecRel{}
	switch j.Op {
	case plan.JoinTypeHash, plan.JoinTypeInner:
		r.kind = relJoin
	case plan.JoinTypeLeftOuterHash, plan.JoinTypeLeftOuter:
		r.kind, r.outer = relJoin, true
	case plan.JoinTypeSemi, plan.JoinTypeSemiHash:
		r.kind = relSemi
	case plan.JoinTypeAntiIncludeNulls, plan.JoinTypeAntiHashIncludeNulls:
		// NOT EXISTS: a left row stays unless the condition is TRUE for
		// some right row (NOT IN's anti join, where NULL excludes, is not).
		r.kind = relAnti
	default:
		return nil, "a " + j.Op.String()
	}
	leftNode, rightNode := j.Left(), j.Right()
	if hl, ok := rightNode.(*plan.HashLookup); ok {
		rightNode = hl.Child
	}
	if d, ok := leftNode.(*plan.Distinct); ok && r.kind == relJoin && !r.outer {
		// go-mysql-server's EXISTS as a join with the Distinct keys of the
		// subquery: the right rows those keys find, each once.
		r.kind = relMarked
		leftNode = d.Child
	}
	var why string
	if r.left, why = newRel(ctx, leftNode, ids, scope); r.left == nil {
		return nil, why
	}
	if r.right, why = newRel(ctx, rightNode, ids, scope+len(r.left.cols)); r.right == nil {
		return nil, why
	}
	all := slices.Concat(r.left.cols, r.right.cols)
	filter, ok := unscoped(ctx, j.Filter, scope)
	if !ok {
		return nil, "a join condition on an outer row: " + j.Filter.String()
	}
	conj := expression.SplitConjunction(ctx, filter)
	key := -1
	for i, c := range conj {
		if r.keyEquality(ctx, c) {
			key = i
			break
		}
	}
	if key < 0 {
		return nil, "the join condition has no equality of key columns of each side (integers, dates, decimals, or strings compared byte by byte)"
	}
	rest := slices.Delete(slices.Clone(conj), key, key+1)
	switch r.kind {
	case relMarked:
		if len(rest) > 0 || len(r.left.cols) != 1 {
			return nil, "a Distinct side that is more than the key"
		}
		// The Distinct side's key is not a column of the result.
		r.cols = slices.Concat([]relColumn{{}}, r.right.cols)
		return r, ""
	case relSemi, relAnti:
		r.cols = r.left.cols
		if len(rest) > 0 {
			pair := &vecRel{cols: all}
			cond, err := pair.translator(ctx).Predicate(expression.JoinAnd(rest...))
			if err != nil {
				return nil, err.Error()
			}
			r.cond = cond
		}
		return r, ""
	}
	r.cols = all
	if len(rest) == 0 {
		return r, ""
	}
	if r.outer {
		// A condition on the right side alone filters the build side (as
		// filterBuildSide does for two scans); any other would pad rows.
		vf := pushIntoScan(ctx, rightNode, rest, len(r.left.cols))
		if vf == nil || r.right.kind != relScan {
			return nil, "an outer join whose condition is more than its key"
		}
		r.right = scanRel(vf, r.right.id)
		r.cols = slices.Concat(r.left.cols, r.right.cols)
		return r, ""
	}
	pred, err := (&vecRel{cols: all}).translator(ctx).Predicate(expression.JoinAnd(rest...))
	if err != nil {
		return nil, err.Error()
	}
	return &vecRel{kind: relFilter, cols: all, child: r, pred: pred}, ""
}

// unscoped is e with its column references counted from the start of
// the node's own rows, false when one is to a column in front of them.
func unscoped(ctx *sql.Context, e sql.Expression, scope int) (sql.Expression, bool) {
	if scope == 0 {
		return e, true
	}
	e, _, err := transform.Expr(ctx, e, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		if gf.Index() < scope {
			return nil, transform.SameTree, errLeftColumn
		}
		return gf.WithIndex(gf.Index() - scope), transform.NewTree, nil
	})
	return e, err == nil
}

// keyEquality says whether c is a left column = a right column of keys
// coded alike, and makes them the join's key.
func (r *vecRel) keyEquality(ctx *sql.Context, c sql.Expression) bool {
	e, ok := c.(*expression.Equals)
	if !ok {
		return false
	}
	a, ok1 := exactOperand(e.Left()).(*expression.GetField)
	b, ok2 := exactOperand(e.Right()).(*expression.GetField)
	if !ok1 || !ok2 {
		return false
	}
	if a.Index() > b.Index() {
		a, b = b, a
	}
	w := len(r.left.cols)
	if a.Index() < 0 || a.Index() >= w || b.Index() < w || b.Index() >= w+len(r.right.cols) {
		return false
	}
	lc, rc := r.left.cols[a.Index()], r.right.cols[b.Index()-w]
	if lc.src == nil || rc.src == nil {
		return false
	}
	keys, ok := joinKeysOf(ctx, lc.src, a.WithIndex(lc.index).(*expression.GetField), rc.src, b.WithIndex(rc.index).(*expression.GetField))
	if !ok {
		return false
	}
	r.lkey, r.rkey, r.keys = lc, rc, keys
	return true
}

// pushIntoScan is rightNode, a scan or a Filter over one, read with the
// conditions rest too, which are on the joined row (the right side's
// columns from w on): nil when one reads a left column or does not
// translate.
func pushIntoScan(ctx *sql.Context, rightNode sql.Node, rest []sql.Expression, w int) *vectorFilter {
	shifted, ok := shiftToRight(ctx, rest, w)
	if !ok {
		return nil
	}
	scan := rightNode
	if f, ok := rightNode.(*plan.Filter); ok {
		scan = f.Child
		shifted = append(shifted, f.Expression)
	}
	vf, _ := newVectorScan(ctx, scan, expression.JoinAnd(shifted...))
	return vf
}

// translator resolves column references by their index in r's rows.
func (r *vecRel) translator(ctx *sql.Context) *VecTranslator {
	return &VecTranslator{Ctx: ctx, columnOf: r.column}
}

// column is the batch column of gf, a reference to r's rows.
func (r *vecRel) column(gf *expression.GetField) (vector.Column, iceberg.Type, error) {
	i := gf.Index()
	if i < 0 || i >= len(r.cols) || r.cols[i].src == nil {
		return vector.Column{}, nil, decline("column %s is not in the joined batches", gf.String())
	}
	rc := r.cols[i]
	t := rc.src.t
	j := t.AllColumns().IndexOfColName(gf.Name())
	if !t.Owns(gf) || j < 0 || j >= len(t.ColumnNames()) || t.ColumnNames()[j] != rc.src.cols[rc.index] {
		return vector.Column{}, nil, decline("column %s is not the joined row's", gf.String())
	}
	st := &VecTranslator{T: t, Cols: map[string]bool{}}
	c, it, err := st.column(gf)
	if err != nil {
		return vector.Column{}, nil, err
	}
	c.Name = rc.field
	return c, it, nil
}

// leaves calls f with each scan of r, probe says whether its batches
// stream (rather than fill a join's table).
func (r *vecRel) leaves(probe bool, f func(vf *vectorFilter, probe bool)) {
	switch r.kind {
	case relScan:
		f(r.scan, probe)
	case relFilter:
		r.child.leaves(probe, f)
	case relMarked:
		r.left.leaves(false, f)
		r.right.leaves(false, f)
	default:
		r.left.leaves(probe, f)
		r.right.leaves(false, f)
	}
}

// probeScan is the scan whose batches stream through r.
func (r *vecRel) probeScan() *vectorFilter {
	var out *vectorFilter
	r.leaves(true, func(vf *vectorFilter, probe bool) {
		if probe && out == nil {
			out = vf
		}
	})
	if out == nil { // a marked join's result comes from its build side
		r.leaves(false, func(vf *vectorFilter, _ bool) {
			if out == nil {
				out = vf
			}
		})
	}
	return out
}

// joins counts r's joins.
func (r *vecRel) joins() int {
	switch r.kind {
	case relScan:
		return 0
	case relFilter:
		return r.child.joins()
	}
	return 1 + r.left.joins() + r.right.joins()
}

// fields is the batch columns r's rows hold.
func (r *vecRel) fields() map[string]bool {
	out := map[string]bool{}
	for _, c := range r.cols {
		if c.src != nil {
			out[c.field] = true
		}
	}
	return out
}

// split is need's columns of side, plus extra.
func split(need map[string]bool, side *vecRel, extra ...string) map[string]bool {
	have := side.fields()
	out := map[string]bool{}
	for f := range need {
		if have[f] {
			out[f] = true
		}
	}
	for _, f := range extra {
		out[f] = true
	}
	return out
}

// exprFields is the batch columns e reads.
func exprFields(e vector.Expr) ([]string, error) {
	if e == nil {
		return nil, nil
	}
	s, err := vector.NewSelector(e)
	if err != nil {
		return nil, err
	}
	return s.Columns(), nil
}

// run calls fn with r's batches, holding at least need's columns, on
// workers goroutines.
func (r *vecRel) run(ctx *sql.Context, workers int, need map[string]bool, fn relFunc) error {
	switch r.kind {
	case relScan:
		return r.runScan(ctx, workers, need, fn)
	case relFilter:
		return r.runFilter(ctx, workers, need, fn)
	case relMarked:
		return r.runMarked(ctx, workers, need, fn)
	}
	return r.runJoin(ctx, workers, need, fn)
}

func (r *vecRel) runScan(ctx *sql.Context, workers int, need map[string]bool, fn relFunc) error {
	vf := r.scan
	var read []string
	var fields []arrow.Field
	var idx []int // per output field, its column in read
	sels := make([]*vector.Selector, workers)
	alls := make([][]int32, workers)
	if vf.pred != nil {
		for i := range sels {
			s, err := vector.NewSelector(vf.pred)
			if err != nil {
				return err
			}
			sels[i] = s
		}
		read = sels[0].Columns()
	}
	for _, c := range r.cols {
		if !need[c.field] || slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == c.field }) {
			continue
		}
		name := vf.cols[c.index]
		at := slices.Index(read, name)
		if at < 0 {
			at = len(read)
			read = append(read, name)
		}
		fields = append(fields, arrow.Field{Name: c.field, Nullable: true})
		idx = append(idx, at)
	}
	if len(read) == 0 {
		read = vf.read[:1]
	}
	err := eachBatch(ctx, vf.t, read, workers, func(w int, rec arrow.RecordBatch) error {
		keep, err := selectKept(sels[w], rec, &alls[w])
		if err != nil || len(keep) == 0 {
			return err
		}
		if sels[w] == nil {
			keep = nil
		}
		cols := make([]arrow.Array, len(fields))
		fs := slices.Clone(fields)
		for i, at := range idx {
			c, err := batchColumn(rec, read[at])
			if err != nil {
				return err
			}
			cols[i] = c
			fs[i].Type = c.DataType()
		}
		out := array.NewRecordBatch(arrow.NewSchema(fs, nil), cols, rec.NumRows())
		defer out.Release()
		return fn(w, out, keep)
	})
	if err != nil {
		return fmt.Errorf("vectorized join over %s: %w", vf.t.String(), err)
	}
	return nil
}

func (r *vecRel) runFilter(ctx *sql.Context, workers int, need map[string]bool, fn relFunc) error {
	reads, err := exprFields(r.pred)
	if err != nil {
		return err
	}
	sels := make([]*vector.Selector, workers)
	for i := range sels {
		if sels[i], err = vector.NewSelector(r.pred); err != nil {
			return err
		}
	}
	inner := split(need, r.child, reads...)
	return r.child.run(ctx, workers, inner, func(w int, rec arrow.RecordBatch, keep []int32) error {
		var sel []int32
		var err error
		if keep == nil {
			sel, err = sels[w].Select(rec)
		} else {
			sel, err = sels[w].SelectAmong(rec, keep)
		}
		if err != nil || len(sel) == 0 {
			return err
		}
		return fn(w, rec, sel)
	})
}

// relBuild is a join's build side: its rows with a non-NULL key, the
// columns read above gathered into one array each, and the keys indexed.
type relBuild struct {
	table  *joinTable
	fields []string
	cols   []arrow.Array
}

func (b *relBuild) release() { releaseAll(b.cols) }

func (b *relBuild) column(field string) (arrow.Array, bool) {
	i := slices.Index(b.fields, field)
	if i < 0 {
		return nil, false
	}
	return b.cols[i], true
}

// materialize reads r into a build side keyed by key.
func (r *vecRel) materialize(ctx *sql.Context, workers int, need map[string]bool, key string, keys *joinKeys) (*relBuild, error) {
	fields := make([]string, 0, len(need))
	for _, c := range r.cols {
		if need[c.field] && c.field != "" && !slices.Contains(fields, c.field) {
			fields = append(fields, c.field)
		}
	}
	inner := split(need, r, key)
	chunks := make([][]buildChunk, workers)
	alls := make([][]int32, workers)
	mem := memory.DefaultAllocator
	err := r.run(ctx, workers, inner, func(w int, rec arrow.RecordBatch, keep []int32) error {
		if keep == nil {
			keep, _ = selectKept(nil, rec, &alls[w])
		}
		keyArr, err := batchColumn(rec, key)
		if err != nil {
			return err
		}
		rows, ks, err := keys.buildKeys(keyArr, keep)
		if err != nil || len(rows) == 0 {
			return err
		}
		c := buildChunk{keys: ks}
		for _, name := range fields {
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
		return nil, err
	}
	b := &relBuild{table: keyTable(all), fields: fields}
	if len(all) == 0 {
		b.fields = nil
		return b, nil
	}
	for j := range fields {
		parts := make([]arrow.Array, len(all))
		for i, c := range all {
			parts[i] = c.cols[j]
		}
		col, err := concatColumn(ctx, parts, mem)
		if err != nil {
			b.release()
			return nil, err
		}
		if d, ok := col.(*array.Dictionary); ok {
			d.Dictionary() // built before the probe workers share it
		}
		b.cols = append(b.cols, col)
	}
	return b, nil
}

// relProbe is one worker's buffers.
type relProbe struct {
	pi, bi []int32
	all    []int32
	sel    *vector.Selector
}

func (r *vecRel) runJoin(ctx *sql.Context, workers int, need map[string]bool, fn relFunc) error {
	condReads, err := exprFields(r.cond)
	if err != nil {
		return err
	}
	rightHave := r.right.fields()
	var needR []string
	for _, f := range condReads {
		if rightHave[f] {
			needR = append(needR, f)
		}
	}
	if r.kind == relJoin {
		needR = append(needR, mapKeys(split(need, r.right))...)
	}
	b, err := r.right.materialize(ctx, workers, split(nil, r.right, needR...), r.rkey.field, r.keys)
	if err != nil {
		return err
	}
	defer b.release()
	if len(b.table.keys) == 0 && r.kind != relAnti && !r.outer {
		return nil
	}
	if r.outer && len(b.cols) < len(needR) {
		// An outer join's empty build side leaves no column to pad from.
		return fmt.Errorf("%w: no build rows to pad", errBatchShape)
	}
	probes := make([]*relProbe, workers)
	for i := range probes {
		probes[i] = &relProbe{}
		if r.cond != nil {
			if probes[i].sel, err = vector.NewSelector(r.cond); err != nil {
				return err
			}
		}
	}
	leftNeed := split(need, r.left, r.lkey.field)
	for _, f := range condReads {
		if !rightHave[f] {
			leftNeed[f] = true
		}
	}
	mem := memory.DefaultAllocator
	t := b.table
	return r.left.run(ctx, workers, leftNeed, func(w int, rec arrow.RecordBatch, keep []int32) error {
		p := probes[w]
		if len(t.keys) == 0 && r.kind == relAnti {
			return fn(w, rec, keep) // nothing to match: every row stays
		}
		if keep == nil {
			keep, _ = selectKept(nil, rec, &p.all)
		}
		keyArr, err := batchColumn(rec, r.lkey.field)
		if err != nil {
			return err
		}
		key, err := r.keys.reader(keyArr, false)
		if err != nil {
			return err
		}
		pi, bi := p.pi[:0], p.bi[:0]
		for _, row := range keep {
			k, ok := key(int(row))
			if !ok || t.first(k) < 0 {
				if r.outer {
					pi, bi = append(pi, row), append(bi, -1)
				} else if r.kind == relAnti {
					pi, bi = append(pi, row), append(bi, -1) // kept: nothing matches
				}
				continue
			}
			if r.kind != relJoin && r.cond == nil {
				// A semi join keeps the row, an anti join drops it.
				if r.kind == relSemi {
					pi, bi = append(pi, row), append(bi, -1)
				}
				continue
			}
			for i := t.first(k); i >= 0; i = t.next[i] {
				pi, bi = append(pi, row), append(bi, i)
			}
		}
		p.pi, p.bi = pi, bi
		if len(pi) == 0 {
			return nil
		}
		switch {
		case r.kind == relJoin:
			out, err := r.gatherPairs(mem, rec, b, leftNeed, pi, bi)
			if err != nil {
				return err
			}
			defer out.Release()
			return fn(w, out, nil)
		case r.cond == nil:
			return fn(w, rec, slices.Clone(pi))
		}
		// The pairs the condition keeps decide.
		sel, err := r.condPairs(mem, p, rec, b, condReads, pi, bi)
		if err != nil {
			return err
		}
		kept := make([]int32, 0, len(keep))
		for j, s := 0, 0; j < len(pi); {
			row := pi[j]
			hit := false
			for ; j < len(pi) && pi[j] == row; j++ {
				for s < len(sel) && int(sel[s]) < j {
					s++
				}
				if s < len(sel) && int(sel[s]) == j && bi[j] >= 0 {
					hit = true
				}
			}
			if hit == (r.kind == relSemi) {
				kept = append(kept, row)
			}
		}
		if len(kept) == 0 {
			return nil
		}
		return fn(w, rec, kept)
	})
}

// gatherPairs is the batch of an inner or outer join's pairs: the probe
// batch's columns of need at pi, the build side's at bi (-1: NULLs).
func (r *vecRel) gatherPairs(mem memory.Allocator, rec arrow.RecordBatch, b *relBuild, need map[string]bool, pi, bi []int32) (arrow.RecordBatch, error) {
	var fields []arrow.Field
	var cols []arrow.Array
	add := func(name string, arr arrow.Array, idx []int32) error {
		g, err := gather(mem, arr, idx)
		if err != nil {
			return err
		}
		cols = append(cols, g)
		fields = append(fields, arrow.Field{Name: name, Type: g.DataType(), Nullable: true})
		return nil
	}
	for i := range int(rec.NumCols()) {
		name := rec.ColumnName(i)
		if need[name] {
			if err := add(name, rec.Column(i), pi); err != nil {
				releaseAll(cols)
				return nil, err
			}
		}
	}
	for j, name := range b.fields {
		if err := add(name, b.cols[j], bi); err != nil {
			releaseAll(cols)
			return nil, err
		}
	}
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(pi)))
	releaseAll(cols)
	return out, nil
}

// condPairs is the indexes into pi (and bi) of the pairs whose columns
// make a semi or anti join's condition TRUE.
func (r *vecRel) condPairs(mem memory.Allocator, p *relProbe, rec arrow.RecordBatch, b *relBuild, reads []string, pi, bi []int32) ([]int32, error) {
	var fields []arrow.Field
	var cols []arrow.Array
	defer func() { releaseAll(cols) }()
	for _, name := range reads {
		arr, idx := arrow.Array(nil), pi
		if c, ok := b.column(name); ok {
			arr, idx = c, bi
		} else {
			var err error
			if arr, err = batchColumn(rec, name); err != nil {
				return nil, err
			}
		}
		g, err := gather(mem, arr, idx)
		if err != nil {
			return nil, err
		}
		cols = append(cols, g)
		fields = append(fields, arrow.Field{Name: name, Type: g.DataType(), Nullable: true})
	}
	pairs := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(pi)))
	defer pairs.Release()
	return p.sel.Select(pairs)
}

// runMarked gives the build rows some probe key finds, each once, after
// the probe side has been read.
func (r *vecRel) runMarked(ctx *sql.Context, workers int, need map[string]bool, fn relFunc) error {
	b, err := r.right.materialize(ctx, workers, split(need, r.right), r.rkey.field, r.keys)
	if err != nil {
		return err
	}
	defer b.release()
	t := b.table
	if len(t.keys) == 0 {
		return nil
	}
	hits := make([][]bool, workers)
	alls := make([][]int32, workers)
	var mu sync.Mutex
	err = r.left.run(ctx, workers, map[string]bool{r.lkey.field: true}, func(w int, rec arrow.RecordBatch, keep []int32) error {
		if keep == nil {
			keep, _ = selectKept(nil, rec, &alls[w])
		}
		if hits[w] == nil {
			mu.Lock()
			hits[w] = make([]bool, len(t.keys))
			mu.Unlock()
		}
		keyArr, err := batchColumn(rec, r.lkey.field)
		if err != nil {
			return err
		}
		key, err := r.keys.reader(keyArr, false)
		if err != nil {
			return err
		}
		hit := hits[w]
		for _, row := range keep {
			if k, ok := key(int(row)); ok {
				for i := t.first(k); i >= 0; i = t.next[i] {
					hit[i] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var rows []int32
	for i := range t.keys {
		for _, h := range hits {
			if h != nil && h[i] {
				rows = append(rows, int32(i))
				break
			}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for j, name := range b.fields {
		g, err := gather(memory.DefaultAllocator, b.cols[j], rows)
		if err != nil {
			releaseAll(cols)
			return err
		}
		cols = append(cols, g)
		fields = append(fields, arrow.Field{Name: name, Type: g.DataType(), Nullable: true})
	}
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(rows)))
	releaseAll(cols)
	defer out.Release()
	return fn(0, out, nil)
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

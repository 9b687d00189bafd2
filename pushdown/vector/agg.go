package vector

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// AggFunc is an aggregate function.
type AggFunc uint8

// The aggregate functions.
const (
	CountStar AggFunc = iota + 1 // rows
	Count                        // non-NULL values
	Sum
	Avg // Sum and Count; the caller divides as its SQL dialect rounds
	Min
	Max
	CountDistinct // distinct non-NULL values (distinct.go)
)

// Agg is one aggregate of a Plan.
type Agg struct {
	Func AggFunc
	Arg  Expr // nil for CountStar
	// ExactFloat says the caller turns an Int sum into a float64 added
	// value by value; the run fails with ErrInexact unless every partial
	// sum is a float64 exactly, so that any order of addition agrees.
	ExactFloat bool
}

// Plan is a grouped aggregation over the rows where Filter is TRUE (every
// row when nil). Without Keys there is exactly one group, even over no rows.
type Plan struct {
	Filter Expr
	Keys   []Expr
	Aggs   []Agg
	// Having drops the groups that fail any of its bounds (having.go).
	Having []Bound
}

// Check says whether the plan can run here.
func (p *Plan) Check() error {
	if p.Filter != nil {
		if err := Check(p.Filter, true); err != nil {
			return err
		}
	}
	for _, k := range p.Keys {
		if err := Check(k, false); err != nil {
			return err
		}
	}
	for _, a := range p.Aggs {
		if a.Func == CountStar {
			continue
		}
		if a.Arg == nil {
			return errors.New("aggregate without argument")
		}
		if err := Check(a.Arg, false); err != nil {
			return err
		}
		if (a.Func == Sum || a.Func == Avg) && a.Arg.Type().Kind != Int && a.Arg.Type().Kind != Decimal {
			return fmt.Errorf("SUM or AVG of kind %d", a.Arg.Type().Kind)
		}
	}
	return p.checkBounds()
}

// Value is a key or MIN/MAX result: I for numeric kinds (unscaled for
// decimals), S for strings.
type Value struct {
	Null bool
	I    int64
	S    string
}

// AggValue is one aggregate's result for one group.
type AggValue struct {
	Null  bool     // SUM, AVG, MIN, MAX over no non-NULL value
	Count int64    // CountStar, Count, and the values AVG averages
	Sum   *big.Int // SUM, AVG: exact, at the argument's scale
	Val   Value    // MIN, MAX
}

// Group is one result group.
type Group struct {
	Keys []Value
	Aggs []AggValue
}

// Source is a stream of batches; Next returns io.EOF after the last. A
// batch stays valid until the next call to Next.
type Source interface {
	Next() (arrow.RecordBatch, error)
}

// Run computes the plan over every batch of src, on workers goroutines
// (GOMAXPROCS when workers < 1), and returns the groups in no set order.
func Run(ctx context.Context, src Source, p *Plan, workers int) ([]Group, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	ws := make([]*worker, workers)
	for i := range ws {
		w, err := newWorker(p)
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	if err := EachBatch(ctx, src, workers, func(w int, rec arrow.RecordBatch) error { return ws[w].add(rec) }); err != nil {
		return nil, err
	}
	// Merging re-inserts every group of the merged worker: merge into the
	// one with the most groups.
	slices.SortFunc(ws, func(a, b *worker) int { return len(b.keyVals) - len(a.keyVals) })
	for _, w := range ws[1:] {
		ws[0].merge(w)
	}
	return ws[0].groups()
}

// worker aggregates the batches one goroutine receives.
type worker struct {
	plan   *Plan
	cols   columns
	b      batch
	filter func(b *batch, sel []int32) ([]int32, error)
	keys   []keyFn
	args   []argFn
	accs   []*accum
	// own lists the aggregates that update their accumulator: a SUM and
	// an AVG of one argument (Q1 has two such pairs) share one.
	own  []int
	rows []int64 // selected rows per group

	index   map[string]int32
	encoded []string
	keyVals [][]Value
	// ints indexes the groups by their one numeric key, when the plan has
	// one (intkeys.go); index and encoded are then unused.
	ints  map[int64]int32
	nullG int32 // the group of the NULL key, -1 before there is one
	slab  []Value

	all  []int32
	gids []int32
	kbuf []byte
	cbuf []int32 // dictGroupIDs's combined dictionary indices
}

// keyFn appends the selected rows' key encodings, and reads one row's key.
type keyFn struct {
	num numFn
	str func(b *batch) strVec
}

// argFn is an aggregate's argument: numeric or string.
type argFn struct {
	num numFn
	str func(b *batch) strVec
}

func newWorker(p *Plan) (*worker, error) {
	w := &worker{plan: p, index: map[string]int32{}}
	c := &compiler{cols: &w.cols}
	if p.Filter != nil {
		f, err := c.filter(p.Filter)
		if err != nil {
			return nil, err
		}
		w.filter = f
	}
	for _, k := range p.Keys {
		var kf keyFn
		var err error
		if k.Type().Kind == String {
			kf.str, err = c.str(k)
		} else {
			kf.num, err = c.num(k)
		}
		if err != nil {
			return nil, err
		}
		w.keys = append(w.keys, kf)
	}
	for _, a := range p.Aggs {
		var af argFn
		if a.Func != CountStar {
			var err error
			if a.Arg.Type().Kind == String {
				af.str, err = c.str(a.Arg)
			} else {
				af.num, err = c.num(a.Arg)
			}
			if err != nil {
				return nil, err
			}
		}
		w.args = append(w.args, af)
		w.addAccum(a)
	}
	if len(p.Keys) == 0 {
		w.group("", nil)
	}
	if len(p.Keys) == 1 && p.Keys[0].Type().Kind != String {
		w.ints, w.nullG = map[int64]int32{}, -1
	}
	return w, nil
}

// group is the index of the group with encoded key k, added when new.
func (w *worker) group(k string, vals []Value) int32 {
	if g, ok := w.index[k]; ok {
		return g
	}
	g := w.newGroup(vals)
	w.index[k] = g
	w.encoded = append(w.encoded, k)
	return g
}

// newGroup adds a group with key values vals.
func (w *worker) newGroup(vals []Value) int32 {
	g := int32(len(w.keyVals))
	if len(w.keyVals) == cap(w.keyVals) {
		// Double, as accum.grow does.
		w.keyVals = slices.Grow(w.keyVals, max(len(w.keyVals), 64))
		w.rows = slices.Grow(w.rows, max(len(w.rows), 64))
	}
	w.keyVals = append(w.keyVals, vals)
	w.rows = append(w.rows, 0)
	for _, i := range w.own {
		w.accs[i].grow(len(w.keyVals))
	}
	return g
}

func (w *worker) add(rec arrow.RecordBatch) error {
	if err := w.cols.bind(&w.b, rec); err != nil {
		return err
	}
	n := int(rec.NumRows())
	if cap(w.all) < n {
		w.all = make([]int32, n)
		for i := range w.all {
			w.all[i] = int32(i)
		}
	}
	sel := w.all[:n]
	if w.filter != nil {
		var err error
		if sel, err = w.filter(&w.b, sel); err != nil {
			return err
		}
	}
	if len(sel) == 0 {
		return nil
	}
	gids, err := w.groupIDs(sel)
	if err != nil {
		return err
	}
	w.countRows(gids)
	for _, i := range w.own {
		if err := w.accs[i].update(&w.b, sel, gids, w.args[i]); err != nil {
			return err
		}
	}
	return nil
}

// groupIDs finds (or adds) the group of every selected row.
func (w *worker) groupIDs(sel []int32) ([]int32, error) {
	w.gids = grow(w.gids, len(sel))
	if len(w.keys) == 0 {
		clear(w.gids)
		return w.gids, nil
	}
	nums := make([]*numVec, len(w.keys))
	strs := make([]strVec, len(w.keys))
	for k, kf := range w.keys {
		if kf.num != nil {
			v, err := kf.num(&w.b, sel)
			if err != nil {
				return nil, err
			}
			nums[k] = v // each key's closure owns its buffer
		} else {
			strs[k] = kf.str(&w.b)
		}
	}
	if w.ints != nil {
		w.intGroupIDs(nums[0], sel) // intkeys.go
		return w.gids, nil
	}
	if w.dictGroupIDs(nums, strs, sel) {
		return w.gids, nil
	}
	for i, row := range sel {
		// Rows often come in runs of one group (files sorted or clustered
		// by a key): a row keyed as the one before is in its group.
		if i > 0 && w.sameKey(nums, strs, i, int(row), int(sel[i-1])) {
			w.gids[i] = w.gids[i-1]
			continue
		}
		buf := w.kbuf[:0]
		for k := range w.keys {
			if v := nums[k]; v != nil {
				if v.null != nil && v.null[i] {
					buf = append(buf, 0)
					continue
				}
				buf = append(buf, 1)
				buf = binary.LittleEndian.AppendUint64(buf, uint64(v.v[i]))
				continue
			}
			s, null := strs[k].at(int(row))
			if null {
				buf = append(buf, 0)
				continue
			}
			buf = append(buf, 1)
			buf = binary.AppendUvarint(buf, uint64(len(s)))
			buf = append(buf, s...)
		}
		w.kbuf = buf
		g, ok := w.index[string(buf)]
		if !ok {
			g = w.group(string(buf), w.keyValues(nums, strs, i, int(row)))
		}
		w.gids[i] = g
	}
	return w.gids, nil
}

// sameKey says selected row i (batch row row) has the key of the
// selected row before it (batch row prev).
func (w *worker) sameKey(nums []*numVec, strs []strVec, i, row, prev int) bool {
	for k := range w.keys {
		if v := nums[k]; v != nil {
			if v.null != nil && (v.null[i] || v.null[i-1]) {
				if v.null[i] != v.null[i-1] {
					return false
				}
				continue
			}
			if v.v[i] != v.v[i-1] {
				return false
			}
			continue
		}
		a, an := strs[k].at(row)
		b, bn := strs[k].at(prev)
		if an != bn || !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}

func (w *worker) keyValues(nums []*numVec, strs []strVec, i, row int) []Value {
	out := make([]Value, len(w.keys))
	for k := range w.keys {
		if v := nums[k]; v != nil {
			if v.null != nil && v.null[i] {
				out[k].Null = true
			} else {
				out[k].I = v.v[i]
			}
			continue
		}
		s, null := strs[k].at(row)
		out[k] = Value{Null: null, S: string(s)}
	}
	return out
}

// merge adds other's groups into w's.
func (w *worker) merge(other *worker) {
	w.flush()
	other.flush()
	for g := range other.keyVals {
		var dst int32
		if w.ints != nil {
			dst = w.intGroup(other.keyVals[g][0])
		} else {
			dst = w.group(other.encoded[g], other.keyVals[g])
		}
		w.rows[dst] += other.rows[g]
		for _, i := range w.own {
			w.accs[i].merge(dst, other.accs[i], int32(g))
		}
	}
}

func (w *worker) groups() ([]Group, error) {
	w.flush()
	kept := len(w.keyVals)
	var bounds []intBound
	var keep []bool
	if len(w.plan.Having) > 0 {
		for _, b := range w.plan.Having {
			bounds = append(bounds, compileBound(b))
		}
		keep = make([]bool, len(w.keyVals))
		kept = 0
		for g := range w.keyVals {
			if keep[g] = w.keep(bounds, int32(g)); keep[g] {
				kept++
			}
		}
	}
	out := make([]Group, 0, kept)
	n := len(w.accs)
	aggs := make([]AggValue, kept*n) // one allocation for every group's
	for g := range w.keyVals {
		if keep != nil && !keep[g] {
			continue
		}
		j := len(out)
		out = append(out, Group{Keys: w.keyVals[g], Aggs: aggs[j*n : (j+1)*n : (j+1)*n]})
		for i, a := range w.accs {
			v, err := a.result(int32(g), w.rows[g])
			if err != nil {
				return nil, err
			}
			out[j].Aggs[i] = v
		}
	}
	return out, nil
}

// accum is one aggregate's state for every group of a worker. The values
// it counts are the group's rows (worker.rows) less its NULLs.
type accum struct {
	agg   Agg
	nulls []int64
	lo    []uint64 // sums: two's complement 128-bit, low and high words
	hi    []int64
	abs   []uint64 // sums of magnitudes, saturating, for ExactFloat
	has   []bool
	iv    []int64
	sv    []string
	// distinct is CountDistinct's per-group sets (distinct.go).
	distinct distinctSets
	// part holds sums not yet added to lo and hi (fastsum.go), headroom
	// what may still be added to any of them without overflow.
	part     []int64
	headroom uint64
}

// grow makes room for n groups. Capacity doubles: append's growth of a
// quarter for large slices copied each of the eight a million-group GROUP
// BY keeps many times over.
func (a *accum) grow(n int) {
	if n <= len(a.nulls) {
		return
	}
	c := cap(a.nulls)
	if n > c {
		c = max(2*c, n, 64)
	}
	// Each aggregate keeps only the state it uses: a million groups cost
	// a SUM 41 bytes each, a COUNT 9.
	a.nulls = growZeroed(a.nulls, n, c)
	a.has = growZeroed(a.has, n, c)
	switch a.agg.Func {
	case Sum, Avg:
		a.part = growZeroed(a.part, n, c)
		a.lo = growZeroed(a.lo, n, c)
		a.hi = growZeroed(a.hi, n, c)
		a.abs = growZeroed(a.abs, n, c)
	case Min, Max:
		if a.agg.Arg.Type().Kind == String {
			a.sv = growZeroed(a.sv, n, c) // the one state the collector scans
		} else {
			a.iv = growZeroed(a.iv, n, c)
		}
	}
}

// growZeroed is s at length n, with capacity c when it must move, its new
// elements zero.
func growZeroed[T any](s []T, n, c int) []T {
	if n > cap(s) {
		t := make([]T, len(s), c)
		copy(t, s)
		s = t
	}
	old := len(s)
	s = s[:n]
	clear(s[old:])
	return s
}

func (a *accum) addSum(g int32, v int64) {
	lo := a.lo[g] + uint64(v)
	carry := int64(0)
	if lo < a.lo[g] {
		carry = 1
	}
	a.lo[g] = lo
	a.hi[g] += v>>63 + carry
	if a.agg.ExactFloat {
		s := a.abs[g] + absU(v)
		if s < a.abs[g] {
			s = ^uint64(0)
		}
		a.abs[g] = s
	}
}

func (a *accum) update(b *batch, sel, gids []int32, arg argFn) error {
	switch a.agg.Func {
	case CountStar:
		return nil
	case CountDistinct:
		return a.updateDistinct(b, sel, gids, arg)
	}
	if arg.str != nil {
		sv := arg.str(b)
		for i, row := range sel {
			s, null := sv.at(int(row))
			g := gids[i]
			if null {
				a.nulls[g]++
				continue
			}
			switch a.agg.Func {
			case Min, Max:
				if !a.has[g] || better(a.agg.Func, string(s) < a.sv[g], string(s) > a.sv[g]) {
					a.has[g], a.sv[g] = true, string(s)
				}
			}
		}
		return nil
	}
	v, err := arg.num(b, sel)
	if err != nil {
		return err
	}
	vals, null := v.v[:len(sel)], v.null
	if null != nil {
		for i, g := range gids {
			if null[i] {
				a.nulls[g]++
			}
		}
	}
	switch a.agg.Func {
	case Sum, Avg:
		if null == nil && a.addSums(gids, vals, v.bits) {
			return nil
		}
		for i, g := range gids {
			if null != nil && null[i] {
				continue
			}
			a.addSum(g, vals[i])
		}
	case Min, Max:
		for i, g := range gids {
			if null != nil && null[i] {
				continue
			}
			x := vals[i]
			if !a.has[g] || better(a.agg.Func, x < a.iv[g], x > a.iv[g]) {
				a.has[g], a.iv[g] = true, x
			}
		}
	}
	return nil
}

func better(f AggFunc, less, greater bool) bool {
	if f == Min {
		return less
	}
	return greater
}

func (a *accum) merge(g int32, o *accum, og int32) {
	if o.agg.Func == CountDistinct {
		a.mergeDistinct(g, o, og)
		return
	}
	a.nulls[g] += o.nulls[og]
	if o.agg.Func == Sum || o.agg.Func == Avg {
		lo := a.lo[g] + o.lo[og]
		carry := int64(0)
		if lo < a.lo[g] {
			carry = 1
		}
		a.lo[g] = lo
		a.hi[g] += o.hi[og] + carry
		s := a.abs[g] + o.abs[og]
		if s < a.abs[g] {
			s = ^uint64(0)
		}
		a.abs[g] = s
	}
	if o.has[og] {
		switch {
		case !a.has[g]:
			a.has[g] = true
			if a.sv != nil {
				a.sv[g] = o.sv[og]
			} else {
				a.iv[g] = o.iv[og]
			}
		case a.agg.Arg.Type().Kind == String:
			if better(a.agg.Func, o.sv[og] < a.sv[g], o.sv[og] > a.sv[g]) {
				a.sv[g] = o.sv[og]
			}
		default:
			if better(a.agg.Func, o.iv[og] < a.iv[g], o.iv[og] > a.iv[g]) {
				a.iv[g] = o.iv[og]
			}
		}
	}
}

// maxExactFloat is 2^53: integers of smaller magnitude are exact float64s.
const maxExactFloat = 1 << 53

func (a *accum) result(g int32, rows int64) (AggValue, error) {
	count := rows - a.nulls[g]
	switch a.agg.Func {
	case CountStar, Count:
		return AggValue{Count: count}, nil
	case CountDistinct:
		return AggValue{Count: a.distinctCount(g)}, nil
	case Sum, Avg:
		if count == 0 {
			return AggValue{Null: true}, nil
		}
		if a.agg.ExactFloat && a.abs[g] >= maxExactFloat {
			return AggValue{}, ErrInexact
		}
		return AggValue{Count: count, Sum: int128(a.hi[g], a.lo[g])}, nil
	}
	if !a.has[g] {
		return AggValue{Null: true}, nil
	}
	var v Value
	if a.sv != nil {
		v.S = a.sv[g]
	} else {
		v.I = a.iv[g]
	}
	return AggValue{Count: count, Val: v}, nil
}

func int128(hi int64, lo uint64) *big.Int {
	v := new(big.Int).SetInt64(hi)
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(lo))
}

package vector

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"runtime"
	"slices"
	"unsafe"

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
		if (a.Func == Sum || a.Func == Avg) && a.Arg.Type().Kind == Float {
			return errors.New("SUM or AVG of a float, whose value depends on the order of addition")
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
	return RunWithin(ctx, src, p, workers, nil)
}

// RunWithin is Run asking reserve before its state, and the groups it
// returns, grow (memory.go); a nil reserve never refuses. What the run
// reserved and did not give back is what it returns, and state dropped
// after the run failed: the caller's account ends with the run.
func RunWithin(ctx context.Context, src Source, p *Plan, workers int, reserve Reserve) ([]Group, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	ws := make([]*worker, workers)
	for i := range ws {
		w, err := newWorker(p, &account{reserve: reserve})
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	if err := EachBatch(ctx, src, workers, func(w int, rec arrow.RecordBatch) error { return ws[w].addBatch(rec) }); err != nil {
		return nil, err
	}
	return mergeGroups(ws)
}

// mergeGroups merges the workers' groups into one worker's and returns
// them.
func mergeGroups(ws []*worker) (_ []Group, err error) {
	defer catchRefusal(&err)
	// Merging re-inserts every group of the merged worker: merge into the
	// one with the most groups.
	slices.SortFunc(ws, func(a, b *worker) int { return len(b.rows) - len(a.rows) })
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
	// mem is asked before the state grows; every per-group slice has
	// rows's capacity.
	mem *account

	index   map[string]int32
	encoded []string
	keyVals [][]Value
	// ints indexes the groups by their one numeric key, when the plan has
	// one (intkeys.go), and intKeys holds each group's key; index,
	// encoded and keyVals are then unused.
	ints    *intTable
	intKeys []int64
	nullG   int32 // the group of the NULL key, -1 before there is one

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

func newWorker(p *Plan, mem *account) (*worker, error) {
	w := &worker{plan: p, index: map[string]int32{}, mem: mem}
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
		w.ints, w.nullG = &intTable{mem: mem}, -1
	}
	return w, nil
}

// group is the index of the group with encoded key k, added when new.
func (w *worker) group(k string, vals []Value) int32 {
	if g, ok := w.index[k]; ok {
		return g
	}
	// The key's bytes, its index entry, its values and their strings.
	w.mem.grow(2*int64(len(k)) + mapEntryBytes + int64(len(vals))*valueBytes)
	g := w.newGroup()
	w.keyVals = append(w.keyVals, vals)
	w.index[k] = g
	w.encoded = append(w.encoded, k)
	return g
}

// newGroup adds a group; the caller keeps its key.
func (w *worker) newGroup() int32 {
	g := int32(len(w.rows))
	if len(w.rows) == cap(w.rows) {
		w.growGroups()
	}
	w.rows = append(w.rows, 0)
	for _, i := range w.own {
		w.accs[i].grow(len(w.rows))
	}
	return g
}

// growGroups doubles the capacity of the per-group slices the worker
// keeps (accum.grow doubles the aggregates'), asking first.
func (w *worker) growGroups() {
	old, c := cap(w.rows), max(2*len(w.rows), 64)
	per := int64(unsafe.Sizeof(int64(0))) // rows
	if w.ints != nil {
		per += int64(unsafe.Sizeof(int64(0))) // intKeys
	} else {
		per += int64(unsafe.Sizeof([]Value(nil)) + unsafe.Sizeof("")) // keyVals, encoded
	}
	w.mem.grow(int64(c) * per) // the old slices are live until copied
	w.rows = slices.Grow(w.rows, c-len(w.rows))
	if w.ints != nil {
		w.intKeys = slices.Grow(w.intKeys, c-len(w.intKeys))
	} else {
		w.keyVals = slices.Grow(w.keyVals, c-len(w.keyVals))
		w.encoded = slices.Grow(w.encoded, c-len(w.encoded))
	}
	w.mem.shrink(int64(old) * per)
}

// addBatch is add, a refusal of memory its error.
func (w *worker) addBatch(rec arrow.RecordBatch) (err error) {
	defer catchRefusal(&err)
	return w.add(rec)
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
	n := len(other.rows)
	if w.ints != nil {
		w.ints.reserve(len(w.rows) + n) // no doubling midway
	}
	w.mem.grow(int64(n) * 4)
	defer w.mem.shrink(int64(n) * 4)
	remap := make([]int32, n) // other's group -> w's
	for g := range n {
		var dst int32
		if w.ints != nil {
			dst = w.intGroup(other.intKey(int32(g)))
		} else {
			dst = w.group(other.encoded[g], other.keyVals[g])
		}
		remap[g] = dst
		w.rows[dst] += other.rows[g]
	}
	for _, i := range w.own {
		w.accs[i].merge(other.accs[i], remap)
	}
	other.mem.release() // other is dropped
}

// groupBytes is what groups takes for each group it returns: the Group,
// its AggValues, an integer key's Value, and each sum's big.Int.
func (w *worker) groupBytes() int64 {
	n := int64(unsafe.Sizeof(Group{})) + int64(len(w.accs))*int64(unsafe.Sizeof(AggValue{}))
	if w.ints != nil {
		n += valueBytes
	}
	for _, a := range w.accs {
		if a.agg.Func == Sum || a.agg.Func == Avg {
			n += int64(unsafe.Sizeof(big.Int{})) + 16 // and its words
		}
	}
	return n
}

func (w *worker) groups() ([]Group, error) {
	n := len(w.rows)
	kept := n
	var bounds []intBound
	var keep []bool
	if len(w.plan.Having) > 0 {
		for _, b := range w.plan.Having {
			bounds = append(bounds, compileBound(b))
		}
		keep = make([]bool, n)
		kept = 0
		for g := range n {
			if keep[g] = w.keep(bounds, int32(g)); keep[g] {
				kept++
			}
		}
	}
	w.mem.grow(int64(n) + int64(kept)*w.groupBytes())
	out := make([]Group, 0, kept)
	na := len(w.accs)
	aggs := make([]AggValue, kept*na) // one allocation for every group's
	var keys []Value                  // the integer path's keys, likewise
	if w.ints != nil {
		keys = make([]Value, kept)
	}
	for g := range n {
		if keep != nil && !keep[g] {
			continue
		}
		j := len(out)
		grp := Group{Aggs: aggs[j*na : (j+1)*na : (j+1)*na]}
		if keys != nil {
			keys[j] = w.intKey(int32(g))
			grp.Keys = keys[j : j+1 : j+1]
		} else {
			grp.Keys = w.keyVals[g]
		}
		out = append(out, grp)
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
// it counts are the group's rows (worker.rows) less its NULLs. Each keeps
// only the state its function uses, and what most runs never need is made
// on first use: the NULL counts at the first NULL, the 128-bit sums when
// the partial sums of fastsum.go can no longer hold a sum exactly. A
// million groups cost a SUM 8 bytes each, a COUNT none.
type accum struct {
	agg   Agg
	n, c  int     // groups, and the capacity of the per-group slices
	nulls []int64 // nil: no NULL yet
	// Sums are part + hi:lo, hi:lo two's complement 128-bit (nil until
	// needed), abs the sums of magnitudes, saturating, for ExactFloat.
	lo  []uint64
	hi  []int64
	abs []uint64
	has []bool // MIN, MAX
	iv  []int64
	sv  []string
	// distinct is CountDistinct's per-group sets (distinct.go).
	distinct distinctSets
	// part holds sums not yet added to lo and hi (fastsum.go), headroom
	// what may still be added to any of them without overflow: every
	// |part[g]| is at most partLimit - headroom.
	part     []int64
	headroom uint64
	mem      *account // the worker's
}

// grow makes room for n groups. Capacity doubles: append's growth of a
// quarter for large slices copied each of the eight a million-group GROUP
// BY keeps many times over.
func (a *accum) grow(n int) {
	if n <= a.n {
		return
	}
	a.n = n
	if n > a.c {
		old := a.c
		a.c = max(2*a.c, n, 64)
		per := a.groupBytes()
		a.mem.grow(int64(a.c) * per) // the old slices are live until copied
		defer a.mem.shrink(int64(old) * per)
	}
	c := a.c
	if a.nulls != nil {
		a.nulls = growZeroed(a.nulls, n, c)
	}
	switch a.agg.Func {
	case Sum, Avg:
		a.part = growZeroed(a.part, n, c)
		if a.lo != nil {
			a.lo = growZeroed(a.lo, n, c)
			a.hi = growZeroed(a.hi, n, c)
		}
		if a.agg.ExactFloat {
			a.abs = growZeroed(a.abs, n, c)
		}
	case Min, Max:
		a.has = growZeroed(a.has, n, c)
		if a.agg.Arg.Type().Kind == String {
			a.sv = growZeroed(a.sv, n, c) // the one state the collector scans
		} else {
			a.iv = growZeroed(a.iv, n, c)
		}
	case CountDistinct:
		a.distinct.counts = growZeroed(a.distinct.counts, n, c)
		if a.agg.Arg.Type().Kind == String {
			a.distinct.strs = growZeroed(a.distinct.strs, n, c)
		}
	}
}

// groupBytes is what the per-group slices a.grow keeps take for each
// group.
func (a *accum) groupBytes() int64 {
	var n int64
	if a.nulls != nil {
		n += 8
	}
	switch a.agg.Func {
	case Sum, Avg:
		n += 8 // part
		if a.lo != nil {
			n += 16
		}
		if a.agg.ExactFloat {
			n += 8
		}
	case Min, Max:
		n++ // has
		if a.agg.Arg.Type().Kind == String {
			n += int64(unsafe.Sizeof(""))
		} else {
			n += 8
		}
	case CountDistinct:
		n += 8
		if a.agg.Arg.Type().Kind == String {
			n += int64(unsafe.Sizeof(map[string]struct{}(nil)))
		}
	}
	return n
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

// addNulls counts k NULL arguments of group g.
func (a *accum) addNulls(g int32, k int64) {
	if a.nulls == nil {
		a.mem.grow(int64(a.c) * 8)
		a.nulls = make([]int64, a.n, a.c)
	}
	a.nulls[g] += k
}

// nullsOf is group g's count of NULL arguments.
func (a *accum) nullsOf(g int32) int64 {
	if a.nulls == nil {
		return 0
	}
	return a.nulls[g]
}

// wide makes the 128-bit sums.
func (a *accum) wide() {
	if a.lo == nil {
		a.mem.grow(int64(a.c) * 16)
		a.lo = make([]uint64, a.n, a.c)
		a.hi = make([]int64, a.n, a.c)
	}
}

// addSum adds v to group g's 128-bit sum.
func (a *accum) addSum(g int32, v int64) {
	a.add128(g, v>>63, uint64(v))
	if a.agg.ExactFloat {
		a.addAbs(g, absU(v))
	}
}

func (a *accum) add128(g int32, hi int64, lo uint64) {
	a.wide()
	sum, carry := bits.Add64(a.lo[g], lo, 0)
	a.lo[g] = sum
	a.hi[g] += hi + int64(carry)
}

func (a *accum) addAbs(g int32, v uint64) {
	s := a.abs[g] + v
	if s < a.abs[g] {
		s = ^uint64(0)
	}
	a.abs[g] = s
}

// sum is group g's exact sum, hi:lo.
func (a *accum) sum(g int32) (hi int64, lo uint64) {
	if a.lo != nil {
		hi, lo = a.hi[g], a.lo[g]
	}
	if v := a.part[g]; v != 0 {
		var carry uint64
		lo, carry = bits.Add64(lo, uint64(v), 0)
		hi += v>>63 + int64(carry)
	}
	return hi, lo
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
				a.addNulls(g, 1)
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
				a.addNulls(g, 1)
			}
		}
	}
	switch a.agg.Func {
	case Sum, Avg:
		if a.addSums(gids, vals, null, v.bits) {
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

// merge adds o's state into a's, o's group g being a's remap[g].
func (a *accum) merge(o *accum, remap []int32) {
	if o.agg.Func == CountDistinct {
		a.mergeDistinct(o, remap)
		return
	}
	if o.nulls != nil {
		for og, g := range remap {
			if v := o.nulls[og]; v != 0 {
				a.addNulls(g, v)
			}
		}
	}
	switch o.agg.Func {
	case Sum, Avg:
		// Partial sums add up exactly while the magnitudes both may have
		// reached stay below partLimit.
		if used := partLimit - o.headroom; o.lo == nil && !o.agg.ExactFloat && used <= a.headroom {
			a.headroom -= used
			for og, g := range remap {
				a.part[g] += o.part[og]
			}
			return
		}
		for og, g := range remap {
			hi, lo := o.sum(int32(og))
			a.add128(g, hi, lo)
			if o.abs != nil {
				a.addAbs(g, o.abs[og])
			}
		}
	case Min, Max:
		for og, g := range remap {
			if !o.has[og] {
				continue
			}
			switch {
			case !a.has[g]:
				a.has[g] = true
				if a.sv != nil {
					a.sv[g] = o.sv[og]
				} else {
					a.iv[g] = o.iv[og]
				}
			case a.sv != nil:
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
}

// maxExactFloat is 2^53: integers of smaller magnitude are exact float64s.
const maxExactFloat = 1 << 53

func (a *accum) result(g int32, rows int64) (AggValue, error) {
	count := rows - a.nullsOf(g)
	switch a.agg.Func {
	case CountStar, Count:
		return AggValue{Count: count}, nil
	case CountDistinct:
		return AggValue{Count: a.distinct.counts[g]}, nil
	case Sum, Avg:
		if count == 0 {
			return AggValue{Null: true}, nil
		}
		if a.agg.ExactFloat && a.abs[g] >= maxExactFloat {
			return AggValue{}, ErrInexact
		}
		return AggValue{Count: count, Sum: int128(a.sum(g))}, nil
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

package vector

import (
	"fmt"
	"math/bits"
)

// Summing is most of a grouped aggregation's work (TPC-H Q1 sums five
// values per row). Exact sums are 128-bit, which costs a carry per value;
// instead a batch without NULLs is added into plain int64 partial sums
// whenever a bound on its values proves that no partial sum can overflow,
// and the partial sums move into the 128-bit ones before they could.

// partLimit bounds the magnitude of every partial sum: below 2^63.
const partLimit = 1 << 62

// addAccum adds the accumulator of aggregate a, sharing one with an
// earlier SUM or AVG of the same argument: both need the same sum and
// count.
func (w *worker) addAccum(a Agg) {
	if a.Func == Sum || a.Func == Avg {
		key := fmt.Sprintf("%#v", a.Arg)
		for i, o := range w.plan.Aggs[:len(w.accs)] {
			if (o.Func == Sum || o.Func == Avg) && o.ExactFloat == a.ExactFloat && fmt.Sprintf("%#v", o.Arg) == key {
				w.accs = append(w.accs, w.accs[i])
				return
			}
		}
	}
	w.own = append(w.own, len(w.accs))
	acc := &accum{agg: a, headroom: partLimit, mem: w.mem}
	acc.distinct.nums.mem = w.mem
	w.accs = append(w.accs, acc)
}

// countRows counts the selected rows of each group, once for every
// aggregate (each counts only its NULLs).
func (w *worker) countRows(gids []int32) {
	rows := w.rows
	for _, g := range gids {
		rows[g]++
	}
}

// flush moves the partial sums into the 128-bit sums.
func (a *accum) flush() {
	for g, v := range a.part {
		if v != 0 {
			a.addSum(int32(g), v)
			a.part[g] = 0
		}
	}
	a.headroom = partLimit
}

// addSums adds vals, but those null marks (nil: none), to the partial sums
// of their groups, or reports false, having done nothing, when it cannot
// prove the partial sums stay exact (or ExactFloat needs every value's
// magnitude). known is the values' numVec.bits: the bound when the kernel
// that computed them gave one.
func (a *accum) addSums(gids []int32, vals []int64, null []bool, known int) bool {
	if a.agg.ExactFloat || len(vals) == 0 {
		return false
	}
	// Every |v| < 2^width, so the batch adds less than n·2^width to the
	// magnitude of any partial sum.
	width := known - 1
	if known == 0 || null != nil {
		// A NULL row's value is whatever its slot held: bound it too.
		width = magnitude(vals)
	}
	if width+bits.Len(uint(len(vals))) > 61 {
		return false
	}
	need := uint64(len(vals)) << width
	if need > a.headroom {
		a.flush()
	}
	a.headroom -= need
	part := a.part
	if null != nil {
		for i, g := range gids[:len(vals)] {
			if !null[i] {
				part[g] += vals[i]
			}
		}
		return true
	}
	if len(part) == 1 {
		var s int64
		for _, v := range vals {
			s += v
		}
		part[0] += s
		return true
	}
	gids = gids[:len(vals)]
	for i, g := range gids {
		part[g] += vals[i]
	}
	return true
}

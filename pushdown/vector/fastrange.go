package vector

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// A lower and an upper bound on one column among the conjuncts of a WHERE
// clause (TPC-H Q6's date range and discount BETWEEN) are tested together
// in one loop over the column's values, with one unsigned comparison.

// ranges compiles the conjunction e with each column's first lower and
// upper constant bounds tested as one range, or reports false when no
// column has both.
func (c *compiler) ranges(e And) (filterFn, bool) {
	var conj []Expr
	var flatten func(x Expr)
	flatten = func(x Expr) {
		if a, ok := x.(And); ok {
			flatten(a.L)
			flatten(a.R)
			return
		}
		conj = append(conj, x)
	}
	flatten(e)
	type bound struct {
		at int // conjunct index, -1: none
		k  int64
	}
	lows, highs := map[string]bound{}, map[string]bound{}
	cols := map[string]Column{}
	for i, x := range conj {
		cmp, ok := x.(Compare)
		if !ok {
			continue
		}
		col, k, op, ok := columnVsConst(cmp)
		if !ok {
			continue
		}
		cols[col.Name] = col
		switch op {
		case GE, GT:
			if op == GT {
				if k == math.MaxInt64 {
					continue
				}
				k++
			}
			if _, seen := lows[col.Name]; !seen {
				lows[col.Name] = bound{i, k}
			}
		case LE, LT:
			if op == LT {
				if k == math.MinInt64 {
					continue
				}
				k--
			}
			if _, seen := highs[col.Name]; !seen {
				highs[col.Name] = bound{i, k}
			}
		}
	}
	// Each range takes the place of its first conjunct; the other goes.
	parts := make([]filterFn, len(conj))
	found := false
	for name, lo := range lows {
		hi, ok := highs[name]
		if !ok {
			continue
		}
		found = true
		first, second := min(lo.at, hi.at), max(lo.at, hi.at)
		f, err := c.rangeFilter(cols[name], lo.k, hi.k)
		if err != nil {
			return nil, false
		}
		parts[first] = f
		conj[second] = nil
	}
	if !found {
		return nil, false
	}
	var chain []filterFn
	for i, x := range conj {
		switch {
		case parts[i] != nil:
			chain = append(chain, parts[i])
		case x != nil:
			f, err := c.filter(x)
			if err != nil {
				return nil, false
			}
			chain = append(chain, f)
		}
	}
	return func(b *batch, sel []int32) ([]int32, error) {
		for _, f := range chain {
			var err error
			if sel, err = f(b, sel); err != nil || len(sel) == 0 {
				return sel, err
			}
		}
		return sel, nil
	}, true
}

// rangeFilter keeps the rows whose column value v has lo <= v <= hi;
// batches whose column is not a plain integer array test the two bounds
// (at the column's scale) the generic way.
func (c *compiler) rangeFilter(col Column, lo, hi int64) (filterFn, error) {
	slot := c.cols.add(col.Name)
	low, err := c.filter(Compare{Op: GE, L: col, R: Const{T: col.T, I: lo}})
	if err != nil {
		return nil, err
	}
	high, err := c.filter(Compare{Op: LE, L: col, R: Const{T: col.T, I: hi}})
	if err != nil {
		return nil, err
	}
	bounds := closedRange{lo, hi}
	var buf []int32
	return func(b *batch, sel []int32) ([]int32, error) {
		if out, ok := narrowInts(b.cols[slot], &buf, sel, bounds, within[int64], within[int32], within[arrow.Date32]); ok {
			return out, nil
		}
		s, err := low(b, sel)
		if err != nil || len(s) == 0 {
			return s, err
		}
		return high(b, s)
	}, nil
}

// closedRange is the values v with lo <= v <= hi.
type closedRange struct{ lo, hi int64 }

// within writes to dst the rows of sel whose value is in the range and
// returns how many.
func within[T ints](dst, sel []int32, vals []T, r closedRange) int {
	lo, hi := r.lo, r.hi
	if lo > hi {
		return 0
	}
	n := 0
	dst = dst[:len(sel)]
	width := uint64(hi) - uint64(lo)
	for _, r := range sel {
		dst[n] = r
		if uint64(int64(vals[r]))-uint64(lo) <= width {
			n++
		}
	}
	return n
}

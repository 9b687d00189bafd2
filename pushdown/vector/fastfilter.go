package vector

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// A WHERE conjunct comparing a column with a constant (all of TPC-H Q1's
// and Q6's) narrows the selection in one loop over the column's values:
// no copy of the selected values, no constant vector, no boolean vector.

type filterFn = func(b *batch, sel []int32) ([]int32, error)

// fuse returns the one-loop filter of e when e compares a numeric column
// with a constant, else generic. Batches whose column is not a plain
// integer array (Arrow decimals from iceberg-go's reader) use generic.
func (c *compiler) fuse(e Expr, generic filterFn) filterFn {
	cmp, ok := e.(Compare)
	if !ok {
		return generic
	}
	col, k, op, ok := columnVsConst(cmp)
	if !ok {
		return generic
	}
	slot := c.cols.add(col.Name)
	args := cmpConst{op, k}
	var buf []int32
	return func(b *batch, sel []int32) ([]int32, error) {
		if out, ok := narrowInts(b.cols[slot], &buf, sel, args, keep[int64], keep[int32], keep[arrow.Date32]); ok {
			return out, nil
		}
		return generic(b, sel)
	}
}

// columnVsConst reads e as "column op k" with k at the column's scale,
// turning "k op column" around.
func columnVsConst(e Compare) (Column, int64, CmpOp, bool) {
	col, isCol := e.L.(Column)
	k, isConst := e.R.(Const)
	op := e.Op
	if !isCol || !isConst {
		col, isCol = e.R.(Column)
		k, isConst = e.L.(Const)
		op = flip(op)
	}
	if !isCol || !isConst || k.Null || !col.T.numeric() || !k.T.numeric() {
		return Column{}, 0, 0, false
	}
	if col.T.Kind == Date || k.T.Kind == Date {
		if col.T.Kind != k.T.Kind {
			return Column{}, 0, 0, false
		}
		return col, k.I, op, true
	}
	if k.T.Scale > col.T.Scale || col.T.Scale < 0 {
		return Column{}, 0, 0, false
	}
	v, ok := rescale(k.I, col.T.Scale-k.T.Scale)
	if !ok {
		return Column{}, 0, 0, false
	}
	return col, v, op, true
}

// flip is the comparison with its operands swapped.
func flip(op CmpOp) CmpOp {
	switch op {
	case LT:
		return GT
	case LE:
		return GE
	case GT:
		return LT
	case GE:
		return LE
	}
	return op
}

// cmpConst is a comparison with a constant: value op k.
type cmpConst struct {
	op CmpOp
	k  int64
}

// keep writes to dst the rows of sel whose value compares true with the
// constant and returns how many. Each operator has its own loop, so that
// no row tests the operator.
func keep[T ints](dst, sel []int32, vals []T, c cmpConst) int {
	op, k := c.op, c.k
	n := 0
	dst = dst[:len(sel)]
	switch op {
	case EQ:
		for _, r := range sel {
			dst[n] = r
			if int64(vals[r]) == k {
				n++
			}
		}
	case NE:
		for _, r := range sel {
			dst[n] = r
			if int64(vals[r]) != k {
				n++
			}
		}
	case LT:
		for _, r := range sel {
			dst[n] = r
			if int64(vals[r]) < k {
				n++
			}
		}
	case LE:
		for _, r := range sel {
			dst[n] = r
			if int64(vals[r]) <= k {
				n++
			}
		}
	case GT:
		for _, r := range sel {
			dst[n] = r
			if int64(vals[r]) > k {
				n++
			}
		}
	default:
		for _, r := range sel {
			dst[n] = r
			if int64(vals[r]) >= k {
				n++
			}
		}
	}
	return n
}

// dropNulls removes the rows where arr is NULL, in place.
func dropNulls(arr arrow.Array, sel []int32) []int32 {
	n := 0
	for _, r := range sel {
		if arr.IsValid(int(r)) {
			sel[n] = r
			n++
		}
	}
	return sel[:n]
}

package vector

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ints are the value types of the integer columns the one-loop filters
// read: Int64 (BIGINT, decimals of up to 18 digits), Int32 and Date32.
type ints interface{ ~int32 | ~int64 }

// narrowInts narrows sel, into *buf (grown as needed), to the rows of
// arr that a kernel keeps given args, then drops the NULL rows, whose slots
// hold arbitrary values the kernel tested like any other. The kernel is
// given once for each value type so that each runs its own loop: the type
// is switched on once a batch, never a row. ok is false when arr is not a
// plain integer array, for the caller to filter the generic way.
func narrowInts[A any](arr arrow.Array, buf *[]int32, sel []int32, args A,
	int64s func(dst, sel []int32, vals []int64, args A) int,
	int32s func(dst, sel []int32, vals []int32, args A) int,
	dates func(dst, sel []int32, vals []arrow.Date32, args A) int,
) (out []int32, ok bool) {
	*buf = grow(*buf, len(sel))
	var n int
	switch a := arr.(type) {
	case *array.Int64:
		n = int64s(*buf, sel, a.Int64Values(), args)
	case *array.Int32:
		n = int32s(*buf, sel, a.Int32Values(), args)
	case *array.Date32:
		n = dates(*buf, sel, a.Date32Values(), args)
	default:
		return nil, false
	}
	out = (*buf)[:n]
	if arr.NullN() > 0 {
		out = dropNulls(arr, out)
	}
	return out, true
}

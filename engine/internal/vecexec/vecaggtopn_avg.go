package vecexec

import (
	"cmp"
	"math"
	"math/big"
	"math/bits"

	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown/vector"
)

// An ORDER BY over an AVG orders by the rounded value the row path
// compares: MySQL's AVG of an exact argument is a DECIMAL rounded half
// away from zero to its scale (sqlval/exactagg.go), so two groups whose averages
// differ only past that scale tie, and the next sort key decides between
// them as on the row path. The TopN computes that rounded value once per
// group, as an integer at the result's scale (128-bit arithmetic when the
// sum fits in 64 bits, math/big otherwise), and compares integers: no
// decimal is built for a group it does not keep. An AVG without the
// exact wrapper (a float64) is ordered as a computed key is
// (vecaggtopn_computed.go).

// averaged says output o is an AVG whose rounded value the TopN computes.
func averaged(o vecOutput) bool {
	if o.key >= 0 || o.fn != vector.Avg {
		return false
	}
	return o.exact != nil && o.exact.Avg
}

// roundedAvg is the AVG of v as the row path's value orders: Val.I the
// result's unscaled integer, or Sum when it needs more than 64 bits.
func roundedAvg(o vecOutput, v vector.AggValue) vector.AggValue {
	if v.Null || v.Count == 0 {
		return vector.AggValue{Null: true}
	}
	shift := int64(o.exact.Typ.Scale()) - int64(o.scale)
	if v.Sum.IsInt64() && shift >= 0 && shift <= 18 {
		if q, ok := roundedQuo64(v.Sum.Int64(), Pow10[shift], v.Count); ok {
			return vector.AggValue{Val: vector.Value{I: q}}
		}
	}
	return vector.AggValue{Sum: sqlval.RoundedQuo(v.Sum, shift, v.Count)}
}

var Pow10 = func() (p [19]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// roundedQuo64 is sum*mul/n rounded half away from zero, when it fits.
func roundedQuo64(sum int64, mul uint64, n int64) (int64, bool) {
	mag := uint64(sum)
	if sum < 0 {
		mag = -mag
	}
	hi, lo := bits.Mul64(mag, mul)
	den := uint64(n)
	if hi >= den {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, den)
	if r >= den-r { // 2r >= den without overflow
		q++
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	if sum < 0 {
		return -int64(q), true
	}
	return int64(q), true
}

// compareRounded orders two roundedAvg values, NULL first.
func compareRounded(x, y vector.AggValue) int {
	if x.Null || y.Null {
		return compareNulls(x.Null, y.Null)
	}
	if x.Sum == nil && y.Sum == nil {
		return cmp.Compare(x.Val.I, y.Val.I)
	}
	return bigOf(x).Cmp(bigOf(y))
}

func bigOf(v vector.AggValue) *big.Int {
	if v.Sum != nil {
		return v.Sum
	}
	return big.NewInt(v.Val.I)
}

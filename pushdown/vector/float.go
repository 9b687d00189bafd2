package vector

import "math"

// A DOUBLE or FLOAT column (kind Float) is read as an int64 that orders as
// the number does: a GROUP BY key, COUNT, COUNT(DISTINCT), MIN and MAX
// need nothing else, and run as on integers. Nothing computes on floats
// here: the row path adds them one by one in its own order, and a sum in
// another order can differ in its last bits, so SUM, AVG, arithmetic and
// comparisons of floats are declined (Check). -0 and NaN stop the run
// with ErrInexact: -0 is equal to 0 but shown apart from it, so no one
// int64 can stand for both.

// FloatKey is f as an int64 ordered as the floats are; false for -0 and
// NaN.
func FloatKey(f float64) (int64, bool) {
	if f == 0 && math.Signbit(f) || math.IsNaN(f) {
		return 0, false
	}
	b := int64(math.Float64bits(f))
	if b < 0 {
		b ^= math.MaxInt64 // negative: larger magnitudes below smaller ones
	}
	return b, true
}

// FloatOf is the float a kind Float value stands for.
func FloatOf(v Value) float64 {
	b := v.I
	if b < 0 {
		b ^= math.MaxInt64
	}
	return math.Float64frombits(uint64(b))
}

// readFloats writes the keys of the selected rows of a float column.
func readFloats[F float32 | float64](out []int64, vals []F, sel []int32, arr interface{ IsNull(int) bool }) error {
	for i, r := range sel {
		k, ok := FloatKey(float64(vals[r]))
		if !ok {
			if arr.IsNull(int(r)) {
				continue
			}
			return ErrInexact
		}
		out[i] = k
	}
	return nil
}

package pushdown

import (
	"math"
	"math/big"
	"testing"
)

func TestBigEndianInt64(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 127, -128, 255, 256, -256, 1 << 40, -(1 << 40), 99999999999999, -99999999999999,
		math.MaxInt64, math.MinInt64, 123456789012345678, -123456789012345678} {
		for n := 1; n <= 8; n++ {
			if n < 8 && (v >= 1<<(8*n-1) || v < -(1<<(8*n-1))) {
				continue // does not fit n bytes
			}
			full := make([]byte, 8)
			big.NewInt(0).SetUint64(uint64(v)).FillBytes(full)
			enc := full[8-n:]
			// Alone (capacity n: the byte loop) and followed by other
			// bytes (capacity past 8: the one load).
			padded := append(append([]byte{}, enc...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
			for _, b := range [][]byte{enc[:n:n], padded[:n]} {
				if got := bigEndianInt64(b); got != v {
					t.Errorf("%d in %d bytes (cap %d): got %d", v, n, cap(b), got)
				}
			}
		}
	}
}

package engine

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// TestDecimal128Value checks the 64-bit fast path against the math/big one
// on both sides of the int64 boundary.
func TestDecimal128Value(t *testing.T) {
	big := decimal128.FromI64(math.MaxInt64).Add(decimal128.FromI64(1))
	for _, n := range []decimal128.Num{
		decimal128.FromI64(0), decimal128.FromI64(12345), decimal128.FromI64(-12345),
		decimal128.FromI64(math.MaxInt64), decimal128.FromI64(math.MinInt64),
		big, big.Negate(), decimal128.FromI64(math.MinInt64).Sub(decimal128.FromI64(1)),
	} {
		for _, scale := range []int32{0, 2, 10} {
			got, want := sqlval.Decimal128Value(n, scale), sqlval.DecimalValue(n.BigInt(), scale)
			if got.Cmp(want) != 0 || got.Exponent != want.Exponent {
				t.Errorf("%s scale %d: %s, want %s", n.BigInt(), scale, got, want)
			}
		}
	}
}

// TestDate32Value checks the direct conversion against Arrow's own.
func TestDate32Value(t *testing.T) {
	for _, d := range []arrow.Date32{0, 1, -1, 9204, -719162, 2932896} {
		if got, want := sqlval.Date32Value(d), d.ToTime(); !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("day %d: %v, want %v", d, got, want)
		}
	}
}

// TestRowBlocks checks that rows carved from one block are independent.
func TestRowBlocks(t *testing.T) {
	b := sqlval.RowBlocks{Width: 2}
	rows := make([][]any, 0, 3*sqlval.RowBlockRows)
	for i := range 3 * sqlval.RowBlockRows {
		r := b.Next()
		if len(r) != 2 || cap(r) != 2 {
			t.Fatalf("row %d: len %d cap %d, want 2 and 2", i, len(r), cap(r))
		}
		r[0], r[1] = i, -i
		rows = append(rows, r)
	}
	_ = append(rows[0], "grown") // must not reach rows[1]
	for i, r := range rows {
		if r[0] != i || r[1] != -i {
			t.Fatalf("row %d holds %v", i, r)
		}
	}
}

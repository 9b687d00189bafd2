package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TestDirectValueMatchesText checks the in-process driver's direct
// conversion of integers and decimals against the conversion through
// their MySQL text: the same value where it applies, and a refusal
// (ok false) for values out of the column's range.
func TestDirectValueMatchesText(t *testing.T) {
	ctx := sql.NewEmptyContext()
	rng := rand.New(rand.NewPCG(3, 5))
	check := func(typ sql.Type, v any) {
		t.Helper()
		got, ok := directValue(typ, v)
		if !ok {
			return
		}
		want, err := textValue(ctx, typ, v)
		if err != nil {
			t.Fatalf("%s %v: direct %v, text fails: %v", typ, v, got, err)
		}
		if got != want {
			t.Errorf("%s %v: direct %#v, text %#v", typ, v, got, want)
		}
	}
	for _, typ := range []sql.Type{types.Int8, types.Int16, types.Int24, types.Int32, types.Int64} {
		for _, v := range []any{int8(-128), int8(127), int16(-32768), int32(math.MinInt32), int32(math.MaxInt32), int64(math.MinInt64), int64(math.MaxInt64), int64(8388607), int64(-8388609), int64(0)} {
			check(typ, v)
		}
	}
	if _, ok := directValue(types.Int32, int64(math.MaxInt32)+1); ok {
		t.Error("an INT column's value beyond 32 bits was converted directly")
	}
	for _, ps := range [][2]uint8{{15, 2}, {18, 4}, {4, 2}, {18, 0}, {10, 10}, {38, 6}, {1, 0}} {
		typ := types.MustCreateDecimalType(ps[0], ps[1])
		for range 2000 {
			c := rng.Int64N(int64(math.Pow10(int(min(ps[0], 18)))))
			if rng.IntN(4) == 0 {
				c %= 1000
			}
			check(typ, apd.New(c, -int32(ps[1])))
			check(typ, apd.New(-c, -int32(ps[1])))
		}
		negZero := apd.New(0, -int32(ps[1]))
		negZero.Negative = true
		check(typ, negZero)
	}
	if _, ok := directValue(types.MustCreateDecimalType(4, 2), apd.New(12345, -2)); ok {
		t.Error("a value beyond the column's precision was converted directly")
	}
}

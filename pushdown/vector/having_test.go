package vector

import (
	"context"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestHavingBounds checks that a plan's HAVING bounds keep exactly the
// groups whose exact aggregate compares to the bound as asked, with sums
// past int64 (128-bit) and bounds that are not integers or not int64s.
func TestHavingBounds(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	rows := [][2]any{
		{1, int64(math.MaxInt64)}, {1, int64(math.MaxInt64)},
		{2, int64(math.MinInt64)}, {2, int64(math.MinInt64)},
		{3, 10000}, {3, 10000}, {3, 10000},
		{4, nil},
		{5, -1},
	}
	batch := func() arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for _, r := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(r[0].(int)))
			switch v := r[1].(type) {
			case nil:
				b.Field(1).(*array.Int64Builder).AppendNull()
			case int:
				b.Field(1).(*array.Int64Builder).Append(int64(v))
			case int64:
				b.Field(1).(*array.Int64Builder).Append(v)
			}
		}
		return b.NewRecordBatch()
	}
	num := Type{Kind: Int}
	rat := func(s string) *big.Rat {
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("bad rational %s", s)
		}
		return r
	}
	// Both workers get the batch: every group's rows twice. Group 1 sums
	// to 4·MaxInt64, group 2 to 4·MinInt64, group 3 to 60000 over 6 rows,
	// group 4 is NULL over 2 rows, group 5 sums to -2.
	maxI64x4 := new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(4)).String()
	for _, c := range []struct {
		name   string
		bounds []Bound
		want   []int64 // the groups kept
	}{
		{"none", nil, []int64{1, 2, 3, 4, 5}},
		{"sum > 60000", []Bound{{Agg: 1, Op: GT, Value: rat("60000")}}, []int64{1, 4}},
		{"sum >= 60000", []Bound{{Agg: 1, Op: GE, Value: rat("60000")}}, []int64{1, 3, 4}},
		{"sum > 59999.5", []Bound{{Agg: 1, Op: GT, Value: rat("119999/2")}}, []int64{1, 3, 4}},
		{"sum < -0.5", []Bound{{Agg: 1, Op: LT, Value: rat("-1/2")}}, []int64{2, 4, 5}},
		{"sum <= -2", []Bound{{Agg: 1, Op: LE, Value: rat("-2")}}, []int64{2, 4, 5}},
		{"sum <= -2.5", []Bound{{Agg: 1, Op: LE, Value: rat("-5/2")}}, []int64{2, 4}},
		{"sum = 60000", []Bound{{Agg: 1, Op: EQ, Value: rat("60000")}}, []int64{3, 4}},
		{"sum = 0.5", []Bound{{Agg: 1, Op: EQ, Value: rat("1/2")}}, []int64{4}},
		{"sum <> 0.5", []Bound{{Agg: 1, Op: NE, Value: rat("1/2")}}, []int64{1, 2, 3, 4, 5}},
		{"sum <> 60000", []Bound{{Agg: 1, Op: NE, Value: rat("60000")}}, []int64{1, 2, 4, 5}},
		{"sum = 4·MaxInt64", []Bound{{Agg: 1, Op: EQ, Value: rat(maxI64x4)}}, []int64{1, 4}},
		{"sum > MaxInt64", []Bound{{Agg: 1, Op: GT, Value: rat("9223372036854775807")}}, []int64{1, 4}},
		{"sum < MinInt64", []Bound{{Agg: 1, Op: LT, Value: rat("-9223372036854775808")}}, []int64{2, 4}},
		{"sum >= 2^70", []Bound{{Agg: 1, Op: GE, Value: rat("1180591620717411303424")}}, []int64{4}},
		{"sum > -2^70", []Bound{{Agg: 1, Op: GT, Value: rat("-1180591620717411303424")}}, []int64{1, 2, 3, 4, 5}},
		{"count(*) >= 3", []Bound{{Agg: 0, Op: GE, Value: rat("3")}}, []int64{1, 2, 3}},
		{"count(v) < 1", []Bound{{Agg: 2, Op: LT, Value: rat("1")}}, []int64{4}},
		{"count(*) > 2^70", []Bound{{Agg: 0, Op: GT, Value: rat("1180591620717411303424")}}, nil},
		{"count(*) > 2 and sum < 0", []Bound{{Agg: 0, Op: GT, Value: rat("2")}, {Agg: 1, Op: LT, Value: rat("0")}}, []int64{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &Plan{
				Keys:   []Expr{Column{Name: "k", T: num}},
				Aggs:   []Agg{{Func: CountStar}, {Func: Sum, Arg: Column{Name: "v", T: num}}, {Func: Count, Arg: Column{Name: "v", T: num}}},
				Having: c.bounds,
			}
			// Two workers, each with every group: the bounds apply to
			// the merged sums.
			src := &records{recs: []arrow.RecordBatch{batch(), batch()}}
			groups, err := Run(context.Background(), src, p, 2)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, g := range groups {
				got = append(got, g.Keys[0].I)
				if g.Keys[0].I == 1 {
					want := new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(4))
					if g.Aggs[1].Sum.Cmp(want) != 0 {
						t.Errorf("group 1 sums to %s, want %s", g.Aggs[1].Sum, want)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("kept groups %v, want %v", got, c.want)
			}
		})
	}
}

package vector

import (
	"context"
	"errors"
	"io"
	"math"
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestCmpScaled(t *testing.T) {
	for _, c := range []struct {
		a      int64
		sa     int32
		b      int64
		sb     int32
		expect int
	}{
		{5, 2, 5, 2, 0},
		{5, 2, 50, 3, 0},     // 0.05 = 0.050
		{1255, 3, 125, 2, 1}, // 1.255 > 1.25
		{math.MaxInt64, 0, 1, 30, 1},
		{math.MinInt64, 0, -1, 0, -1},
		{-1, 0, math.MinInt64, 18, 1}, // -1 > -9.2
		{1, 0, math.MaxInt64, 18, -1}, // 1 < 9.2
		{0, 0, 0, 38, 0},
	} {
		want := c.expect
		if got := cmpScaled(c.a, c.sa, c.b, c.sb); got != want {
			t.Errorf("cmpScaled(%d e-%d, %d e-%d) = %d, want %d", c.a, c.sa, c.b, c.sb, got, want)
		}
	}
}

func TestDecimalOpOverflow(t *testing.T) {
	out := make([]int64, 1)
	for _, c := range []struct {
		op   ArithOp
		x, y int64
		ok   bool
	}{
		{'+', math.MaxInt64, 1, false},
		{'+', math.MaxInt64, -1, true},
		{'-', math.MinInt64, 1, false},
		{'-', -1, math.MinInt64, true},
		{'*', 1 << 32, 1 << 31, false},
		{'*', -(1 << 31), 1 << 32, true},
	} {
		err := decimalOp(c.op, out, []int64{c.x}, []int64{c.y}, nil)
		if (err == nil) != c.ok {
			t.Errorf("%d %c %d: error %v, want ok=%v", c.x, c.op, c.y, err, c.ok)
		}
		// A NULL row never overflows.
		if err := decimalOp(c.op, out, []int64{c.x}, []int64{c.y}, []bool{true}); err != nil {
			t.Errorf("%d %c %d on a NULL row: %v", c.x, c.op, c.y, err)
		}
	}
}

type records struct{ recs []arrow.RecordBatch }

func (r *records) Next() (arrow.RecordBatch, error) {
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	return rec, nil
}

// testBatch has k (string, NULL every 5th row), v (decimal(10,2)).
func testBatch(n int, big bool) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		if i%5 == 0 {
			b.Field(0).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append([]string{"a", "b"}[i%2])
		}
		v := decimal128.FromI64(int64(i*10 - 7))
		if big && i == n-1 {
			v = decimal128.New(1, 0) // 2^64: beyond int64
		}
		b.Field(1).(*array.Decimal128Builder).Append(v)
	}
	return b.NewRecordBatch()
}

func TestRunGroupsAndInexact(t *testing.T) {
	dec := Type{Kind: Decimal, Scale: 2}
	p := &Plan{
		Filter: Compare{Op: GE, L: Column{Name: "v", T: dec}, R: Const{T: Type{Kind: Int}, I: 0}},
		Keys:   []Expr{Column{Name: "k", T: Type{Kind: String}}},
		Aggs: []Agg{
			{Func: CountStar},
			{Func: Sum, Arg: Column{Name: "v", T: dec}},
			{Func: Max, Arg: Arith{Op: '*', L: Column{Name: "v", T: dec}, R: Column{Name: "v", T: dec}}},
		},
	}
	src := &records{recs: []arrow.RecordBatch{testBatch(10, false), testBatch(10, false)}}
	groups, err := Run(context.Background(), src, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Rows 1..9 pass (v = 3, 13, ..., 83); keys: NULL at 5, "a" at even, "b" at odd.
	want := map[string][3]int64{"": {2, 86, 43 * 43}, "a": {8, 2 * (13 + 33 + 53 + 73), 73 * 73}, "b": {8, 2 * (3 + 23 + 63 + 83), 83 * 83}}
	if len(groups) != len(want) {
		t.Fatalf("%d groups, want %d", len(groups), len(want))
	}
	for _, g := range groups {
		key := g.Keys[0].S
		if g.Keys[0].Null {
			key = ""
		}
		w := want[key]
		if g.Aggs[0].Count != w[0] || g.Aggs[1].Sum.Cmp(big.NewInt(w[1])) != 0 || g.Aggs[2].Val.I != w[2] {
			t.Errorf("group %q: count %d sum %s max %d, want %v", key, g.Aggs[0].Count, g.Aggs[1].Sum, g.Aggs[2].Val.I, w)
		}
	}
	// A decimal beyond int64 stops the run: the caller must answer otherwise.
	src = &records{recs: []arrow.RecordBatch{testBatch(10, true)}}
	if _, err := Run(context.Background(), src, p, 2); !errors.Is(err, ErrInexact) {
		t.Errorf("a decimal beyond int64 gave %v, want ErrInexact", err)
	}
}

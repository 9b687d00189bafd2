package vector

import (
	"context"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// int64Batch is the native reader's shape: x and y decimal(18,2) as Int64
// (NULL where nullX/nullY say), d a Date32, g an Int32 group key.
func int64Batch(xs, ys []int64, nullX, nullY []bool) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "g", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range xs {
		if nullX != nil && nullX[i] {
			b.Field(0).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(xs[i])
		}
		if nullY != nil && nullY[i] {
			b.Field(1).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(ys[i])
		}
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(i % 100))
		b.Field(3).(*array.Int32Builder).Append(int32(i % 3))
	}
	return b.NewRecordBatch()
}

var (
	dec2 = Type{Kind: Decimal, Scale: 2}
	colX = Column{Name: "x", T: dec2}
	colY = Column{Name: "y", T: dec2}
	colD = Column{Name: "d", T: Type{Kind: Date}}
	colG = Column{Name: "g", T: Type{Kind: Int}}
)

// TestFastKernelsMatchReference checks the bound-checked kernels (plain
// int64 partial sums, constant operands, one-loop filters) against sums
// computed with big.Int, over values large enough that the partial sums
// must move to 128 bits between batches and the 128-bit sums leave int64.
func TestFastKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const batches, n = 80, 4000
	var recs []arrow.RecordBatch
	type want struct {
		count, rows             int64
		sumX, sumXY, sum1mY, sx *big.Int
	}
	ref := map[int64]*want{}
	for bi := range batches {
		xs, ys := make([]int64, n), make([]int64, n)
		nullX := make([]bool, n)
		for i := range xs {
			xs[i] = 1<<49 - 1 - rng.Int64N(1000) // all near 2^49: the sums leave int64
			ys[i] = rng.Int64N(200) - 100
			nullX[i] = bi%4 == 1 && i%7 == 0
		}
		if bi%4 != 1 {
			nullX = nil
		}
		recs = append(recs, int64Batch(xs, ys, nullX, nil))
		for i := range xs {
			// WHERE d >= 10 AND 90 > d AND y < 0.5 (scale 0 constant
			// against a scale 2 column after flipping).
			d := int64(i % 100)
			if d < 10 || d >= 90 || ys[i] >= 50 {
				continue
			}
			g := int64(i % 3)
			w := ref[g]
			if w == nil {
				w = &want{sumX: new(big.Int), sumXY: new(big.Int), sum1mY: new(big.Int), sx: new(big.Int)}
				ref[g] = w
			}
			w.rows++
			w.sum1mY.Add(w.sum1mY, big.NewInt(100-ys[i]))
			if nullX != nil && nullX[i] {
				continue
			}
			w.count++
			w.sumX.Add(w.sumX, big.NewInt(xs[i]))
			w.sumXY.Add(w.sumXY, new(big.Int).Mul(big.NewInt(xs[i]), big.NewInt(ys[i])))
		}
	}
	p := &Plan{
		Filter: And{
			L: And{
				L: Compare{Op: GE, L: colD, R: Const{T: colD.T, I: 10}},
				R: Compare{Op: GT, L: Const{T: colD.T, I: 90}, R: colD},
			},
			R: Compare{Op: LT, L: colY, R: Const{T: Type{Kind: Decimal, Scale: 1}, I: 5}},
		},
		Keys: []Expr{colG},
		Aggs: []Agg{
			{Func: CountStar},
			{Func: Sum, Arg: colX},
			{Func: Avg, Arg: colX}, // shares SUM(x)'s accumulator
			{Func: Sum, Arg: Arith{Op: '*', L: colX, R: colY}},
			{Func: Sum, Arg: Arith{Op: '-', L: Const{T: Type{Kind: Int}, I: 1}, R: colY}},
			{Func: Count, Arg: colX},
		},
	}
	groups, err := Run(context.Background(), &records{recs: recs}, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != len(ref) {
		t.Fatalf("%d groups, want %d", len(groups), len(ref))
	}
	for _, g := range groups {
		w := ref[g.Keys[0].I]
		a := g.Aggs
		if a[0].Count != w.rows || a[1].Sum.Cmp(w.sumX) != 0 || a[1].Count != w.count || a[2].Sum.Cmp(w.sumX) != 0 ||
			a[2].Count != w.count || a[3].Sum.Cmp(w.sumXY) != 0 || a[4].Sum.Cmp(w.sum1mY) != 0 || a[5].Count != w.count {
			t.Errorf("group %d: rows %d sum %s/%d avg %s/%d sumxy %s sum1-y %s count %d; want %d %s/%d %s %s",
				g.Keys[0].I, a[0].Count, a[1].Sum, a[1].Count, a[2].Sum, a[2].Count, a[3].Sum, a[4].Sum, a[5].Count,
				w.rows, w.sumX, w.count, w.sumXY, w.sum1mY)
		}
	}
}

// TestFastArithOverflow: a batch whose bound fails goes through the
// checked kernel, which is exact when every value fits and stops the run
// when one does not.
func TestFastArithOverflow(t *testing.T) {
	prod := Arith{Op: '*', L: colX, R: colY}
	run := func(xs, ys []int64, arg Expr) ([]Group, error) {
		p := &Plan{Aggs: []Agg{{Func: Sum, Arg: arg}}}
		return Run(context.Background(), &records{recs: []arrow.RecordBatch{int64Batch(xs, ys, nil, nil)}}, p, 1)
	}
	// Magnitudes 2^40 and 2^40 overall, but each product small.
	g, err := run([]int64{1 << 40, 3}, []int64{2, 1 << 40}, prod)
	if err != nil || g[0].Aggs[0].Sum.Cmp(big.NewInt(5<<40)) != 0 {
		t.Errorf("mixed magnitudes: %v %v, want %d", g, err, int64(5<<40))
	}
	if _, err := run([]int64{1 << 40}, []int64{1 << 40}, prod); !errors.Is(err, ErrInexact) {
		t.Errorf("2^80: %v, want ErrInexact", err)
	}
	minus := Arith{Op: '-', L: Const{T: Type{Kind: Decimal, Scale: 0}, I: math.MinInt64 / 100}, R: colY}
	if _, err := run([]int64{0}, []int64{1000}, minus); !errors.Is(err, ErrInexact) {
		t.Errorf("MinInt64/100 - 10: %v, want ErrInexact", err)
	}
	// Sums of values near 2^62 leave int64 and stay exact.
	g, err = run([]int64{math.MaxInt64, math.MaxInt64, math.MinInt64}, []int64{0, 0, 0}, colX)
	if want := big.NewInt(math.MaxInt64 - 1); err != nil || g[0].Aggs[0].Sum.Cmp(want) != 0 {
		t.Errorf("sum near int64's limits: %v %v, want %s", g, err, want)
	}
}

// TestFusedFilterNulls: a column compared with a constant keeps no NULL row.
func TestFusedFilterNulls(t *testing.T) {
	xs := []int64{5, 6, 7, 8}
	p := &Plan{
		Filter: Compare{Op: NE, L: colX, R: Const{T: dec2, I: 6}},
		Aggs:   []Agg{{Func: CountStar}},
	}
	rec := int64Batch(xs, xs, []bool{false, false, true, false}, nil)
	g, err := Run(context.Background(), &records{recs: []arrow.RecordBatch{rec}}, p, 1)
	if err != nil || g[0].Aggs[0].Count != 2 {
		t.Errorf("x <> 0.06 over 0.05, 0.06, NULL, 0.08: %v %v, want 2 rows", g, err)
	}
}

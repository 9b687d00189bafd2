package vector

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkFusedFilters times the one-loop filters of fastfilter.go and
// fastrange.go over one batch of 8192 rows of each integer column shape
// (Int64 decimals, Int32, Date32), and over the Int64 column with NULLs.
func BenchmarkFusedFilters(b *testing.B) {
	const n = 8192
	rng := rand.New(rand.NewPCG(3, 4))
	xs, ys := make([]int64, n), make([]int64, n)
	nullX := make([]bool, n)
	for i := range xs {
		xs[i], ys[i] = rng.Int64N(10_000), rng.Int64N(200)-100
		nullX[i] = i%5 == 0
	}
	for _, bc := range []struct {
		name     string
		filter   Expr
		nullable bool // the column has NULLs to time without and with
	}{
		{"int64 lt", Compare{Op: LT, L: colX, R: Const{T: dec2, I: 5000}}, true},
		{"int32 eq", Compare{Op: EQ, L: colG, R: Const{T: colG.T, I: 1}}, false},
		{"date32 ge", Compare{Op: GE, L: colD, R: Const{T: colD.T, I: 30}}, false},
		{"int64 range", And{
			L: Compare{Op: GE, L: colX, R: Const{T: dec2, I: 2000}},
			R: Compare{Op: LT, L: colX, R: Const{T: dec2, I: 7000}},
		}, true},
		{"date32 range", And{
			L: Compare{Op: GE, L: colD, R: Const{T: colD.T, I: 10}},
			R: Compare{Op: LE, L: colD, R: Const{T: colD.T, I: 60}},
		}, false},
	} {
		for _, nulls := range []bool{false, true} {
			if nulls && !bc.nullable {
				continue
			}
			name := bc.name
			var rec = int64Batch(xs, ys, nil, nil)
			if nulls {
				name += " nulls"
				rec = int64Batch(xs, ys, nullX, nil)
			}
			b.Run(name, func(b *testing.B) {
				c := &compiler{cols: &columns{}}
				f, err := c.filter(bc.filter)
				if err != nil {
					b.Fatal(err)
				}
				var bt batch
				if err := c.cols.bind(&bt, rec); err != nil {
					b.Fatal(err)
				}
				sel := make([]int32, n)
				for i := range sel {
					sel[i] = int32(i)
				}
				kept := 0
				for b.Loop() {
					out, err := f(&bt, sel)
					if err != nil {
						b.Fatal(err)
					}
					kept = len(out)
				}
				if kept == 0 || kept == n {
					b.Fatalf("kept %d of %d rows: the benchmark would not time a filter", kept, n)
				}
			})
		}
	}
}

package vector

import (
	"context"
	"io"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// orderBatches is TPC-H lineitem's l_orderkey and l_quantity at the given
// number of orders: runs of 1 to 7 rows per increasing key, quantities 1
// to 50 as DECIMAL(15,2), in batches of 64Ki rows.
func orderBatches(orders int) []arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(3, 4))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "q", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}},
	}, nil)
	var recs []arrow.RecordBatch
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	qb := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 15, Scale: 2})
	n := 0
	flush := func() {
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{kb.NewArray(), qb.NewArray()}, int64(n)))
		n = 0
	}
	for o := range orders {
		for range 1 + rng.IntN(7) {
			kb.Append(int64(o)*4 + 1)
			qb.Append(decimal128.FromI64(100 * (1 + rng.Int64N(50))))
			if n++; n == 1<<16 {
				flush()
			}
		}
	}
	if n > 0 {
		flush()
	}
	return recs
}

// splitRecords hands each worker a contiguous share of the batches, as the
// native reader hands each its own files.
type splitRecords struct{ recs []arrow.RecordBatch }

func (s *splitRecords) Next() (arrow.RecordBatch, error) { panic("split only") }

func (s *splitRecords) Split(n int) []func() (arrow.RecordBatch, error) {
	var parts []func() (arrow.RecordBatch, error)
	per := (len(s.recs) + n - 1) / n
	for i := range n {
		lo, hi := min(i*per, len(s.recs)), min((i+1)*per, len(s.recs))
		part := s.recs[lo:hi]
		parts = append(parts, func() (arrow.RecordBatch, error) {
			if len(part) == 0 {
				return nil, io.EOF
			}
			rec := part[0]
			part = part[1:]
			rec.Retain()
			return rec, nil
		})
	}
	return parts
}

// BenchmarkHighCardinalityGroupBy is TPC-H Q18's inner query at SF 0.25
// (375,000 groups) on two workers: GROUP BY l_orderkey HAVING
// SUM(l_quantity) > 300, and COUNT(DISTINCT l_orderkey); each also asking
// a Reserve that counts (reserved), as a server with a memory limit does.
func BenchmarkHighCardinalityGroupBy(b *testing.B) {
	recs := orderBatches(375_000)
	k := Column{Name: "k", T: Type{Kind: Int}}
	q := Column{Name: "q", T: Type{Kind: Decimal, Scale: 2}}
	for _, c := range []struct {
		name string
		plan *Plan
	}{
		{"having", &Plan{Keys: []Expr{k}, Aggs: []Agg{{Func: Sum, Arg: q}},
			Having: []Bound{{Agg: 0, Op: GT, Value: big.NewRat(30000, 1)}}}},
		{"count_distinct", &Plan{Aggs: []Agg{{Func: CountDistinct, Arg: k}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), &splitRecords{recs: recs}, c.plan, 2); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"_reserved", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r testReserve
				if _, err := RunWithin(context.Background(), &splitRecords{recs: recs}, c.plan, 2, r.reserve); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

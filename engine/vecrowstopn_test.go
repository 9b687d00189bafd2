package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/icesql/icesql/engine/internal/vecexec"
)

// TestBestKeysKeepsTheFirstN checks the narrowing of an ORDER BY ...
// LIMIT's rows against a full sort: over batches of random keys with
// NULLs and ties, in both directions, every row that can be among the
// first n (its key at most the n-th key, NULLs first ascending) is kept,
// and few others are.
func TestBestKeysKeepsTheFirstN(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, desc := range []bool{false, true} {
		for _, n := range []int{1, 3, 10} {
			for _, span := range []int64{5, 1000, 1 << 40} {
				const batches, rows = 8, 1000
				b := &vecexec.BestKeys{N: n, Desc: desc}
				var all []*int64 // every key, nil for NULL
				kept := map[int]bool{}
				for k := range batches {
					bld := array.NewInt64Builder(memory.DefaultAllocator)
					for range rows {
						if rng.IntN(20) == 0 {
							bld.AppendNull()
							all = append(all, nil)
							continue
						}
						v := rng.Int64N(span) - span/2
						bld.Append(v)
						all = append(all, &v)
					}
					arr := bld.NewArray()
					keep := make([]int32, rows)
					for i := range keep {
						keep[i] = int32(i)
					}
					for _, r := range b.Narrow([]arrow.Array{arr}, keep) {
						kept[k*rows+int(r)] = true
					}
					arr.Release()
				}
				// sortKey orders as the TopN does: NULL smallest.
				order := func(a, b *int64) int {
					switch {
					case a == nil && b == nil:
						return 0
					case a == nil:
						return -1
					case b == nil:
						return 1
					}
					c := 0
					if *a < *b {
						c = -1
					} else if *a > *b {
						c = 1
					}
					return c
				}
				sorted := slices.Clone(all)
				slices.SortFunc(sorted, func(a, b *int64) int {
					if desc {
						return order(b, a)
					}
					return order(a, b)
				})
				nth := sorted[n-1]
				for i, k := range all {
					c := order(k, nth)
					if desc {
						c = -c
					}
					if c <= 0 && !kept[i] {
						t.Fatalf("desc=%v n=%d span=%d: row %d (key %v) is among the first %d but was not kept", desc, n, span, i, deref(k), n)
					}
				}
				if span == 1<<40 && len(kept) > batches*rows/10 {
					t.Errorf("desc=%v n=%d: kept %d of %d rows", desc, n, len(kept), batches*rows)
				}
			}
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

package vector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// testReserve counts what a run reserves and refuses past limit.
type testReserve struct {
	limit      int64 // 0: none
	held, peak atomic.Int64
}

var errTestBudget = errors.New("over the test's budget")

func (r *testReserve) reserve(n int64) error {
	h := r.held.Add(n)
	if n > 0 && r.limit > 0 && h > r.limit {
		r.held.Add(-n)
		return errTestBudget
	}
	for p := r.peak.Load(); h > p && !r.peak.CompareAndSwap(p, h); p = r.peak.Load() {
	}
	return nil
}

// TestRunWithinReserve checks that a run asks before its state grows: on
// each path (one integer key, string keys, COUNT(DISTINCT) of numbers and
// of strings) a run of 100,000 groups reserves at least what its result
// and tables take, a budget of half its peak stops it with the budget's
// error, on one worker and on three, and a budget of its peak lets it
// finish with the same groups.
func TestRunWithinReserve(t *testing.T) {
	const batches, rows = 10, 10_000
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	var recs []arrow.RecordBatch
	for b := range batches {
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range rows {
			k := int64(b*rows + i)
			kb.Append(k * 7)
			sb.Append(fmt.Sprintf("key %08d", k))
		}
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{kb.NewArray(), sb.NewArray()}, rows))
	}
	src := func() Source { // each run releases the batches it read
		for _, rec := range recs {
			rec.Retain()
		}
		return &records{recs: slices.Clone(recs)}
	}
	k := Column{Name: "k", T: Type{Kind: Int}}
	s := Column{Name: "s", T: Type{Kind: String}}
	for _, c := range []struct {
		name   string
		plan   *Plan
		groups int
	}{
		{"integer key", &Plan{Keys: []Expr{k}, Aggs: []Agg{{Func: CountStar}, {Func: Sum, Arg: k}}}, batches * rows},
		{"string keys", &Plan{Keys: []Expr{s, k}, Aggs: []Agg{{Func: CountStar}, {Func: Max, Arg: s}}}, batches * rows},
		{"COUNT(DISTINCT) of numbers", &Plan{Aggs: []Agg{{Func: CountDistinct, Arg: k}}}, 1},
		{"COUNT(DISTINCT) of strings", &Plan{Aggs: []Agg{{Func: CountDistinct, Arg: s}}}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r testReserve
			groups, err := RunWithin(context.Background(), src(), c.plan, 1, r.reserve)
			if err != nil {
				t.Fatal(err)
			}
			if len(groups) != c.groups {
				t.Fatalf("%d groups, want %d", len(groups), c.groups)
			}
			peak := r.peak.Load()
			// 100,000 keys or values take at least 16 bytes each in a
			// table or the result.
			if min := int64(batches * rows * 16); peak < min {
				t.Errorf("peak reserved %d bytes, want at least %d", peak, min)
			}
			for _, workers := range []int{1, 3} {
				half := testReserve{limit: peak / 2}
				if _, err := RunWithin(context.Background(), src(), c.plan, workers, half.reserve); !errors.Is(err, errTestBudget) {
					t.Errorf("%d workers under half the peak (%d bytes): %v, want the budget's error", workers, peak/2, err)
				}
			}
			full := testReserve{limit: peak}
			again, err := RunWithin(context.Background(), src(), c.plan, 1, full.reserve)
			if err != nil || len(again) != c.groups {
				t.Errorf("under the peak (%d bytes): %d groups, %v; want %d groups", peak, len(again), err, c.groups)
			}
		})
	}
}

// TestPartialWithinReserve checks that Partials (a join's GROUP BY, fed
// batch by batch) ask their shared Reserve too: under half of what they
// reserve unbounded, adding, merging or the groups fail with the
// Reserve's error.
func TestPartialWithinReserve(t *testing.T) {
	x := Column{Name: "x", T: Type{Kind: Int}} // int64Batch's
	p := &Plan{Keys: []Expr{x}, Aggs: []Agg{{Func: CountStar}, {Func: Sum, Arg: x}}}
	run := func(r *testReserve) error {
		parts := make([]*Partial, 2)
		for i := range parts {
			var err error
			if parts[i], err = NewPartialWithin(p, r.reserve); err != nil {
				return err
			}
		}
		for b := range 20 {
			xs := make([]int64, 5_000)
			for i := range xs {
				xs[i] = int64(b*len(xs) + i)
			}
			rec := int64Batch(xs, xs, nil, nil)
			err := parts[b%2].Add(rec)
			rec.Release()
			if err != nil {
				return err
			}
		}
		if err := parts[0].Merge(parts[1]); err != nil {
			return err
		}
		groups, err := parts[0].Groups()
		if err == nil && len(groups) != 100_000 {
			return fmt.Errorf("%d groups, want 100000", len(groups))
		}
		return err
	}
	var full testReserve
	if err := run(&full); err != nil {
		t.Fatal(err)
	}
	half := testReserve{limit: full.peak.Load() / 2}
	if err := run(&half); !errors.Is(err, errTestBudget) {
		t.Errorf("under half the peak (%d bytes): %v, want the budget's error", half.limit, err)
	}
}

package vector

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestIntKeyGroups checks the GROUP BY on one integer key (intkeys.go)
// against a map: thousands of groups (the accumulators grow many times),
// runs of one key, NULL keys, string and integer MIN/MAX, and workers'
// groups merged.
func TestIntKeyGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type want struct {
		rows, sum  int64
		minS, maxS string
		minX       int64
	}
	ref := map[string]*want{} // by key text, "NULL" for the NULL key
	var recs []arrow.RecordBatch
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	for range 12 {
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		xb := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := 0; i < 1000; {
			run := 1 + rng.IntN(4) // rows of one key in a row
			k, null := rng.Int64N(5000)-2500, rng.IntN(50) == 0
			for j := 0; j < run && i < 1000; j, i = j+1, i+1 {
				x, s := rng.Int64N(1000)-500, fmt.Sprintf("s%03d", rng.IntN(1000))
				key := fmt.Sprint(k)
				if null {
					kb.AppendNull()
					key = "NULL"
				} else {
					kb.Append(k)
				}
				xb.Append(x)
				sb.Append(s)
				w := ref[key]
				if w == nil {
					w = &want{minS: s, maxS: s, minX: x}
					ref[key] = w
				}
				w.rows++
				w.sum += x
				w.minS, w.maxS, w.minX = min(w.minS, s), max(w.maxS, s), min(w.minX, x)
			}
		}
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{kb.NewArray(), xb.NewArray(), sb.NewArray()}, 1000))
	}
	k := Column{Name: "k", T: Type{Kind: Int}}
	x := Column{Name: "x", T: Type{Kind: Int}}
	s := Column{Name: "s", T: Type{Kind: String}}
	p := &Plan{Keys: []Expr{k}, Aggs: []Agg{{Func: CountStar}, {Func: Sum, Arg: x}, {Func: Min, Arg: s}, {Func: Max, Arg: s}, {Func: Min, Arg: x}}}
	groups, err := Run(context.Background(), &records{recs: recs}, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != len(ref) {
		t.Fatalf("%d groups, want %d", len(groups), len(ref))
	}
	for _, g := range groups {
		key := fmt.Sprint(g.Keys[0].I)
		if g.Keys[0].Null {
			key = "NULL"
		}
		w, a := ref[key], g.Aggs
		if w == nil {
			t.Fatalf("group %s is not in the data", key)
		}
		if a[0].Count != w.rows || a[1].Sum.Int64() != w.sum || a[2].Val.S != w.minS || a[3].Val.S != w.maxS || a[4].Val.I != w.minX {
			t.Errorf("group %s: %d %s %q %q %d, want %d %d %q %q %d", key, a[0].Count, a[1].Sum, a[2].Val.S, a[3].Val.S, a[4].Val.I,
				w.rows, w.sum, w.minS, w.maxS, w.minX)
		}
	}
}

// TestIntTableGroupsAndDistinct checks the open-addressing tables
// (inttable.go, distinct.go) against maps: 50,000 groups with keys spread
// over int64 (negative, multiples of 8 and of 2^32, which share blocks and
// hash inputs), COUNT(DISTINCT) with NULLs, SUMs of a nullable argument
// both within the partial sums and past int64, on three workers whose
// groups overlap.
func TestIntTableGroupsAndDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	keys := make([]int64, 50_000)
	for i := range keys {
		switch i % 4 {
		case 0:
			keys[i] = int64(i) * 8
		case 1:
			keys[i] = int64(i) << 32
		case 2:
			keys[i] = -int64(i)
		default:
			keys[i] = rng.Int64()
		}
	}
	type want struct {
		rows, nonNull int64
		sum, big      big.Int
		distinct      map[int64]bool
	}
	ref := map[int64]*want{}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	var recs []arrow.RecordBatch
	for range 30 {
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		xb := array.NewInt64Builder(memory.DefaultAllocator)
		yb := array.NewInt64Builder(memory.DefaultAllocator)
		for range 10_000 {
			k := keys[rng.IntN(len(keys))]
			w := ref[k]
			if w == nil {
				w = &want{distinct: map[int64]bool{}}
				ref[k] = w
			}
			w.rows++
			kb.Append(k)
			if rng.IntN(7) == 0 {
				xb.AppendNull()
			} else {
				x := rng.Int64N(20) - 10
				xb.Append(x)
				w.nonNull++
				w.sum.Add(&w.sum, big.NewInt(x))
				w.distinct[x] = true
			}
			y := math.MaxInt64 - rng.Int64N(3) // sums past int64
			yb.Append(y)
			w.big.Add(&w.big, big.NewInt(y))
		}
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{kb.NewArray(), xb.NewArray(), yb.NewArray()}, 10_000))
	}
	num := Type{Kind: Int}
	k, x, y := Column{Name: "k", T: num}, Column{Name: "x", T: num}, Column{Name: "y", T: num}
	p := &Plan{Keys: []Expr{k}, Aggs: []Agg{{Func: CountStar}, {Func: Sum, Arg: x}, {Func: CountDistinct, Arg: x}, {Func: Sum, Arg: y}, {Func: Count, Arg: x}}}
	groups, err := Run(context.Background(), &records{recs: recs}, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != len(ref) {
		t.Fatalf("%d groups, want %d", len(groups), len(ref))
	}
	for _, g := range groups {
		w, a := ref[g.Keys[0].I], g.Aggs
		if w == nil {
			t.Fatalf("group %d is not in the data", g.Keys[0].I)
		}
		sumOK := w.nonNull == 0 && a[1].Null || w.nonNull > 0 && a[1].Sum.Cmp(&w.sum) == 0
		if a[0].Count != w.rows || !sumOK || a[2].Count != int64(len(w.distinct)) || a[3].Sum.Cmp(&w.big) != 0 || a[4].Count != w.nonNull {
			t.Fatalf("group %d: %d %v %d %s %d, want %d %s %d %s %d", g.Keys[0].I, a[0].Count, a[1].Sum, a[2].Count, a[3].Sum, a[4].Count,
				w.rows, &w.sum, len(w.distinct), &w.big, w.nonNull)
		}
	}
	// COUNT(DISTINCT) of the key itself, one group: every key once.
	p = &Plan{Aggs: []Agg{{Func: CountDistinct, Arg: k}}}
	groups, err = Run(context.Background(), &records{recs: recs}, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := groups[0].Aggs[0].Count; got != int64(len(ref)) {
		t.Errorf("COUNT(DISTINCT k) = %d, want %d", got, len(ref))
	}
}

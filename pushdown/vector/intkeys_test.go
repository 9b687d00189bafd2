package vector

import (
	"context"
	"fmt"
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

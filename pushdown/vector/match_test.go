package vector

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestMatchDictionaries checks that a Match tests values, not dictionary
// indices: batches with different dictionaries (the same index naming
// different strings), plain string batches, and NULLs.
func TestMatchDictionaries(t *testing.T) {
	col := Column{Name: "s", T: Type{Kind: String}}
	tested := 0
	m := Match{E: col, Test: func(s string) bool { tested++; return strings.HasPrefix(s, "a") }}
	if err := Check(m, true); err != nil {
		t.Fatal(err)
	}
	sel, err := NewSelector(m)
	if err != nil {
		t.Fatal(err)
	}
	dictBatch := func(dict []string, idx []int32, valid []bool) arrow.RecordBatch {
		d := array.NewStringBuilder(memory.DefaultAllocator)
		d.AppendValues(dict, nil)
		b := array.NewInt32Builder(memory.DefaultAllocator)
		b.AppendValues(idx, valid)
		typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		arr := array.NewDictionaryArray(typ, b.NewArray(), d.NewArray())
		return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: typ, Nullable: true}}, nil), []arrow.Array{arr}, int64(len(idx)))
	}
	cases := []struct {
		rec  arrow.RecordBatch
		want []int32
	}{
		{dictBatch([]string{"ax", "bx", "ay"}, []int32{0, 1, 2, 0, 1, 0}, []bool{true, true, true, false, true, true}), []int32{0, 2, 5}},
		// A new dictionary: index 0 is now "bz"; "ax" was met before.
		{dictBatch([]string{"bz", "az", "ax"}, []int32{0, 1, 1, 0, 2}, nil), []int32{1, 2, 4}},
	}
	plain := array.NewStringBuilder(memory.DefaultAllocator)
	plain.AppendValues([]string{"a", "", "b", "abc"}, []bool{true, true, false, true})
	cases = append(cases, struct {
		rec  arrow.RecordBatch
		want []int32
	}{array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil), []arrow.Array{plain.NewArray()}, 4), []int32{0, 3}})
	for i, c := range cases {
		got, err := sel.Select(c.rec)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("batch %d: kept %v, want %v", i, got, c.want)
		}
	}
	// Each distinct value was tested once: 3, then 2 ("ax" is
	// remembered from the first dictionary), then 3 plain values.
	if tested != 8 {
		t.Errorf("tested %d values, want 8", tested)
	}
}

// TestMatchStopsRememberingUniqueValues: plain values that never repeat
// stop being remembered after memoTrial lookups (each is tested once
// either way, and every verdict stays right); values that repeat keep
// being remembered, each tested once.
func TestMatchStopsRememberingUniqueValues(t *testing.T) {
	run := func(values []string) (kept []int32, tested int) {
		m := Match{E: Column{Name: "s", T: Type{Kind: String}}, Test: func(s string) bool { tested++; return strings.HasSuffix(s, "7") }}
		sel, err := NewSelector(m)
		if err != nil {
			t.Fatal(err)
		}
		for start := 0; start < len(values); start += 1000 {
			b := array.NewStringBuilder(memory.DefaultAllocator)
			part := values[start:min(start+1000, len(values))]
			b.AppendValues(part, nil)
			rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil), []arrow.Array{b.NewArray()}, int64(len(part)))
			got, err := sel.Select(rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range got {
				kept = append(kept, int32(start)+i)
			}
		}
		return kept, tested
	}
	const n = 3 * memoTrial
	unique := make([]string, n)
	repeated := make([]string, n)
	var want []int32
	for i := range unique {
		unique[i] = strconv.Itoa(i)
		repeated[i] = strconv.Itoa(i % 100)
		if i%10 == 7 {
			want = append(want, int32(i))
		}
	}
	if kept, tested := run(unique); !slices.Equal(kept, want) || tested != n {
		t.Errorf("unique values: kept %d rows (want %d), tested %d values (want %d)", len(kept), len(want), tested, n)
	}
	if kept, tested := run(repeated); !slices.Equal(kept, want) || tested != 100 {
		t.Errorf("repeated values: kept %d rows (want %d), tested %d values (want 100)", len(kept), len(want), tested)
	}
}

package pushdown

import (
	"encoding/binary"
	"testing"

	"github.com/apache/iceberg-go"
)

// TestFileTestJudgesBounds checks the compiled file tests on files of known
// statistics: which filters rule a file out and which keep it.
func TestFileTestJudgesBounds(t *testing.T) {
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Float64})
	long := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	// ids 10..20, s "b".."d", two rows of five NULL in s; x only NULLs.
	file := fileStats{
		values: map[int]int64{1: 5, 2: 5, 3: 5},
		nulls:  map[int]int64{1: 0, 2: 2, 3: 5},
		lower:  map[int][]byte{1: long(10), 2: []byte("b")},
		upper:  map[int][]byte{1: long(20), 2: []byte("d")},
	}
	ref := func(name string) iceberg.UnboundTerm { return iceberg.Reference(name) }
	cases := []struct {
		name   string
		filter iceberg.BooleanExpression
		keep   bool
	}{
		{"id = 15", iceberg.EqualTo(ref("id"), int64(15)), true},
		{"id = 21", iceberg.EqualTo(ref("id"), int64(21)), false},
		{"id = 10", iceberg.EqualTo(ref("id"), int64(10)), true},
		{"id < 10", iceberg.LessThan(ref("id"), int64(10)), false},
		{"id <= 10", iceberg.LessThanEqual(ref("id"), int64(10)), true},
		{"id > 20", iceberg.GreaterThan(ref("id"), int64(20)), false},
		{"id >= 20", iceberg.GreaterThanEqual(ref("id"), int64(20)), true},
		{"id IN (1, 30)", iceberg.IsIn(ref("id"), int64(1), int64(30)), false},
		{"id IN (1, 12)", iceberg.IsIn(ref("id"), int64(1), int64(12)), true},
		{"id NOT IN (15)", iceberg.NotIn(ref("id"), int64(15)), true},
		{"id <> 15", iceberg.NotEqualTo(ref("id"), int64(15)), true},
		{"id IS NULL (none)", iceberg.IsNull(ref("id")), false},
		{"s IS NULL", iceberg.IsNull(ref("s")), true},
		{"x IS NOT NULL (only NULLs)", iceberg.NotNull(ref("x")), false},
		{"x = 1.5 (only NULLs)", iceberg.EqualTo(ref("x"), 1.5), false},
		{"s = 'c'", iceberg.EqualTo(ref("s"), "c"), true},
		{"s = 'e'", iceberg.EqualTo(ref("s"), "e"), false},
		{"s STARTS WITH 'a'", iceberg.StartsWith(ref("s"), "a"), false},
		{"s STARTS WITH 'c'", iceberg.StartsWith(ref("s"), "c"), true},
		{"id = 21 OR s = 'c'", iceberg.NewOr(iceberg.EqualTo(ref("id"), int64(21)), iceberg.EqualTo(ref("s"), "c")), true},
		{"id = 15 AND s = 'e'", iceberg.NewAnd(iceberg.EqualTo(ref("id"), int64(15)), iceberg.EqualTo(ref("s"), "e")), false},
		{"NOT (id = 15)", iceberg.NewNot(iceberg.EqualTo(ref("id"), int64(15))), true},
		{"NOT (id <> 21)", iceberg.NewNot(iceberg.NotEqualTo(ref("id"), int64(21))), false},
	}
	for _, c := range cases {
		noNot, err := iceberg.RewriteNotExpr(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		bound, err := iceberg.BindExpr(schema, noNot, true)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := compileFileTest(bound)(&file); got != c.keep {
			t.Errorf("%s: keeps the file %v, want %v", c.name, got, c.keep)
		}
	}
	// A file without bounds for the column is kept by every comparison.
	bare := fileStats{values: map[int]int64{1: 5}, nulls: map[int]int64{1: 0}}
	bound, err := iceberg.BindExpr(schema, iceberg.EqualTo(ref("id"), int64(99)), true)
	if err != nil {
		t.Fatal(err)
	}
	if !compileFileTest(bound)(&bare) {
		t.Error("a file without bounds was ruled out")
	}
}

package pushdown

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// decodedOf is a decoded file of n int64 rows under path.
func decodedOf(t *testing.T, path string, n int) *decodedFile {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	return &decodedFile{key: decodedKey{path: path, size: int64(n)}, batches: []arrow.RecordBatch{rec}, rows: int64(n), bytes: batchBytes(rec)}
}

// TestFileCacheBound: the cache holds at most its bound, the least
// recently used files leaving first, refuses a file larger than an eighth
// of it, and empties itself under memory pressure.
func TestFileCacheBound(t *testing.T) {
	one := decodedOf(t, "probe", 1000).bytes // 8,000 bytes of values and a validity buffer
	c := newFileCache(10 * one)
	for i := range 12 {
		c.put(decodedOf(t, fmt.Sprint("f", i), 1000))
		if i == 2 {
			// f0 used again: it outlives f1, f2 and the later ones until the bound.
			if got := c.get(decodedKey{path: "f0", size: 1000}); got == nil {
				t.Fatal("f0 not kept")
			} else {
				releaseBatches(got)
			}
		}
	}
	if c.size > c.limit || len(c.byKey) != 10 {
		t.Fatalf("%d files, %d bytes held, bound %d", len(c.byKey), c.size, c.limit)
	}
	for path, kept := range map[string]bool{"f0": true, "f1": false, "f2": false, "f3": true, "f11": true} {
		got := c.get(decodedKey{path: path, size: 1000})
		if (got != nil) != kept {
			t.Errorf("%s kept %v, want %v", path, got != nil, kept)
		}
		releaseBatches(got)
	}
	// A file past an eighth of the bound is not kept.
	c.put(decodedOf(t, "big", 2000))
	if c.get(decodedKey{path: "big", size: 2000}) != nil {
		t.Error("a file of a fifth of the bound was kept")
	}
	// Batches handed out stay valid when their file leaves.
	held := c.get(decodedKey{path: "f11", size: 1000})
	pressure := true
	c.pressure = func() bool { return pressure }
	c.put(decodedOf(t, "late", 1000))
	if len(c.byKey) != 0 || c.size != 0 {
		t.Errorf("under pressure: %d files, %d bytes held", len(c.byKey), c.size)
	}
	if v := held[0].Column(0).(*array.Int64).Value(999); v != 999 {
		t.Errorf("a batch handed out changed when its file left: %d", v)
	}
	releaseBatches(held)
	pressure = false
	c.put(decodedOf(t, "after", 1000))
	if len(c.byKey) != 1 {
		t.Errorf("after the pressure: %d files kept, want 1", len(c.byKey))
	}
}

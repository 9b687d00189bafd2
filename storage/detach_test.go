package storage

import (
	"context"
	"runtime"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestCommitsDoNotRetainOldVersions checks that the memory a table's
// metadata holds does not grow with the square of its commits: superseded
// versions must be garbage. They were not while each new snapshot pointed
// into the transaction that built it, which led back to the version before
// (about 30 MB live after 300 single-file commits, against 4 MB without).
// The bound leaves room for the newest version and whatever caches hold.
func TestCommitsDoNotRetainOldVersions(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	files := writeFile(t, tbl, 1)
	commit := func(n int) {
		for range n {
			if _, err := AppendFiles(ctx, w, ident, files, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	commit(50)
	before := live()
	commit(200)
	after := live()
	if grew := int64(after) - int64(before); grew > 6<<20 {
		t.Fatalf("live heap grew by %d MB over 200 commits", grew>>20)
	}
	runtime.KeepAlive(w)
}

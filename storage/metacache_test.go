package storage

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestCachedMetadataSeesOtherWriters checks that the parsed-metadata cache
// never hides a newer version: one committed through another handle on the
// same folder (another process), and a table dropped and re-created at the
// same location up to the same version number.
func TestCachedMetadataSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w1, w2 := openTestWarehouse(t, dir), openTestWarehouse(t, dir)
	mustCreateNamespace(t, w1, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w1.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AppendFiles(ctx, w1, ident, writeFile(t, tbl, 1), nil); err != nil {
		t.Fatal(err)
	}
	snapshots := func(w *Warehouse) int {
		t.Helper()
		tbl, err := w.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		return len(tbl.Metadata().Snapshots())
	}
	if n := snapshots(w1); n != 1 {
		t.Fatalf("w1 sees %d snapshots, want 1", n)
	}
	if _, err := AppendFiles(ctx, w2, ident, writeFile(t, tbl, 2), nil); err != nil {
		t.Fatal(err)
	}
	if n := snapshots(w1); n != 2 {
		t.Errorf("after another handle's append w1 sees %d snapshots, want 2", n)
	}

	// Re-create through w2 and bring it to the version w1 has cached (v3:
	// create, two appends), with one snapshot fewer per version.
	if err := w2.DropTable(ctx, ident); err != nil {
		t.Fatal(err)
	}
	tbl2, err := w2.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{7, 8} {
		if _, err := AppendFiles(ctx, w2, ident, writeFile(t, tbl2, id), nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := w1.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata().TableUUID() != tbl2.Metadata().TableUUID() {
		t.Errorf("w1 still sees the dropped table %s, want the re-created %s", got.Metadata().TableUUID(), tbl2.Metadata().TableUUID())
	}
}

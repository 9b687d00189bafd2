package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestWarehouseSharesBackgroundSyncs: the background syncs a warehouse
// hands out (to its S3 API) are the ones its commits wait for, so a
// failed sync of a file PUT through the S3 API refuses every later
// commit; a store that syncs each file as it closes hands out none.
func TestWarehouseSharesBackgroundSyncs(t *testing.T) {
	ctx := context.Background()
	if w := openTestWarehouse(t, t.TempDir()); w.BackgroundSyncs() != nil {
		t.Fatal("a warehouse on LocalStore{} hands out background syncs its commits do not wait for")
	}
	dir := t.TempDir()
	root, err := LocalLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWarehouse(ctx, root, NewLocalStore())
	if err != nil {
		t.Fatal(err)
	}
	mustCreateNamespace(t, w, "db")
	if _, err := w.CreateTable(ctx, table.Identifier{"db", "a"}, testSchema); err != nil {
		t.Fatal(err)
	}
	syncs := w.BackgroundSyncs()
	if syncs == nil {
		t.Fatal("a warehouse on NewLocalStore hands out no background syncs")
	}
	f, err := os.Create(filepath.Join(dir, "db", "put.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // its sync fails
	syncs.Start(f, filepath.Join(dir, "db"))
	if err := syncs.Wait(); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Wait after a failed sync: %v, want ErrSyncFailed", err)
	}
	if _, err := w.CreateTable(ctx, table.Identifier{"db", "b"}, testSchema); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("a commit after a failed background sync: %v, want ErrSyncFailed", err)
	}
}

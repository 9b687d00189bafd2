package storage

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestRebasedSnapshotIsNotOlderThanItsParent commits an append staged
// before another writer's append committed: iceberg-go's retry (on with
// commit.retry.num-retries) rebases it onto the other one keeping its first
// timestamp, and the catalog must stamp it no earlier than its new parent.
// A clean-clone run of interop/rest_writers.py found such snapshots 54 and
// 65 ms older than their parents.
func TestRebasedSnapshotIsNotOlderThanItsParent(t *testing.T) {
	ctx := context.Background()
	root, err := LocalLocation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWarehouse(ctx, root, LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"d", "t"}
	if err := w.CreateNamespace(ctx, table.Identifier{"d"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := w.CreateTable(ctx, ident, testSchema, catalog.WithProperties(iceberg.Properties{"commit.retry.num-retries": "5"}))
	if err != nil {
		t.Fatal(err)
	}
	late := tbl.NewTransaction()
	if err := addOwnFiles(ctx, tbl.Metadata(), late, []iceberg.DataFile{dataFile(t, tbl.Location()+"/data/late.parquet", 1)}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if _, err := AppendFiles(ctx, w, ident, []iceberg.DataFile{dataFile(t, tbl.Location()+"/data/first.parquet", 2)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := late.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := w.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	meta := got.Metadata()
	chain := 0
	for s := meta.CurrentSnapshot(); s != nil && s.ParentSnapshotID != nil; chain++ {
		parent := meta.SnapshotByID(*s.ParentSnapshotID)
		if s.TimestampMs < parent.TimestampMs {
			t.Errorf("snapshot %d is stamped %d ms before its parent %d", s.SnapshotID, parent.TimestampMs-s.TimestampMs, parent.SnapshotID)
		}
		s = parent
	}
	if chain != 1 || len(meta.Snapshots()) != 2 {
		t.Fatalf("want the rebased append on top of the other: %d snapshots, chain of %d parents", len(meta.Snapshots()), chain)
	}
	if log := slices.Collect(meta.SnapshotLogs()); log[1].TimestampMs < log[0].TimestampMs {
		t.Errorf("snapshot log out of order: %+v", log)
	}
}

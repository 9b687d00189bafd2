package storage

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestLostRacesLeaveNoMetadata races appends and row-level deletes from two
// warehouse handles on one folder, as two processes would, so that many
// commit attempts lose; afterwards every manifest and manifest list in the
// table's metadata folder must belong to a committed snapshot.
func TestLostRacesLeaveNoMetadata(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w1, w2 := openTestWarehouse(t, dir), openTestWarehouse(t, dir)
	mustCreateNamespace(t, w1, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w1.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	const perHandle = 4
	// Files to delete later, committed up front: one per deleting writer.
	var victims []iceberg.DataFile
	for i := range 2 * perHandle {
		victims = append(victims, writeFile(t, tbl, int64(1000+i))...)
	}
	if tbl, err = AppendFiles(ctx, w1, ident, victims, nil); err != nil {
		t.Fatal(err)
	}
	base := tbl.CurrentSnapshot().SnapshotID

	var wg sync.WaitGroup
	errs := make(chan error, 4*perHandle)
	for h, w := range []*Warehouse{w1, w2} {
		for i := range perHandle {
			files := writeFile(t, tbl, int64(h*100+i))
			victim := victims[h*perHandle+i]
			wg.Add(2)
			go func() {
				defer wg.Done()
				if _, err := AppendFiles(ctx, w, ident, files, nil); err != nil {
					errs <- fmt.Errorf("append %d/%d: %w", h, i, err)
				}
			}()
			go func() {
				defer wg.Done()
				// Deletes of different files never conflict: each retries
				// until it commits.
				d := RowDelta{Removed: []iceberg.DataFile{victim}, Validate: true, Base: &base}
				if _, err := CommitRowDelta(ctx, w, ident, d, nil); err != nil {
					errs <- fmt.Errorf("delete %d/%d: %w", h, i, err)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	final, err := w2.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(final.Metadata().Snapshots()); n != 1+4*perHandle {
		t.Fatalf("%d snapshots, want %d", n, 1+4*perHandle)
	}
	fsys, err := final.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	referenced := map[string]bool{}
	for _, s := range final.Metadata().Snapshots() {
		referenced[path.Base(s.ManifestList)] = true
		manifests, err := s.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range manifests {
			referenced[path.Base(m.FilePath())] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "db", "t", "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	avro := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".avro") {
			continue
		}
		avro++
		if !referenced[e.Name()] {
			orphans = append(orphans, e.Name())
		}
	}
	if len(orphans) > 0 {
		t.Errorf("%d of %d manifests and manifest lists belong to no snapshot, e.g. %s", len(orphans), avro, orphans[0])
	}
}

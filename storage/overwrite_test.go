package storage

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestFileChangeConflicts: a change decided on an old snapshot commits over
// appends outside what it replaces, and fails with ErrConflict when a
// concurrent writer added a file inside it or removed one of its files.
func TestFileChangeConflicts(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	old := writeFile(t, tbl, 1, 2)
	if tbl, err = AppendFiles(ctx, w, ident, old, nil); err != nil {
		t.Fatal(err)
	}
	base := tbl.CurrentSnapshot().SnapshotID
	// Another writer appends after the change read the table.
	concurrent := writeFile(t, tbl, 3)
	if _, err := AppendFiles(ctx, w, ident, concurrent, nil); err != nil {
		t.Fatal(err)
	}
	added := writeFile(t, tbl, 10)
	inside := func(iceberg.DataFile) bool { return true }

	_, err = CommitFileChange(ctx, w, ident, FileChange{Base: &base, Removed: old, Added: added, Overlaps: inside})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("overwrite racing an append into its scope: %v, want ErrConflict", err)
	}

	outside := func(iceberg.DataFile) bool { return false }
	tbl, err = CommitFileChange(ctx, w, ident, FileChange{Base: &base, Removed: old, Added: added, Overlaps: outside})
	if err != nil {
		t.Fatalf("overwrite racing an append outside its scope: %v", err)
	}
	if op := tbl.CurrentSnapshot().Summary.Operation; op != table.OpOverwrite {
		t.Errorf("operation %s, want overwrite", op)
	}
	if got := tbl.CurrentSnapshot().Summary.Properties["total-records"]; got != "2" { // 3 and 10
		t.Errorf("total-records %s, want 2", got)
	}

	// The old files are gone now: a second change of them conflicts.
	_, err = CommitFileChange(ctx, w, ident, FileChange{Base: &base, Removed: old})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("removing files another commit removed: %v, want ErrConflict", err)
	}
}

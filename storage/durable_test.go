package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestDeferredSyncsWaitAndFail checks the background syncs of a
// NewLocalStore: a file written through its IO is on disk, complete, by
// the time a commit (CreateExclusive) returns; and once a sync fails, no
// later commit is accepted, since the lost data cannot be synced again.
func TestDeferredSyncsWaitAndFail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := NewLocalStore()
	fsys := st.IO().(localIO)
	data := filepath.Join(dir, "data", "f.parquet")
	if err := fsys.WriteFile("file://"+data, []byte("rows")); err != nil {
		t.Fatal(err)
	}
	meta := "file://" + filepath.Join(dir, "metadata", "v1.metadata.json")
	if err := st.CreateExclusive(ctx, meta, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if n := len(st.syncs.pending); n != 0 {
		t.Errorf("%d syncs still running after the commit", n)
	}
	if got, err := os.ReadFile(data); err != nil || string(got) != "rows" {
		t.Errorf("data file after the commit: %q, %v", got, err)
	}

	// A sync that fails: its file is closed under it.
	f, err := os.Create(filepath.Join(dir, "data", "g.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	st.syncs.start(f)
	for i := 2; i <= 3; i++ {
		next := "file://" + filepath.Join(dir, "metadata", "v"+string(rune('0'+i))+".metadata.json")
		if err := st.CreateExclusive(ctx, next, []byte("{}")); !errors.Is(err, ErrSyncFailed) {
			t.Errorf("commit %d after a failed sync: %v, want ErrSyncFailed", i, err)
		}
		if p, _ := osPath(next); fileExists(p) {
			t.Errorf("commit %d after a failed sync created its file", i)
		}
	}
	// The zero LocalStore syncs as files close and is not affected.
	if err := (LocalStore{}).CreateExclusive(ctx, "file://"+filepath.Join(dir, "other.json"), []byte("{}")); err != nil {
		t.Errorf("a store of its own: %v", err)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestDeferredSyncOfDroppedFolder: a file whose folder is deleted while its
// background sync is pending (DROP TABLE right after a write) leaves nothing
// to make durable, and later commits go on. Before, the sync of the gone
// folder failed and every later commit of the process was refused.
func TestDeferredSyncOfDroppedFolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := NewLocalStore()
	table := filepath.Join(dir, "db", "t")
	f, err := os.Create(filepath.Join(table, "m.avro"))
	if os.IsNotExist(err) {
		if err = os.MkdirAll(table, 0o755); err == nil {
			f, err = os.Create(filepath.Join(table, "m.avro"))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(table); err != nil { // dropped before its sync runs
		t.Fatal(err)
	}
	st.syncs.start(f)
	meta := "file://" + filepath.Join(dir, "db", "u", "metadata", "v1.metadata.json")
	if err := st.CreateExclusive(ctx, meta, []byte("{}")); err != nil {
		t.Fatalf("commit after a dropped folder's sync: %v", err)
	}
}

// TestCommitSyncsFoldersAndWritesHint checks a commit through a store that
// syncs in the background: when an append returns, no sync it started is
// still running, no folder that gained a file is left unsynced, and
// version-hint.text (written while the new metadata file's folder syncs)
// already names the new version.
func TestCommitSyncsFoldersAndWritesHint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root, err := LocalLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := NewLocalStore()
	w, err := OpenWarehouse(ctx, root, st)
	if err != nil {
		t.Fatal(err)
	}
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, i), nil); err != nil {
			t.Fatal(err)
		}
		st.syncs.mu.Lock()
		pending, dirs := len(st.syncs.pending), len(st.syncs.dirs)
		st.syncs.mu.Unlock()
		if pending != 0 || dirs != 0 {
			t.Errorf("append %d returned with %d syncs running and %d folders unsynced", i, pending, dirs)
		}
		hint, err := os.ReadFile(filepath.Join(dir, "db", "t", "metadata", "version-hint.text"))
		if want := strconv.FormatInt(i+1, 10); err != nil || string(hint) != want {
			t.Errorf("version-hint.text after append %d: %q, %v; want %s", i, hint, err, want)
		}
		if !strings.HasSuffix(tbl.MetadataLocation(), "/v"+strconv.FormatInt(i+1, 10)+".metadata.json") {
			t.Errorf("append %d committed %s", i, tbl.MetadataLocation())
		}
	}
}

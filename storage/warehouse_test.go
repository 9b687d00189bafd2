package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

func openTestWarehouse(t *testing.T, dir string) *Warehouse {
	t.Helper()
	root, err := LocalLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWarehouse(context.Background(), root, LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var testSchema = iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})

func tableNamesOf(t *testing.T, w *Warehouse, ns string) []string {
	t.Helper()
	names, err := w.tableNames(context.Background(), table.Identifier{ns})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestNamespacesAndTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)

	if err := w.CreateNamespace(ctx, table.Identifier{"db"}, iceberg.Properties{"owner": "ann"}); err != nil {
		t.Fatal(err)
	}
	if err := w.CreateNamespace(ctx, table.Identifier{"db"}, nil); !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		t.Errorf("second CreateNamespace: %v, want ErrNamespaceAlreadyExists", err)
	}
	props, err := w.LoadNamespaceProperties(ctx, table.Identifier{"db"})
	if err != nil || props["owner"] != "ann" {
		t.Errorf("namespace properties = %v, %v", props, err)
	}
	if _, err := w.CreateTable(ctx, table.Identifier{"nope", "t"}, testSchema); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("CreateTable in a missing namespace: %v", err)
	}
	if _, err := w.CreateTable(ctx, table.Identifier{"db", "t"}, testSchema); err != nil {
		t.Fatal(err)
	}
	if _, err := w.CreateTable(ctx, table.Identifier{"db", "t"}, testSchema); !errors.Is(err, catalog.ErrTableAlreadyExists) {
		t.Errorf("second CreateTable: %v, want ErrTableAlreadyExists", err)
	}
	// The Hadoop layout: the first metadata version and a version hint.
	for _, f := range []string{"db/t/metadata/v1.metadata.json", "db/t/metadata/version-hint.text"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if got := tableNamesOf(t, w, "db"); !slices.Equal(got, []string{"t"}) {
		t.Errorf("tables = %v", got)
	}
	if err := w.DropTable(ctx, table.Identifier{"db", "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "db", "t")); !os.IsNotExist(err) {
		t.Errorf("dropped table folder still there: %v", err)
	}
	if err := w.DropNamespace(ctx, table.Identifier{"db"}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := w.CheckNamespaceExists(ctx, table.Identifier{"db"}); ok {
		t.Error("namespace still exists after DropNamespace")
	}
}

// TestRenameKeepsFiles renames back and forth and reuses a freed name: no
// file moves, and each name always resolves to the right table.
func TestRenameKeepsFiles(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	a, err := w.CreateTable(ctx, table.Identifier{"db", "a"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	locA := a.Location()

	b, err := w.RenameTable(ctx, table.Identifier{"db", "a"}, table.Identifier{"db", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Location() != locA {
		t.Errorf("renamed table moved from %s to %s", locA, b.Location())
	}
	if got := tableNamesOf(t, w, "db"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after rename, tables = %v, want [b]", got)
	}
	// A new table may take the old name; it gets a folder of its own.
	a2, err := w.CreateTable(ctx, table.Identifier{"db", "a"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if a2.Location() == locA {
		t.Error("new table a reuses the folder of the renamed table")
	}
	if got := tableNamesOf(t, w, "db"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("tables = %v, want [a b]", got)
	}
	if _, err := w.RenameTable(ctx, table.Identifier{"db", "b"}, table.Identifier{"db", "a"}); !errors.Is(err, catalog.ErrTableAlreadyExists) {
		t.Errorf("rename onto an existing name: %v", err)
	}
	if _, err := w.RenameTable(ctx, table.Identifier{"db", "b"}, table.Identifier{"other", "b"}); err == nil {
		t.Error("rename across namespaces succeeded")
	}
	// Dropping the new a must not expose or delete the renamed table b.
	if err := w.DropTable(ctx, table.Identifier{"db", "a"}); err != nil {
		t.Fatal(err)
	}
	if got := tableNamesOf(t, w, "db"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after dropping a, tables = %v, want [b]", got)
	}
	// Renaming b back to a makes the folder a plain Hadoop table again.
	if _, err := w.RenameTable(ctx, table.Identifier{"db", "b"}, table.Identifier{"db", "a"}); err != nil {
		t.Fatal(err)
	}
	back, err := w.LoadTable(ctx, table.Identifier{"db", "a"})
	if err != nil || back.Location() != locA {
		t.Fatalf("renamed back: %v, %v", back, err)
	}
	if got := tableNamesOf(t, w, "db"); !slices.Equal(got, []string{"a"}) {
		t.Errorf("tables = %v, want [a]", got)
	}
}

func mustCreateNamespace(t *testing.T, w *Warehouse, ns string) {
	t.Helper()
	if err := w.CreateNamespace(context.Background(), table.Identifier{ns}, nil); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes one Parquet data file holding ids.
func writeFile(t *testing.T, tbl *table.Table, ids ...int64) []iceberg.DataFile {
	t.Helper()
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	rec := b.NewRecordBatch()
	var files []iceberg.DataFile
	for f, err := range table.WriteRecords(context.Background(), tbl, schema, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }) {
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestConcurrentAppendsLoseNothing races appends from two warehouse handles
// on one folder, as two processes would (each has its own in-process
// queue), and checks every append landed exactly once.
func TestConcurrentAppendsLoseNothing(t *testing.T) {
	dir := t.TempDir()
	checkConcurrentAppends(t, openTestWarehouse(t, dir), openTestWarehouse(t, dir), 8)
}

// checkConcurrentAppends appends perHandle single-row files through each of
// two handles on one warehouse at once, then checks that every append made
// its own snapshot and its row.
func checkConcurrentAppends(t *testing.T, w1, w2 *Warehouse, perHandle int) {
	t.Helper()
	ctx := context.Background()
	mustCreateNamespace(t, w1, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w1.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*perHandle)
	for h, w := range []*Warehouse{w1, w2} {
		for i := range perHandle {
			files := writeFile(t, tbl, int64(h*100+i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := AppendFiles(ctx, w, ident, files, nil); err != nil {
					errs <- fmt.Errorf("append %d/%d: %w", h, i, err)
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
	if n := len(final.Metadata().Snapshots()); n != 2*perHandle {
		t.Errorf("%d snapshots, want %d: a commit was lost", n, 2*perHandle)
	}
	total, _ := strconv.Atoi(final.CurrentSnapshot().Summary.Properties["total-records"])
	if total != 2*perHandle {
		t.Errorf("total-records = %d, want %d", total, 2*perHandle)
	}
}

// TestNewestVersionIgnoresStaleHint checks that the newest metadata is found
// by listing, even when version-hint.text points at an older version.
func TestNewestVersionIgnoresStaleHint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AppendFiles(ctx, w, ident, writeFile(t, tbl, 1, 2, 3), nil); err != nil {
		t.Fatal(err)
	}
	hint := filepath.Join(dir, "db", "t", "metadata", "version-hint.text")
	if err := os.WriteFile(hint, []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := w.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if got.CurrentSnapshot() == nil {
		t.Fatal("loaded version 1 (from the stale hint) instead of version 2")
	}
}

// TestHintReplacementDropsHadoopChecksum checks that a commit replacing
// version-hint.text leaves no stale Hadoop checksum (.version-hint.text.crc,
// which Spark's local file system writes beside the hint) behind it.
func TestHintReplacementDropsHadoopChecksum(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dir, "db", "t", "metadata")
	crc := filepath.Join(meta, ".version-hint.text.crc")
	if err := os.WriteFile(crc, []byte("crc\x00\x00\x00\x02\x00stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AppendFiles(ctx, w, ident, writeFile(t, tbl, 1), nil); err != nil {
		t.Fatal(err)
	}
	if hint, err := os.ReadFile(filepath.Join(meta, "version-hint.text")); err != nil || string(hint) != "2" {
		t.Fatalf("version-hint.text = %q, %v; want 2", hint, err)
	}
	if _, err := os.Stat(crc); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the checksum of the old hint is still there (%v)", err)
	}
}

// TestCommitRejectsStaleRequirement commits against an outdated base: the
// commit must fail as retryable and leave the table unchanged.
func TestCommitRejectsStaleRequirement(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	stale, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AppendFiles(ctx, w, ident, writeFile(t, stale, 1), nil); err != nil {
		t.Fatal(err)
	}
	tx := stale.NewTransaction()
	if err := tx.AddDataFiles(ctx, writeFile(t, stale, 2), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("stale commit: %v, want ErrCommitFailed", err)
	}
	cur, err := w.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cur.Metadata().Snapshots()); n != 1 {
		t.Errorf("%d snapshots after a rejected commit, want 1", n)
	}
}

package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// errInjected is the failure faultStore injects.
var errInjected = errors.New("injected failure")

// faultStore fails the operations fail picks, as a read-only folder or a
// full disk would (tests run as root, whom chmod does not stop). A failing
// RemoveAll first deletes the location's data folder, as a walk that
// reached a read-only metadata folder would have.
type faultStore struct {
	Store
	fail func(op, location string) bool
}

func (f faultStore) WriteFile(ctx context.Context, loc string, data []byte) error {
	if f.fail("write", loc) {
		return errInjected
	}
	return f.Store.WriteFile(ctx, loc, data)
}

func (f faultStore) CreateExclusive(ctx context.Context, loc string, data []byte) error {
	if f.fail("create", loc) {
		return errInjected
	}
	return f.Store.CreateExclusive(ctx, loc, data)
}

func (f faultStore) Remove(ctx context.Context, loc string) error {
	if f.fail("remove", loc) {
		return errInjected
	}
	return f.Store.Remove(ctx, loc)
}

func (f faultStore) RemoveAll(ctx context.Context, loc string) error {
	if f.fail("removeall", loc) {
		if err := f.Store.RemoveAll(ctx, Join(loc, "data")); err != nil {
			return err
		}
		return errInjected
	}
	return f.Store.RemoveAll(ctx, loc)
}

func openFaultyWarehouse(t *testing.T, fail func(op, location string) bool) (*Warehouse, string) {
	t.Helper()
	dir := t.TempDir()
	root, err := LocalLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWarehouse(context.Background(), root, faultStore{Store: LocalStore{}, fail: fail})
	if err != nil {
		t.Fatal(err)
	}
	return w, dir
}

// A DROP TABLE that fails before the table is unreachable leaves it whole;
// one that fails deleting files afterwards has dropped it (ErrFilesLeft,
// a warning to the client) and the name is free for a new table.
func TestDropTableFailureLeavesTableOrNothing(t *testing.T) {
	ctx := context.Background()
	var failOp, failIn string
	w, dir := openFaultyWarehouse(t, func(op, loc string) bool {
		return op == failOp && strings.Contains(loc, failIn)
	})
	if err := w.CreateNamespace(ctx, table.Identifier{"d"}, nil); err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"d", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	appendRows(t, w, tbl, 1, 2, 3)
	before := listFiles(t, filepath.Join(dir, "d", "t"))

	// The step that hides the table fails: nothing changed.
	failOp, failIn = "write", "/.icesql/hidden/"
	if err := w.DropTable(ctx, ident); !errors.Is(err, errInjected) || errors.Is(err, ErrFilesLeft) {
		t.Fatalf("DropTable with the hiding step failing: %v; want the injected failure", err)
	}
	if got := listFiles(t, filepath.Join(dir, "d", "t")); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Fatalf("a failed DROP TABLE changed the table's files:\n%v\nwant\n%v", got, before)
	}
	if n := countRows(t, w, ident); n != 3 {
		t.Fatalf("after a failed DROP TABLE the table reads %d rows; want 3", n)
	}

	// Deleting the files fails midway: the table is gone all the same.
	failOp, failIn = "removeall", "/d/t"
	if err := w.DropTable(ctx, ident); !errors.Is(err, ErrFilesLeft) {
		t.Fatalf("DropTable with deletion failing: %v; want ErrFilesLeft", err)
	}
	if _, err := w.LoadTable(ctx, ident); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("after a drop whose deletion failed, LoadTable: %v; want no such table", err)
	}
	if names := tableNamesOf(t, w, "d"); len(names) != 0 {
		t.Fatalf("after the drop, tables %v; want none", names)
	}
	failOp = ""
	tbl, err = w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatalf("CREATE TABLE over the half-deleted folder's name: %v", err)
	}
	appendRows(t, w, tbl, 7)
	if n := countRows(t, w, ident); n != 1 {
		t.Fatalf("the new table reads %d rows; want 1", n)
	}

	// A renamed table: removing its link is the step that drops it.
	if _, err := w.RenameTable(ctx, ident, table.Identifier{"d", "u"}); err != nil {
		t.Fatal(err)
	}
	failOp, failIn = "remove", "/links/u.json"
	if err := w.DropTable(ctx, table.Identifier{"d", "u"}); !errors.Is(err, errInjected) {
		t.Fatalf("DropTable of a renamed table with the link removal failing: %v", err)
	}
	if n := countRows(t, w, table.Identifier{"d", "u"}); n != 1 {
		t.Fatalf("after the failed drop d.u reads %d rows; want 1", n)
	}
	if _, err := w.LoadTable(ctx, ident); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("after the failed drop of d.u, its old name d.t resolves: %v", err)
	}
}

// A CREATE DATABASE that fails writing its properties leaves no namespace.
func TestCreateNamespaceFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	w, dir := openFaultyWarehouse(t, func(op, loc string) bool {
		return op == "write" && strings.HasSuffix(loc, "/namespace.json")
	})
	if err := w.CreateNamespace(ctx, table.Identifier{"d"}, nil); !errors.Is(err, errInjected) {
		t.Fatalf("CreateNamespace: %v; want the injected failure", err)
	}
	if ok, err := w.CheckNamespaceExists(ctx, table.Identifier{"d"}); ok || err != nil {
		t.Fatalf("after a failed CREATE DATABASE the namespace exists: %v, %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed CREATE DATABASE left its folder: %v", err)
	}
}

// A DROP DATABASE that fails midway leaves every table whole or gone.
func TestDropNamespaceFailureLeavesWholeTables(t *testing.T) {
	ctx := context.Background()
	failing := false
	w, _ := openFaultyWarehouse(t, func(op, loc string) bool {
		return failing && op == "write" && strings.HasSuffix(loc, "/.icesql/hidden/b")
	})
	if err := w.CreateNamespace(ctx, table.Identifier{"d"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		tbl, err := w.CreateTable(ctx, table.Identifier{"d", n}, testSchema)
		if err != nil {
			t.Fatal(err)
		}
		appendRows(t, w, tbl, 1, 2)
	}
	failing = true
	if err := w.DropNamespace(ctx, table.Identifier{"d"}); !errors.Is(err, errInjected) {
		t.Fatalf("DropNamespace: %v; want the injected failure", err)
	}
	if _, err := w.LoadTable(ctx, table.Identifier{"d", "a"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("d.a, dropped before the failure: %v", err)
	}
	if n := countRows(t, w, table.Identifier{"d", "b"}); n != 2 {
		t.Errorf("d.b, whose drop failed, reads %d rows; want 2", n)
	}
	failing = false
	if err := w.DropNamespace(ctx, table.Identifier{"d"}); err != nil {
		t.Fatalf("DropNamespace again: %v", err)
	}
}

func appendRows(t *testing.T, w *Warehouse, tbl *table.Table, ids ...int64) {
	t.Helper()
	if _, err := AppendFiles(context.Background(), w, tbl.Identifier(), writeFile(t, tbl, ids...), nil); err != nil {
		t.Fatal(err)
	}
}

// countRows reads the whole table, data files included.
func countRows(t *testing.T, w *Warehouse, ident table.Identifier) int64 {
	t.Helper()
	tbl, err := w.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("read %v: %v", ident, err)
	}
	defer at.Release()
	return at.NumRows()
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

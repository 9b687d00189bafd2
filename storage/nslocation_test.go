package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestNamespaceLocationIsItsFolder: a namespace's location property may
// only name its own folder (any spelling: file://, with a trailing slash,
// the served bucket's s3://), where its tables are placed; a location
// elsewhere is refused with ErrPlacement, on create (nothing created) and
// on a properties update (nothing changed).
func TestNamespaceLocationIsItsFolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	if err := w.ServeBucket(ctx, "lake", false); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"file://" + filepath.Join(dir, "elsewhere"), "s3://lake/other/db", "s3://another/db", filepath.Join(dir, "db", "sub")} {
		err := w.CreateNamespace(ctx, table.Identifier{"db"}, iceberg.Properties{"location": loc})
		if !errors.Is(err, ErrPlacement) {
			t.Errorf("namespace location %s: %v, want ErrPlacement", loc, err)
		}
		if ok, _ := w.CheckNamespaceExists(ctx, table.Identifier{"db"}); ok {
			t.Fatalf("the refused namespace (location %s) exists", loc)
		}
	}
	for i, loc := range []string{"file://" + filepath.Join(dir, "a"), "file://" + filepath.Join(dir, "b") + "/", "s3://lake/c", filepath.Join(dir, "d")} {
		ns := string(rune('a' + i))
		if err := w.CreateNamespace(ctx, table.Identifier{ns}, iceberg.Properties{"location": loc}); err != nil {
			t.Errorf("namespace %s at its own folder %s: %v", ns, loc, err)
		}
	}
	tbl, err := w.CreateTable(ctx, table.Identifier{"c", "t"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := StoredLocation(tbl), w.Root()+"/c/t"; got != want {
		t.Errorf("a table of namespace c is at %s, want %s", got, want)
	}
	if _, err := w.UpdateNamespaceProperties(ctx, table.Identifier{"a"}, nil, iceberg.Properties{"location": "s3://lake/z", "owner": "x"}); !errors.Is(err, ErrPlacement) {
		t.Errorf("setting a location elsewhere: %v, want ErrPlacement", err)
	}
	if props, _ := w.LoadNamespaceProperties(ctx, table.Identifier{"a"}); props["owner"] != "" || props["location"] != "file://"+filepath.Join(dir, "a") {
		t.Errorf("after the refused update the properties are %v", props)
	}
	if _, err := w.UpdateNamespaceProperties(ctx, table.Identifier{"a"}, []string{"location"}, nil); err != nil {
		t.Errorf("removing the location: %v", err)
	}
}

// TestOldNamespaceLocationAnswered: a namespace whose properties file,
// written before locations elsewhere were refused, names a location
// outside its folder is answered with its folder as the location and the
// stored value as icesql.ignored-location; its new tables are placed in
// the folder; the location set to the folder itself clears it.
func TestOldNamespaceLocationAnswered(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "old")
	stale := "file://" + filepath.Join(t.TempDir(), "old")
	if err := os.WriteFile(filepath.Join(dir, "old", ".icesql", "namespace.json"), []byte(`{"location":"`+stale+`","comment":"c"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := w.Root() + "/old"
	props, err := w.LoadNamespaceProperties(ctx, table.Identifier{"old"})
	if err != nil || len(props) != 3 || props["location"] != folder || props["icesql.ignored-location"] != stale || props["comment"] != "c" {
		t.Fatalf("properties %v (%v), want location %s, icesql.ignored-location %s, comment c", props, err, folder, stale)
	}
	tbl, err := w.CreateTable(ctx, table.Identifier{"old", "t"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if got := StoredLocation(tbl); got != folder+"/t" {
		t.Errorf("a new table of the namespace is at %s, want %s/t", got, folder)
	}
	if _, err := w.UpdateNamespaceProperties(ctx, table.Identifier{"old"}, nil, iceberg.Properties{"location": folder + "/"}); err != nil {
		t.Fatal(err)
	}
	props, err = w.LoadNamespaceProperties(ctx, table.Identifier{"old"})
	if err != nil || len(props) != 2 || props["location"] != folder+"/" {
		t.Errorf("after setting the location to the folder: %v (%v)", props, err)
	}
}

package storage

import (
	"context"
	"errors"
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

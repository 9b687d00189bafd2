package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// registerSource makes a table in warehouse dir src with one commit after
// its creation and returns its folder.
func registerSource(t *testing.T, src string) string {
	t.Helper()
	ctx := context.Background()
	w := openTestWarehouse(t, src)
	if err := w.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := w.CreateTable(ctx, table.Identifier{"db", "t"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{"k": "v2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(src, "db", "t")
}

func TestRegisterTable(t *testing.T) {
	ctx := context.Background()
	folder := registerSource(t, t.TempDir())
	w := openTestWarehouse(t, t.TempDir())
	if err := w.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}

	// By folder: the newest version, v2.
	tbl, err := w.RegisterTable(ctx, table.Identifier{"ns", "byfolder"}, folder)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Properties()["k"] != "v2" || filepath.Base(tbl.MetadataLocation()) != "v2.metadata.json" {
		t.Errorf("registered by folder: %s with k=%q, want v2.metadata.json", tbl.MetadataLocation(), tbl.Properties()["k"])
	}
	// By file: exactly that file, even though a newer one exists.
	v1 := filepath.Join(folder, "metadata", "v1.metadata.json")
	tbl, err = w.RegisterTable(ctx, table.Identifier{"ns", "byfile"}, v1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tbl.Properties()["k"]; ok {
		t.Errorf("registered v1.metadata.json but read properties %v", tbl.Properties())
	}
	if _, err := w.RegisterTable(ctx, table.Identifier{"ns", "byfile"}, v1); !errors.Is(err, catalog.ErrTableAlreadyExists) {
		t.Errorf("registering a taken name: %v, want ErrTableAlreadyExists", err)
	}
	if _, err := w.RegisterTable(ctx, table.Identifier{"nope", "t"}, v1); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("registering into a missing namespace: %v, want ErrNoSuchNamespace", err)
	}

	// A commit writes the next metadata file next to the registered one,
	// under a name no other writer uses, and the name resolves to it.
	loaded, err := w.LoadTable(ctx, table.Identifier{"ns", "byfile"})
	if err != nil {
		t.Fatal(err)
	}
	tx := loaded.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{"k": "mine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(folder, "metadata", "v1.icesql-1.metadata.json")
	if _, err := os.Stat(next); err != nil {
		t.Errorf("commit did not write %s: %v", next, err)
	}
	loaded, err = w.LoadTable(ctx, table.Identifier{"ns", "byfile"})
	if err != nil || loaded.Properties()["k"] != "mine" || loaded.MetadataLocation() != next {
		t.Errorf("after commit: %v at %s, %v", loaded.Properties(), loaded.MetadataLocation(), err)
	}

	// Rename keeps the link to the registered metadata; drop removes only the name.
	if _, err := w.RenameTable(ctx, table.Identifier{"ns", "byfile"}, table.Identifier{"ns", "renamed"}); err != nil {
		t.Fatal(err)
	}
	loaded, err = w.LoadTable(ctx, table.Identifier{"ns", "renamed"})
	if err != nil || loaded.Properties()["k"] != "mine" {
		t.Errorf("after rename: %v, %v", loaded, err)
	}
	if err := w.DropTable(ctx, table.Identifier{"ns", "renamed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(next); err != nil {
		t.Errorf("DROP TABLE of a registered table removed its files: %v", err)
	}
	if names := tableNamesOf(t, w, "ns"); len(names) != 1 || names[0] != "byfolder" {
		t.Errorf("tables after drop = %v, want [byfolder]", names)
	}
}

func TestNewestMetadataFile(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	for _, tc := range []struct {
		name  string
		files map[string]string // name -> content
		want  string
	}{
		{"hadoop", map[string]string{"v1.metadata.json": "{}", "v10.metadata.json": "{}", "v9.metadata.json": "{}", "version-hint.text": "1"}, "v10.metadata.json"},
		{"catalog", map[string]string{"00001-a.metadata.json": "{}", "00012-b.metadata.json": "{}", "00002-c.metadata.json": "{}"}, "00012-b.metadata.json"},
		{"unnumbered", map[string]string{
			"v1.metadata.json":     `{"last-updated-ms": 10}`,
			"v2.metadata.json":     `{"last-updated-ms": 20}`,
			"vfinal.metadata.json": `{"last-updated-ms": 30}`,
		}, "vfinal.metadata.json"},
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "metadata"), 0o755); err != nil {
			t.Fatal(err)
		}
		for n, c := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, "metadata", n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := w.NewestMetadataFile(ctx, dir)
		if err != nil || filepath.Base(got) != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	if _, err := w.NewestMetadataFile(ctx, t.TempDir()); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("empty folder: %v, want ErrNoMetadata", err)
	}
}

func TestPathRemap(t *testing.T) {
	r := NewPathRemap(map[string]string{
		"data/":        "/fx/duck/data/",
		"file://data/": "/fx/duck/data/",
		"/warehouse/":  "/fx/impala/",
	})
	for in, want := range map[string]string{
		"data/t/x.parquet":        "/fx/duck/data/t/x.parquet",
		"file://data/t/x.parquet": "/fx/duck/data/t/x.parquet",
		"/warehouse/t/m.avro":     "/fx/impala/t/m.avro",
		"/other/data/x":           "/other/data/x",
		"/fx/duck/data/t":         "/fx/duck/data/t", // applied once, not again
	} {
		if got := r.Apply(in); got != want {
			t.Errorf("Apply(%q) = %q, want %q", in, got, want)
		}
	}
	store := RemapStore{Store: LocalStore{}, Remap: r}
	if got := CanonicalPath(store, "file://data/a"); got != "/fx/duck/data/a" {
		t.Errorf("CanonicalPath = %q", got)
	}
}

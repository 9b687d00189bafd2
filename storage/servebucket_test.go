package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestServedBucketNamesWrites checks that once a warehouse is served as a
// bucket, the files icesql writes are named s3://BUCKET/... (data files,
// manifests, manifest lists), that the metadata file keeps the table's
// file:// location, that another opening of the folder (icesql sql) writes
// the same names and reads every file, and that a commit sending the
// bucket's spelling of the location back leaves the location as it was.
func TestServedBucketNamesWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 1), nil); err != nil {
		t.Fatal(err)
	}
	if loc := tbl.CurrentSnapshot().ManifestList; !strings.HasPrefix(loc, "file://") {
		t.Fatalf("before serving, a manifest list is named %s, want file://", loc)
	}
	if err := w.ServeBucket(ctx, "lake", true); err != nil {
		t.Fatal(err)
	}

	// Another opening of the folder, as icesql sql would
	w2 := openTestWarehouse(t, dir)
	if got := w2.WriteBucket(); got != "lake" {
		t.Fatalf("a reopened warehouse writes bucket %q, want lake", got)
	}
	for i, wh := range []*Warehouse{w, w2} {
		tbl, err := wh.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		if got := tbl.Location(); got != "s3://lake/db/t" {
			t.Fatalf("handle %d: writers see location %s, want s3://lake/db/t", i, got)
		}
		if got, want := StoredLocation(tbl), w.Root()+"/db/t"; got != want {
			t.Fatalf("handle %d: stored location %s, want %s", i, got, want)
		}
		files := writeFile(t, tbl, int64(10+i))
		if p := files[0].FilePath(); !strings.HasPrefix(p, "s3://lake/db/t/data/") {
			t.Fatalf("handle %d: data file named %s, want s3://lake/db/t/data/...", i, p)
		}
		if tbl, err = AppendFiles(ctx, wh, ident, files, nil); err != nil {
			t.Fatal(err)
		}
		list := tbl.CurrentSnapshot().ManifestList
		if !strings.HasPrefix(list, "s3://lake/db/t/metadata/snap-") {
			t.Fatalf("handle %d: manifest list named %s", i, list)
		}
		fsys, err := tbl.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mans, err := tbl.CurrentSnapshot().Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		var s3, local int
		for _, m := range mans {
			switch {
			case strings.HasPrefix(m.FilePath(), "s3://lake/db/t/metadata/"):
				s3++
			case strings.HasPrefix(m.FilePath(), "file://"):
				local++
			}
			if want := filepath.Join(dir, "db", "t", "metadata", filepath.Base(m.FilePath())); FileLocation(fsys, m.FilePath()) != "file://"+want {
				t.Errorf("FileLocation(%s) = %s, want file://%s", m.FilePath(), FileLocation(fsys, m.FilePath()), want)
			}
		}
		if s3 != i+1 || local != 1 {
			t.Fatalf("handle %d: %d manifests named s3://, %d file://; want %d and 1", i, s3, local, i+1)
		}
		// Every file reads, either spelling
		rows, err := tbl.Scan().ToArrowTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := rows.NumRows(); n != int64(i+2) {
			t.Fatalf("handle %d: %d rows, want %d", i, n, i+2)
		}
		rows.Release()
	}

	// The metadata file keeps the file:// location
	metaLoc := mustLoad(t, w2, ident).MetadataLocation()
	p, err := LocalPath(metaLoc)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"location":"` + w.Root() + `/db/t"`; !strings.Contains(string(raw), want) {
		t.Fatalf("%s does not record %s", metaLoc, want)
	}
	// A client's replace transaction sends back the location it was given
	tbl = mustLoad(t, w2, ident)
	if _, _, err := w2.CommitTable(ctx, ident, nil, []table.Update{table.NewSetLocationUpdate(tbl.Location())}); err != nil {
		t.Fatalf("commit of set-location to the bucket's spelling: %v", err)
	}
	if got, want := StoredLocation(mustLoad(t, w, ident)), w.Root()+"/db/t"; got != want {
		t.Fatalf("after set-location %s the stored location is %s, want %s", tbl.Location(), got, want)
	}
}

func mustLoad(t *testing.T, w *Warehouse, ident table.Identifier) *table.Table {
	t.Helper()
	tbl, err := w.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestServedBucketKeepsFileNamesByDefault: a warehouse served without
// --s3-locations keeps writing file:// names, which engines reading the
// folder directly open, and still reads the bucket's names other engines
// write; serving it without the flag after a serving with it goes back to
// file:// names.
func TestServedBucketKeepsFileNamesByDefault(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	if _, err := w.CreateTable(ctx, ident, testSchema); err != nil {
		t.Fatal(err)
	}
	for i, writeNames := range []bool{false, true, false} {
		if err := w.ServeBucket(ctx, "lake", writeNames); err != nil {
			t.Fatal(err)
		}
		tbl, err := w.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, int64(i)), nil); err != nil {
			t.Fatal(err)
		}
		want := "file://"
		if writeNames {
			want = "s3://lake/"
		}
		if list := tbl.CurrentSnapshot().ManifestList; !strings.HasPrefix(list, want) {
			t.Errorf("serving %d (names in the bucket: %v): manifest list %s, want %s...", i, writeNames, list, want)
		}
		if got := openTestWarehouse(t, dir).WriteBucket(); (got == "lake") != writeNames {
			t.Errorf("serving %d: a reopened warehouse writes bucket %q", i, got)
		}
	}
	// Every file, under either name, reads back.
	if got := w.buckets.apply("s3://lake/db/t/data/x.parquet"); got != w.Root()+"/db/t/data/x.parquet" {
		t.Errorf("the bucket's names map to %s", got)
	}
}

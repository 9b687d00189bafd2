package storage

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
)

// TestServedWarehouseRecordsETags: once a warehouse was served as a bucket,
// every file icesql writes into it (data files, manifests, manifest lists,
// metadata files) carries its ETag, the MD5 of its content, recorded as it
// was written, so that the S3 API's first GET of it does not read it
// whole; files written before the serving carry none, and a rewrite of a
// file outdates its record.
func TestServedWarehouseRecordsETags(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 1), nil); err != nil {
		t.Fatal(err)
	}
	tableDir := filepath.Join(dir, "db", "t")
	before := map[string]bool{}
	walkFiles(t, tableDir, func(p string, fi fs.FileInfo) {
		before[p] = true
		if tag, ok := RecordedETag(p, fi); ok {
			t.Errorf("%s, written before the warehouse was served, has the ETag %s", p, tag)
		}
	})

	for _, writeNames := range []bool{false, true} {
		if err := w.ServeBucket(ctx, "lake", writeNames); err != nil {
			t.Fatal(err)
		}
		tbl := mustLoad(t, w, ident)
		if _, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 2), nil); err != nil {
			t.Fatal(err)
		}
	}
	kinds := map[string]int{}
	walkFiles(t, tableDir, func(p string, fi fs.FileInfo) {
		if before[p] {
			return
		}
		kinds[filepath.Ext(p)]++
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum(data)
		if tag, ok := RecordedETag(p, fi); !ok || tag != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: recorded ETag %q (%v), want its MD5 %x", p, tag, ok, sum)
		}
	})
	// Two appends: a data file, a manifest and a manifest list each, and
	// a metadata file each.
	if kinds[".parquet"] != 2 || kinds[".avro"] != 4 || kinds[".json"] != 2 {
		t.Fatalf("files written after serving, by extension: %v", kinds)
	}

	// A rewrite (same size, later time) outdates the record.
	walkFiles(t, filepath.Join(tableDir, "data"), func(p string, _ fs.FileInfo) {
		if before[p] {
			return
		}
		data, _ := os.ReadFile(p)
		data[0] ^= 0xff
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute)
		os.Chtimes(p, later, later)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if tag, ok := RecordedETag(p, fi); ok {
			t.Errorf("%s was rewritten and still has the ETag %s", p, tag)
		}
	})
}

func walkFiles(t *testing.T, dir string, fn func(string, fs.FileInfo)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fn(p, fi)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

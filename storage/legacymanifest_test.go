package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

const legacyEntrySchema = `{"type":"record","name":"manifest_entry","fields":[
 {"name":"status","type":"int"},
 {"name":"sequence_number","type":["null","long"]},
 {"name":"data_file","type":{"type":"record","name":"r2","fields":[
   {"name":"content","type":"int"},
   {"name":"file_path","type":"string"}]}}]}`

// writeAvro writes an Avro container file with the given schema, records
// and header metadata.
func writeAvro(t *testing.T, path, schema string, meta map[string][]byte, records ...any) {
	t.Helper()
	sc, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := ocf.NewWriter(&buf, sc, ocf.WithMetadata(meta))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		if err := w.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRepairLegacyManifest(t *testing.T) {
	dir := t.TempDir()
	entry := func(content int32) map[string]any {
		return map[string]any{"status": int32(1), "sequence_number": nil,
			"data_file": map[string]any{"content": content, "file_path": "/x.parquet"}}
	}
	deletes := filepath.Join(dir, "deletes-m0.avro")
	writeAvro(t, deletes, legacyEntrySchema, nil, entry(1))
	data := filepath.Join(dir, "data-m0.avro")
	writeAvro(t, data, legacyEntrySchema, nil, entry(0), entry(0))
	modern := filepath.Join(dir, "modern-m0.avro")
	writeAvro(t, modern, legacyEntrySchema, map[string][]byte{"format-version": []byte("2"), "content": []byte("data")}, entry(1))
	other := filepath.Join(dir, "other.avro")
	writeAvro(t, other, `{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}`, nil, map[string]any{"a": int32(1)})

	fsys := repairManifests(icebergio.LocalFS{})
	for path, want := range map[string]map[string]string{
		deletes: {"format-version": "2", "content": "deletes"},
		data:    {"format-version": "2", "content": "data"},
		modern:  {"format-version": "2", "content": "data"},
		other:   {"format-version": "", "content": ""},
	} {
		f, err := fsys.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := ocf.NewReader(f)
		if err != nil {
			t.Fatalf("%s: repaired file is not Avro: %v", path, err)
		}
		for k, v := range want {
			if got := string(rd.Metadata()[k]); got != v {
				t.Errorf("%s: %s = %q, want %q", filepath.Base(path), k, got, v)
			}
		}
		// The records after the header are intact.
		n := 0
		for {
			var rec map[string]any
			if err := rd.Decode(&rec); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: record %d: %v", path, n, err)
			}
			n++
		}
		if path == data && n != 2 {
			t.Errorf("data manifest: %d records after repair, want 2", n)
		}
		f.Close()
	}
}

// TestLowerCaseFileFormat reads a table whose manifest names its data
// file's format "parquet", as DuckDB writes it, uncompressed or with each
// codec Avro writers use.
func TestLowerCaseFileFormat(t *testing.T) {
	zstd, err := ocf.ZstdCodec(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []ocf.Codec{nil, ocf.DeflateCodec(-1), ocf.SnappyCodec(), zstd} {
		name := "null"
		if codec != nil {
			name = codec.Name()
		}
		t.Run(name, func(t *testing.T) { testLowerCaseFileFormat(t, codec) })
	}
}

func testLowerCaseFileFormat(t *testing.T, codec ocf.Codec) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 1, 2), nil); err != nil {
		t.Fatal(err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mans, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil || len(mans) != 1 {
		t.Fatalf("manifests %v: %v", mans, err)
	}
	// Rewrite the manifest as DuckDB writes it, "parquet", with codec.
	p, err := LocalPath(mans[0].FilePath())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	for {
		var e map[string]any
		if err := rd.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		e["data_file"].(map[string]any)["file_format"] = "parquet"
		entries = append(entries, e)
	}
	meta := map[string][]byte{}
	for k, v := range rd.Metadata() {
		if k != "avro.schema" && k != "avro.codec" {
			meta[k] = v
		}
	}
	opts := []ocf.WriterOpt{ocf.WithMetadata(meta)}
	if codec != nil {
		opts = append(opts, ocf.WithCodec(codec))
	}
	var buf bytes.Buffer
	wr, err := ocf.NewWriter(&buf, rd.Schema(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := wr.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	if h, err := readAvroHeader(buf.Bytes()); err != nil || codec != nil && string(h.meta["avro.codec"]) != codec.Name() ||
		codec == nil && !bytes.Contains(buf.Bytes(), []byte("\x0eparquet")) {
		t.Fatalf("the rewritten manifest is not as asked: %v", err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	tbl, err = w.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	for entry, err := range mans[0].Entries(fsys, true) {
		if err != nil {
			t.Fatal(err)
		}
		if f := entry.DataFile().FileFormat(); f != iceberg.ParquetFile {
			t.Fatalf("file format %q, want %q", f, iceberg.ParquetFile)
		}
	}
	rows, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	defer rows.Release()
	if rows.NumRows() != 2 {
		t.Fatalf("%d rows, want 2", rows.NumRows())
	}
}

package storage

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
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
			if err := rd.Decode(&rec); err == io.EOF {
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

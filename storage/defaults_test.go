package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// defaultsMetadata is table metadata as PyIceberg writes it for a table
// whose columns were added with defaults (format v2, as the
// add_columns_with_defaults fixtures), one of them inside a struct; the
// defaults are in the spec's JSON form.
const defaultsMetadata = `{
  "format-version": 2,
  "table-uuid": "dea00994-6d6c-49b8-93ce-1fd5561e8323",
  "location": "LOCATION",
  "last-sequence-number": 0,
  "last-updated-ms": 1747142151804,
  "last-column-id": 12,
  "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": false, "type": "long"},
    {"id": 2, "name": "d", "required": false, "type": "date", "initial-default": "2003-10-20", "write-default": "0011-03-05"},
    {"id": 3, "name": "t", "required": false, "type": "time", "initial-default": "00:00:00.012345"},
    {"id": 4, "name": "ts", "required": false, "type": "timestamp", "initial-default": "1969-12-31T23:59:59.123456"},
    {"id": 5, "name": "tz", "required": false, "type": "timestamptz", "initial-default": "1970-01-01T00:00:00.012345+00:00"},
    {"id": 6, "name": "l", "required": false, "type": "long", "initial-default": -9223372036854775808},
    {"id": 7, "name": "big", "required": false, "type": "long", "initial-default": 9007199254740993},
    {"id": 8, "name": "u", "required": false, "type": "uuid", "initial-default": "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
    {"id": 9, "name": "s", "required": false, "type": {"type": "struct", "fields": [
      {"id": 10, "name": "nd", "required": false, "type": "date", "initial-default": "2024-01-01"},
      {"id": 11, "name": "nts", "required": false, "type": "timestamp", "initial-default": "2024-01-15T10:30:45.123456"},
      {"id": 12, "name": "ns", "required": false, "type": "timestamp_ns", "initial-default": "2024-01-15T10:30:45.123456789"}
    ]}}
  ]}],
  "default-spec-id": 0,
  "partition-specs": [{"spec-id": 0, "fields": []}],
  "last-partition-id": 999,
  "default-sort-order-id": 0,
  "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {},
  "snapshots": [],
  "snapshot-log": [],
  "metadata-log": []
}`

// fieldDefaults are the initial-default and write-default JSON values of
// each field of a metadata file's schemas, by field name.
func fieldDefaults(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var doc struct {
		Schemas []json.RawMessage `json:"schemas"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(fields []map[string]json.RawMessage)
	walk = func(fields []map[string]json.RawMessage) {
		for _, f := range fields {
			var name string
			json.Unmarshal(f["name"], &name)
			for _, key := range []string{"initial-default", "write-default"} {
				if v, ok := f[key]; ok {
					out[name+" "+key] = string(v)
				}
			}
			var nested struct {
				Fields []map[string]json.RawMessage `json:"fields"`
			}
			if json.Unmarshal(f["type"], &nested) == nil {
				walk(nested.Fields)
			}
		}
	}
	for _, s := range doc.Schemas {
		var sc struct {
			Fields []map[string]json.RawMessage `json:"fields"`
		}
		if err := json.Unmarshal(s, &sc); err != nil {
			t.Fatal(err)
		}
		walk(sc.Fields)
	}
	return out
}

// TestFieldDefaults: defaults in the spec's JSON form (ISO strings for
// dates, times and timestamps) reach iceberg-go as the numbers its reader
// fills columns from, and a commit writes them back in the spec's form, so
// that other engines read the same defaults.
func TestFieldDefaults(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	registered := filepath.Join(src, "metadata", "00000-aeded41a-7828-479f-8355-63ef9ea57798.metadata.json")
	original := []byte(strings.Replace(defaultsMetadata, "LOCATION", src, 1))
	if err := os.WriteFile(registered, original, 0o644); err != nil {
		t.Fatal(err)
	}
	w := openTestWarehouse(t, t.TempDir())
	if err := w.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := w.RegisterTable(ctx, table.Identifier{"ns", "t"}, registered)
	if err != nil {
		t.Fatal(err)
	}

	// What iceberg-go's reader fills a lacking column from.
	byID, err := iceberg.IndexByID(tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]any{
		2:  float64(12345),     // 2003-10-20 in days
		3:  float64(12345),     // microseconds since midnight
		4:  float64(-876544),   // microseconds before the epoch
		5:  float64(12345),     // UTC
		6:  float64(-1 << 63),  // exact in a float64
		7:  "9007199254740993", // would round in a float64: a string iceberg-go refuses
		8:  "f79c3e09-677c-4bbd-a479-3f349cb785e7",
		10: float64(19723), // nested: 2024-01-01
		11: float64(1705314645123456),
		12: "2024-01-15T10:30:45.123456789", // nanoseconds beyond 2^53: left as it is
	} {
		if got := byID[id].InitialDefault; got != want {
			t.Errorf("field %s: initial-default %v (%T), want %v (%T)", byID[id].Name, got, got, want, want)
		}
	}
	if got := byID[2].WriteDefault; got != float64(-715447) {
		t.Errorf("d: write-default %v, want -715447 (0011-03-05)", got)
	}

	// A commit keeps every default as the spec writes it.
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(committed.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	want, got := fieldDefaults(t, original), fieldDefaults(t, written)
	if len(got) != len(want) {
		t.Errorf("written defaults %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s written as %s, want %s", k, got[k], v)
		}
	}
	if bytes.Contains(written, []byte("e+18")) {
		t.Errorf("a default written in exponent form: %s", written)
	}
	// And reads back as it was read.
	again, err := w.LoadTable(ctx, table.Identifier{"ns", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Schema().Equals(tbl.Schema()) {
		t.Errorf("schema read back:\n%v\nwant\n%v", again.Schema(), tbl.Schema())
	}
}

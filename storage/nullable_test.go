package storage

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// A manifest list whose required fields are nullable unions, as BigQuery
// writes them: iceberg-go reads it once requireFields made them plain; a
// list where a required field is null is left for iceberg-go to refuse.
func TestRequireFields(t *testing.T) {
	schema := avro.MustParse(`{"type":"record","name":"manifest_file","fields":[
		{"name":"manifest_path","type":["null","string"],"field-id":500},
		{"name":"manifest_length","type":["null","long"],"field-id":501},
		{"name":"partition_spec_id","type":["null","int"],"field-id":502},
		{"name":"content","type":["null","int"],"field-id":517},
		{"name":"sequence_number","type":["null","long"],"field-id":515},
		{"name":"min_sequence_number","type":["null","long"],"field-id":516},
		{"name":"added_snapshot_id","type":["null","long"],"field-id":503},
		{"name":"added_files_count","type":["null","int"],"field-id":504},
		{"name":"existing_files_count","type":["null","int"],"field-id":505},
		{"name":"deleted_files_count","type":["null","int"],"field-id":506},
		{"name":"added_rows_count","type":["null","long"],"field-id":512},
		{"name":"existing_rows_count","type":["null","long"],"field-id":513},
		{"name":"deleted_rows_count","type":["null","long"],"field-id":514}]}`)
	write := func(path any) []byte {
		var b bytes.Buffer
		w, err := ocf.NewWriter(&b, schema, ocf.WithMetadata(map[string][]byte{"format-version": []byte("2")}))
		if err != nil {
			t.Fatal(err)
		}
		entry := map[string]any{"manifest_path": path, "manifest_length": int64(10), "partition_spec_id": int32(0),
			"content": int32(0), "sequence_number": int64(1), "min_sequence_number": int64(1), "added_snapshot_id": int64(7),
			"added_files_count": int32(1), "existing_files_count": int32(0), "deleted_files_count": int32(0),
			"added_rows_count": int64(3), "existing_rows_count": int64(0), "deleted_rows_count": int64(0)}
		if err := w.Encode(entry); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}

	data := write("s3://b/t/metadata/m.avro")
	if _, err := iceberg.ReadManifestList(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "manifest_path") {
		t.Fatalf("iceberg-go read the nullable list (error %v): the workaround may go", err)
	}
	plain, changed, err := requireFields(data)
	if err != nil || !changed {
		t.Fatalf("requireFields: changed %v, %v", changed, err)
	}
	list, err := iceberg.ReadManifestList(bytes.NewReader(plain))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].FilePath() != "s3://b/t/metadata/m.avro" || list[0].AddedRows() != 3 {
		t.Fatalf("read back %+v", list)
	}

	if _, changed, err := requireFields(write(nil)); err != nil || changed {
		t.Fatalf("a null manifest_path: changed %v, %v; want the file left as it is", changed, err)
	}
}

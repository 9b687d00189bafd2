package storage

import (
	"bytes"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
)

// TestFillEmptyBounds checks that a manifest list entry whose partition
// field has an upper bound but a null lower bound (iceberg-go's encoding of
// the empty string) gets the empty lower bound Java writes, and that the rest
// of the list reads back unchanged. sqltests/testdata/interop.test checks
// the queries, including a field holding only empty strings and NULLs.
func TestFillEmptyBounds(t *testing.T) {
	var nilBound []byte
	zzz, abc := []byte("zzz"), []byte("abc")
	entries := []iceberg.ManifestFile{
		iceberg.NewManifestFile(2, "file:///wh/t/metadata/a-m0.avro", 100, 0, 7).
			SequenceNum(3, 2).AddedFiles(3).AddedRows(30).
			Partitions([]iceberg.FieldSummary{{LowerBound: &nilBound, UpperBound: &zzz}, {LowerBound: &abc, UpperBound: &zzz}}).Build(),
		iceberg.NewManifestFile(2, "file:///wh/t/metadata/b-m0.avro", 200, 0, 6).
			SequenceNum(2, 1).ExistingFiles(1).ExistingRows(5).
			Partitions([]iceberg.FieldSummary{{LowerBound: &abc, UpperBound: &zzz}, {ContainsNull: true, LowerBound: &abc, UpperBound: &abc}}).Build(),
	}
	var buf bytes.Buffer
	seq, parent := int64(3), int64(6)
	if err := iceberg.WriteManifestList(2, &buf, 7, &parent, &seq, 0, entries); err != nil {
		t.Fatal(err)
	}
	before, err := iceberg.ReadManifestList(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if before[0].Partitions()[0].LowerBound != nil {
		t.Fatal("iceberg-go now writes the empty lower bound itself; the repair can go")
	}
	fixed, err := fillEmptyBounds(icebergio.LocalFS{}, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	after, err := iceberg.ReadManifestList(bytes.NewReader(fixed))
	if err != nil {
		t.Fatal(err)
	}
	if lb := after[0].Partitions()[0].LowerBound; lb == nil || len(*lb) != 0 {
		t.Errorf("lower bound %v, want the empty value", lb)
	}
	if got := after[1].Partitions()[1]; got.LowerBound == nil || string(*got.LowerBound) != "abc" || !got.ContainsNull {
		t.Errorf("a complete summary changed: %+v", got)
	}
	for i := range entries {
		b, a := before[i], after[i]
		if a.FilePath() != b.FilePath() || a.Length() != b.Length() || a.SequenceNum() != b.SequenceNum() ||
			a.MinSequenceNum() != b.MinSequenceNum() || a.SnapshotID() != b.SnapshotID() ||
			a.AddedDataFiles() != b.AddedDataFiles() || a.ExistingDataFiles() != b.ExistingDataFiles() ||
			a.AddedRows() != b.AddedRows() || a.ExistingRows() != b.ExistingRows() {
			t.Errorf("entry %d changed: %+v, was %+v", i, a, b)
		}
	}
}

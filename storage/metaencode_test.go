package storage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/icesql/icesql/sqltests/fixtures"
)

// checkAssembled checks that the assembled encoding of meta is byte for byte
// what iceberg-go's MarshalJSON writes, and that it parses back to equal
// metadata.
func checkAssembled(t *testing.T, c *snapshotEncodings, name string, meta table.Metadata) {
	t.Helper()
	want, err := marshalMetadata(meta)
	if err != nil {
		t.Fatalf("%s: MarshalJSON: %v", name, err)
	}
	got, ok, err := c.assemble(meta)
	if err != nil || !ok {
		t.Fatalf("%s: assemble: ok=%v, %v", name, ok, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: assembled metadata differs from MarshalJSON:\n got %s\nwant %s", name, got, want)
	}
	back, err := table.ParseMetadataBytes(got)
	if err != nil {
		t.Fatalf("%s: parse assembled metadata: %v", name, err)
	}
	slow, err := table.ParseMetadataBytes(want)
	if err != nil {
		t.Fatalf("%s: parse MarshalJSON output: %v", name, err)
	}
	if !back.Equals(slow) {
		t.Fatalf("%s: assembled metadata parses to different metadata", name)
	}
}

// TestAssembledMetadataMatchesMarshalJSON commits to tables of each format
// version, with the parts a metadata file can have (partition specs,
// properties, refs, a metadata log trimmed by previous-versions-max), and
// checks every version's assembled encoding against iceberg-go's.
func TestAssembledMetadataMatchesMarshalJSON(t *testing.T) {
	ctx := context.Background()
	for _, version := range []string{"1", "2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			w := openTestWarehouse(t, t.TempDir())
			mustCreateNamespace(t, w, "db")
			ident := table.Identifier{"db", "t"}
			spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}})
			tbl, err := w.CreateTable(ctx, ident, testSchema, catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{
				"format-version":                       version,
				table.MetadataPreviousVersionsMaxKey:   "3",
				"comment":                              `quotes " and <html> & unicode é`,
				table.ManifestMergeEnabledKey:          "true",
				table.ManifestMinMergeCountKey:         "2",
				"write.metadata.delete-after-commit.x": "y",
			}))
			if err != nil {
				t.Fatal(err)
			}
			checkAssembled(t, &w.metas.snaps, "created", tbl.Metadata())
			for i := range 6 {
				tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, int64(i), int64(i+10)), iceberg.Properties{"engine-name": "test"})
				if err != nil {
					t.Fatal(err)
				}
				checkAssembled(t, &w.metas.snaps, "append "+strconv.Itoa(i), tbl.Metadata())
			}
			snap := tbl.Metadata().CurrentSnapshot().SnapshotID
			meta, _, err := w.CommitTable(ctx, ident, nil, []table.Update{
				table.NewSetSnapshotRefUpdate("v1-tag", snap, table.TagRef, -1, -1, -1),
			})
			if err != nil {
				t.Fatal(err)
			}
			checkAssembled(t, &w.metas.snaps, "tagged", meta)
			// Expiring the oldest snapshot changes the list's start.
			oldest := meta.Snapshots()[0].SnapshotID
			meta, _, err = w.CommitTable(ctx, ident, nil, []table.Update{table.NewRemoveSnapshotsUpdate([]int64{oldest}, false)})
			if err != nil {
				t.Fatal(err)
			}
			if len(meta.Snapshots()) != 5 {
				t.Fatalf("%d snapshots after expiring one of 6", len(meta.Snapshots()))
			}
			checkAssembled(t, &w.metas.snaps, "expired", meta)
			// The encodings kept for the table serve a fresh handle too.
			checkAssembled(t, &snapshotEncodings{}, "fresh cache", meta)
		})
	}
}

// TestAssembledMetadataOfOtherEngines checks the assembly on every metadata
// file the shared fixtures hold (Spark, Trino, PyIceberg, ... wrote them).
func TestAssembledMetadataOfOtherEngines(t *testing.T) {
	root := fixtures.Dir(t)
	c := &snapshotEncodings{}
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".metadata.json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		meta, err := table.ParseMetadataBytes(data)
		if err != nil {
			return nil // the deliberately invalid ones
		}
		checkAssembled(t, c, p, meta)
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("checked only %d metadata files", n)
	}
	t.Logf("%d metadata files encode the same", n)
}

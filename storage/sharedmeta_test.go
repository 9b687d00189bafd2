package storage

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestSharedMetadataBuildsTheSame applies updates of every kind a commit
// makes to a table's metadata as iceberg-go parsed it and to the same
// metadata shared (whose builder copies the snapshot list shallowly), and
// checks that both give the same next metadata and leave the base as it was.
func TestSharedMetadataBuildsTheSame(t *testing.T) {
	ctx := context.Background()
	for _, version := range []string{"1", "2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			w := openTestWarehouse(t, t.TempDir())
			mustCreateNamespace(t, w, "db")
			ident := table.Identifier{"db", "t"}
			tbl, err := w.CreateTable(ctx, ident, testSchema, catalog.WithProperties(iceberg.Properties{
				"format-version": version, table.MetadataPreviousVersionsMaxKey: "2",
			}))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, int64(i)), nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, ok := tbl.Metadata().(*sharedMetadata); !ok {
				t.Fatalf("the warehouse hands out %T, want *sharedMetadata", tbl.Metadata())
			}
			loc := tbl.MetadataLocation()
			real := unshared(tbl.Metadata())
			before := encodeForCompare(t, real)
			snaps := real.Snapshots()
			first, last := snaps[0].SnapshotID, snaps[len(snaps)-1].SnapshotID
			wider := iceberg.NewSchema(1, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
				iceberg.NestedField{ID: 2, Name: "x", Type: iceberg.PrimitiveTypes.String})
			cases := map[string][]table.Update{
				"properties": {table.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"})},
				"tag":        {table.NewSetSnapshotRefUpdate("tag", first, table.TagRef, -1, -1, -1)},
				"rollback":   {table.NewSetSnapshotRefUpdate("main", first, table.BranchRef, -1, -1, -1)},
				"expire":     {table.NewRemoveSnapshotsUpdate([]int64{first}, false)},
				"schema":     {table.NewAddSchemaUpdate(wider), table.NewSetCurrentSchemaUpdate(-1)},
				"branch":     {table.NewSetSnapshotRefUpdate("b", last, table.BranchRef, -1, -1, -1)},
			}
			if version != "3" {
				cases["upgrade"] = []table.Update{table.NewUpgradeFormatVersionUpdate(3)}
			}
			for name, updates := range cases {
				want, err := table.UpdateTableMetadata(real, updates, loc)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got, err := table.UpdateTableMetadata(share(real), updates, loc)
				if err != nil {
					t.Fatalf("%s on shared metadata: %v", name, err)
				}
				if g, w := encodeForCompare(t, got), encodeForCompare(t, want); !reflect.DeepEqual(g, w) {
					t.Errorf("%s: shared metadata builds\n%v\nwant\n%v", name, g, w)
				}
				if after := encodeForCompare(t, real); !reflect.DeepEqual(after, before) {
					t.Fatalf("%s changed the base metadata", name)
				}
			}
		})
	}
}

// encodeForCompare is meta's JSON as a value, without the time it was built.
func encodeForCompare(t *testing.T, meta table.Metadata) map[string]any {
	t.Helper()
	data, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	now, ok := m["last-updated-ms"]
	if !ok {
		t.Fatalf("metadata JSON without last-updated-ms: %s", data)
	}
	m["last-updated-ms"] = "(now)"
	ms, ok := m["snapshot-log"].([]any)
	if ok && len(ms) == 0 {
		t.Fatal("empty snapshot-log written")
	}
	// A change of the current snapshot (a rollback) logs it at the time of
	// the build, which two builds a millisecond apart do not share.
	for _, e := range ms {
		if entry, ok := e.(map[string]any); ok && entry["timestamp-ms"] == now {
			entry["timestamp-ms"] = "(now)"
		}
	}
	return m
}

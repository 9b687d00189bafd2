package engine_test

import (
	"slices"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestReplaceTableKeepsTheTable checks what REPLACE TABLE ... AS SELECT
// leaves in the metadata, as Iceberg's Java library does it: the same table
// (uuid, snapshots, metadata log) with a new current schema, spec and sort
// order, properties merged over the old ones, and icesql's column types of
// the old columns gone.
func TestReplaceTableKeepsTheTable(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id INT, v VARCHAR(10)) PARTITIONED BY (v) TBLPROPERTIES ('owner'='ann', 'stage'='one')",
		"INSERT INTO t VALUES (1, 'a')",
	)
	before := loadWithIcebergGo(t, dir, "db", "t")
	mustExec(t, conn,
		`CREATE OR REPLACE TABLE t PARTITIONED BY (bucket(4, n)) WRITE ORDERED BY n DESC
		 TBLPROPERTIES ('stage'='two') AS SELECT CAST(id AS SIGNED) + 1 AS n FROM t`)
	after := loadWithIcebergGo(t, dir, "db", "t")

	if before.Metadata().TableUUID() != after.Metadata().TableUUID() {
		t.Errorf("table uuid changed")
	}
	if got := len(slices.Collect(after.Metadata().SnapshotLogs())); got != 2 {
		t.Errorf("%d history entries, want 2", got)
	}
	if after.Schema().ID == before.Schema().ID || len(after.Metadata().Schemas()) != 2 {
		t.Errorf("schema %d of %d, want a second schema", after.Schema().ID, len(after.Metadata().Schemas()))
	}
	if f, ok := after.Schema().FindFieldByName("n"); !ok || f.ID <= before.Metadata().LastColumnID() {
		t.Errorf("column n: %+v, want a fresh id above %d", f, before.Metadata().LastColumnID())
	}
	if spec := after.Spec(); spec.NumFields() != 1 || spec.Field(0).Transform.String() != "bucket[4]" {
		t.Errorf("spec %s, want bucket[4](n)", spec)
	}
	if order := after.SortOrder(); order.Len() != 1 {
		t.Errorf("sort order %s, want n DESC", order)
	}
	props := after.Properties()
	if props["owner"] != "ann" || props["stage"] != "two" {
		t.Errorf("properties %v, want owner=ann (kept) and stage=two (replaced)", props)
	}
	for k := range props {
		if k == "icesql.column.2.type" { // v VARCHAR(10), a column the table no longer has
			t.Errorf("stale property %s=%s", k, props[k])
		}
	}
	snap := after.CurrentSnapshot()
	if snap == nil || snap.ParentSnapshotID != nil || snap.Summary.Operation != table.OpAppend {
		t.Fatalf("current snapshot %v, want an append without parent", snap)
	}
	if n := queryString(t, conn, "SELECT CAST(SUM(n) AS CHAR) FROM t"); n != "2" {
		t.Errorf("SUM(n) = %s, want 2", n)
	}
}

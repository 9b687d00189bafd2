package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestV3InsertRowLineage writes a format-version 3 table and reads it back
// with iceberg-go: every row has a distinct _row_id, each commit's rows take
// the ids from the table's next-row-id on, and next-row-id advances by the
// rows added.
func TestV3InsertRowLineage(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT, d DATE) PARTITIONED BY (days(d)) TBLPROPERTIES ('format-version'='3')",
		"INSERT INTO t VALUES (1, '2024-01-01'), (2, '2024-01-02')",
		"INSERT INTO t VALUES (3, '2024-01-01'), (4, '2024-01-03'), (5, NULL)",
	)
	if n := queryString(t, conn, "SELECT SUM(id) FROM t"); n != "15" {
		t.Errorf("SUM(id) = %s, want 15", n)
	}

	tbl := loadWithIcebergGo(t, dir, "db", "t")
	meta := tbl.Metadata()
	if v := meta.Version(); v != 3 {
		t.Fatalf("format version %d, want 3", v)
	}
	if next := meta.NextRowID(); next != 5 {
		t.Errorf("next-row-id %d after 5 rows, want 5", next)
	}
	var firstIDs []int64
	for _, s := range meta.Snapshots() {
		if s.FirstRowID == nil || s.AddedRows == nil {
			t.Fatalf("snapshot %d has no row lineage (first-row-id %v, added-rows %v)", s.SnapshotID, s.FirstRowID, s.AddedRows)
		}
		firstIDs = append(firstIDs, *s.FirstRowID)
	}
	if !slices.Equal(firstIDs, []int64{0, 2}) {
		t.Errorf("snapshots' first-row-ids %v, want [0 2]", firstIDs)
	}

	byID := rowIDs(t, tbl)
	seen := map[int64]bool{}
	for id, rowID := range byID {
		if seen[rowID] || rowID < 0 || rowID >= 5 {
			t.Errorf("row %d has _row_id %d: not a distinct id below next-row-id 5 (%v)", id, rowID, byID)
		}
		seen[rowID] = true
		// The first commit's rows hold ids 0-1, the second's 2-4.
		if first := id <= 2; first != (rowID < 2) {
			t.Errorf("row %d has _row_id %d, outside its commit's range (%v)", id, rowID, byID)
		}
	}
	if len(byID) != 5 {
		t.Errorf("read %d rows, want 5", len(byID))
	}
}

// TestV3UpgradeRowLineage upgrades a table with rows to format-version 3 and
// appends: the older rows, which had no ids, get distinct ids too.
func TestV3UpgradeRowLineage(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT)",
		"INSERT INTO t VALUES (1), (2)",
		"ALTER TABLE t SET TBLPROPERTIES ('format-version' = '3')",
		"INSERT INTO t VALUES (3)",
	)
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	if next := tbl.Metadata().NextRowID(); next != 3 {
		t.Errorf("next-row-id %d after 3 rows, want 3", next)
	}
	byID := rowIDs(t, tbl)
	seen := map[int64]bool{}
	for id, rowID := range byID {
		if seen[rowID] || rowID < 0 || rowID >= 3 {
			t.Errorf("row %d has _row_id %d: not a distinct id below 3 (%v)", id, rowID, byID)
		}
		seen[rowID] = true
	}
	if len(byID) != 3 {
		t.Errorf("read %d rows, want 3", len(byID))
	}
}

// rowIDs reads the table with iceberg-go and returns each row's _row_id by
// its id column.
func rowIDs(t *testing.T, tbl *table.Table) map[int64]int64 {
	t.Helper()
	_, itr, err := tbl.Scan(table.WithRowLineage()).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]int64{}
	for rec, err := range itr {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		rowIDs := rec.Column(rec.Schema().FieldIndices(iceberg.RowIDColumnName)[0]).(*array.Int64)
		for i := range int(rec.NumRows()) {
			if rowIDs.IsNull(i) {
				t.Fatalf("row %d has a NULL _row_id", ids.Value(i))
			}
			byID[ids.Value(i)] = rowIDs.Value(i)
		}
		rec.Release()
	}
	return byID
}

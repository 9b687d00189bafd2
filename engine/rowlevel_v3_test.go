package engine_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestV3CopyOnWriteKeepsRowIDs changes rows of a format-version 3 table and
// reads it back with iceberg-go: rows a copy-on-write rewrite copies keep
// their _row_id and _last_updated_sequence_number, rows the statements did
// not touch keep theirs, an updated row keeps its _row_id, and a
// merge-on-read delete of a row whose file stores its id deletes that row.
func TestV3CopyOnWriteKeepsRowIDs(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('format-version'='3')",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
		"INSERT INTO t VALUES (4, 'd'), (5, 'e'), (7, 'g')",
	)
	before := lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))

	mustExec(t, conn, "DELETE FROM t WHERE id = 2")
	after := lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))
	want := maps.Clone(before)
	delete(want, 2)
	if !maps.Equal(after, want) {
		t.Fatalf("after DELETE: lineage %v, want %v", after, want)
	}

	// A second rewrite of the rewritten file: the stored ids are read back
	// and copied again.
	mustExec(t, conn, "DELETE FROM t WHERE id = 3")
	after = lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))
	delete(want, 3)
	if !maps.Equal(after, want) {
		t.Fatalf("after second DELETE: lineage %v, want %v", after, want)
	}
	if n := queryString(t, conn, "SELECT GROUP_CONCAT(id ORDER BY id) FROM t"); n != "1,4,5,7" {
		t.Fatalf("rows %s, want 1,4,5,7", n)
	}

	// Merge-on-read on the rewritten file, whose rows store their ids: the
	// deletion vector must mark the position of the row deleted.
	mustExec(t, conn,
		"ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')",
		"UPDATE t SET v = 'y' WHERE id = 5", // copy-on-write: 4 moves with its id
		"DELETE FROM t WHERE id = 4",
	)
	if n := queryString(t, conn, "SELECT GROUP_CONCAT(id ORDER BY id) FROM t"); n != "1,5,7" {
		t.Fatalf("rows %s, want 1,5,7", n)
	}
	if n := queryString(t, conn, "SELECT COUNT(*) FROM db.t.delete_files"); n != "1" {
		t.Fatalf("%s delete files, want the one DV", n)
	}
	after = lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))
	delete(want, 4)
	// The updated row keeps its id and takes the UPDATE's sequence number.
	if got, old := after[5], want[5]; got.rowID != old.rowID || got.seq <= old.seq {
		t.Errorf("updated row 5 has lineage %v, want row id %d and a sequence number above %d", got, old.rowID, old.seq)
	}
	delete(want, 5)
	delete(after, 5)
	if !maps.Equal(after, want) {
		t.Fatalf("after merge-on-read DELETE: lineage %v, want %v", after, want)
	}
}

type rowLineage struct{ rowID, seq int64 }

// lineageByID reads each row's _row_id and _last_updated_sequence_number
// with iceberg-go, by its id column.
func lineageByID(t *testing.T, tbl *table.Table) map[int64]rowLineage {
	t.Helper()
	_, itr, err := tbl.Scan(table.WithRowLineage()).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]rowLineage{}
	for rec, err := range itr {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		rowIDs := rec.Column(rec.Schema().FieldIndices(iceberg.RowIDColumnName)[0]).(*array.Int64)
		seqs := rec.Column(rec.Schema().FieldIndices(iceberg.LastUpdatedSequenceNumberColumnName)[0]).(*array.Int64)
		for i := range int(rec.NumRows()) {
			if rowIDs.IsNull(i) || seqs.IsNull(i) {
				t.Fatalf("row %d has a NULL _row_id or _last_updated_sequence_number", ids.Value(i))
			}
			out[ids.Value(i)] = rowLineage{rowIDs.Value(i), seqs.Value(i)}
		}
		rec.Release()
	}
	return out
}

// TestV3MergeKeepsRowIDs runs a merge-on-read MERGE on a format-version 3
// table: the updated row keeps its _row_id, the inserted row gets a new
// one from next-row-id, the untouched row keeps its lineage, and next-row-id
// advances past every id given out.
func TestV3MergeKeepsRowIDs(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='merge-on-read')",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
	)
	before := lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))
	mustExec(t, conn, `MERGE INTO t USING (SELECT * FROM VALUES (2, 'B'), (3, 'del'), (4, 'd') AS s(id, v)) s ON t.id = s.id
		WHEN MATCHED AND s.v = 'del' THEN DELETE
		WHEN MATCHED THEN UPDATE SET v = s.v
		WHEN NOT MATCHED THEN INSERT *`)
	if n := queryString(t, conn, "SELECT GROUP_CONCAT(CONCAT(id, v) ORDER BY id) FROM t"); n != "1a,2B,4d" {
		t.Fatalf("rows %s, want 1a,2B,4d", n)
	}
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	after := lineageByID(t, tbl)
	if after[1] != before[1] {
		t.Errorf("untouched row 1: lineage %v, want %v", after[1], before[1])
	}
	if after[2].rowID != before[2].rowID || after[2].seq <= before[2].seq {
		t.Errorf("updated row 2: lineage %v, want row id %d and a sequence number above %d", after[2], before[2].rowID, before[2].seq)
	}
	next := tbl.Metadata().NextRowID()
	if id := after[4].rowID; id < 3 || id >= next {
		t.Errorf("inserted row 4 has _row_id %d, want a new id in [3, %d)", id, next)
	}
}

// TestV3RewriteDataFilesKeepsRowIDs compacts a format-version 3 table with
// rewrite_data_files, binpack then sort, after a merge-on-read delete: the
// deleted row stays deleted, the DV goes, and every row keeps its
// _row_id and _last_updated_sequence_number.
func TestV3RewriteDataFilesKeepsRowIDs(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')",
		"INSERT INTO t VALUES (3, 'c'), (1, 'a'), (2, 'b')",
		"INSERT INTO t VALUES (5, 'e'), (4, 'd')",
		"DELETE FROM t WHERE id = 2",
	)
	want := lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))
	for _, call := range []string{
		"CALL system.rewrite_data_files(table => 'db.t', options => map('rewrite-all', 'true'))",
		"CALL system.rewrite_data_files(table => 'db.t', strategy => 'sort', sort_order => 'id DESC', options => map('rewrite-all', 'true'))",
	} {
		mustExec(t, conn, call)
		if n := queryString(t, conn, "SELECT GROUP_CONCAT(id ORDER BY id) FROM t"); n != "1,3,4,5" {
			t.Fatalf("after %s: rows %s, want 1,3,4,5", call, n)
		}
		if n := queryString(t, conn, "SELECT COUNT(*) FROM db.t.delete_files"); n != "0" {
			t.Fatalf("after %s: %s delete files, want none", call, n)
		}
		if got := lineageByID(t, loadWithIcebergGo(t, dir, "db", "t")); !maps.Equal(got, want) {
			t.Fatalf("after %s: lineage %v, want %v", call, got, want)
		}
	}
}

// TestV3DeletionVectorReadByIcebergGo deletes rows in merge-on-read mode and
// reads the table with iceberg-go's own planner and scanner: the data file
// has exactly one DV, and the deleted rows are gone.
func TestV3DeletionVectorReadByIcebergGo(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT, d STRING) PARTITIONED BY (d) TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')",
		"INSERT INTO t VALUES (1, 'x'), (2, 'x'), (3, 'x'), (4, 'y'), (5, 'y')",
		"DELETE FROM t WHERE id = 2",
		"DELETE FROM t WHERE id IN (3, 5)",
	)
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dvs := 0
	for _, task := range tasks {
		if len(task.DeleteFiles) != 0 || len(task.DeletionVectorFiles) > 1 {
			t.Errorf("%s: %d position delete files and %d DVs, want at most one DV", task.File.FilePath(), len(task.DeleteFiles), len(task.DeletionVectorFiles))
		}
		for _, d := range task.DeletionVectorFiles {
			dvs++
			if d.Partition()[1000] != task.File.Partition()[1000] {
				t.Errorf("DV in partition %v for a file of %v", d.Partition(), task.File.Partition())
			}
		}
	}
	if dvs != 2 {
		t.Errorf("%d DVs, want one for each of the 2 files", dvs)
	}
	got := []int64{}
	for id := range lineageByID(t, tbl) {
		got = append(got, id)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 4}) {
		t.Errorf("iceberg-go reads ids %v, want [1 4]", got)
	}
}

// TestV3UpdateTwiceInTransaction updates one row twice in a transaction,
// in each write mode: the second UPDATE reads the row from the file the
// first one staged, where its id is stored, and the row keeps that id.
func TestV3UpdateTwiceInTransaction(t *testing.T) {
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			conn := openDB(t, dir)
			mustExec(t, conn,
				"CREATE DATABASE db",
				"USE db",
				"CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('format-version'='3', 'write.update.mode'='"+mode+"')",
				"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
			)
			before := lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))
			mustExec(t, conn,
				"BEGIN",
				"UPDATE t SET v = 'x' WHERE id = 2",
				"UPDATE t SET v = 'y' WHERE id = 2",
				"INSERT INTO t VALUES (3, 'c')",
				"UPDATE t SET v = 'z' WHERE id = 3",
				"COMMIT",
			)
			if n := queryString(t, conn, "SELECT GROUP_CONCAT(CONCAT(id, v) ORDER BY id) FROM t"); n != "1a,2y,3z" {
				t.Fatalf("rows %s, want 1a,2y,3z", n)
			}
			tbl := loadWithIcebergGo(t, dir, "db", "t")
			after := lineageByID(t, tbl)
			if after[1] != before[1] || after[2].rowID != before[2].rowID || after[2].seq <= before[2].seq {
				t.Errorf("lineage %v, want rows 1 and 2 to keep their ids %v (2 with a new sequence number)", after, before)
			}
			if id := after[3].rowID; id < 2 || id >= tbl.Metadata().NextRowID() || id == after[2].rowID {
				t.Errorf("row 3 has _row_id %d, want a new id", id)
			}
		})
	}
}

// TestV3ReplaceTableRowIDs replaces a v3 table's contents: the new rows
// take ids from the next-row-id the table had, which advances past them.
func TestV3ReplaceTableRowIDs(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT) TBLPROPERTIES ('format-version'='3')",
		"INSERT INTO t VALUES (1), (2)",
		"REPLACE TABLE t AS SELECT CAST(id + 10 AS SIGNED) AS id FROM (SELECT 1 AS id UNION ALL SELECT 2) s",
	)
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	got := lineageByID(t, tbl)
	if len(got) != 2 || got[11].rowID == got[12].rowID || min(got[11].rowID, got[12].rowID) < 2 || max(got[11].rowID, got[12].rowID) >= tbl.Metadata().NextRowID() {
		t.Errorf("lineage %v with next-row-id %d: want rows 11 and 12 with distinct new ids", got, tbl.Metadata().NextRowID())
	}
}

// TestV3RowIDsSurviveEveryMode inserts rows whose ids are their positions
// (one commit into an empty table: _row_id = id - 1), then deletes and
// updates 1% of them at a time in copy-on-write and then merge-on-read mode,
// so that later statements read files that store ids: every surviving row
// still has its first id.
func TestV3RowIDsSurviveEveryMode(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	var b strings.Builder
	b.WriteString("INSERT INTO t VALUES ")
	for i := 1; i <= 2000; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,'v%d')", i, i)
	}
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('format-version'='3')",
		b.String(),
		"DELETE FROM t WHERE id % 100 = 1",
		"DELETE FROM t WHERE id % 100 = 2",
		"UPDATE t SET v = 'x' WHERE id % 100 = 3",
		"ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
		"DELETE FROM t WHERE id % 100 = 4",
		"DELETE FROM t WHERE id % 100 = 5",
		"UPDATE t SET v = 'y' WHERE id % 100 = 6",
	)
	if got := queryString(t, conn, "SELECT CONCAT(COUNT(*), ' ', SUM(v = 'x'), ' ', SUM(v = 'y')) FROM t"); got != "1920 20 20" {
		t.Fatalf("rows, updated x, updated y: %s, want 1920 20 20", got)
	}
	lin := lineageByID(t, loadWithIcebergGo(t, dir, "db", "t"))
	if len(lin) != 1920 {
		t.Fatalf("iceberg-go reads %d rows, want 1920", len(lin))
	}
	for id, l := range lin {
		if l.rowID != id-1 {
			t.Fatalf("row %d has _row_id %d, want %d", id, l.rowID, id-1)
		}
	}
}

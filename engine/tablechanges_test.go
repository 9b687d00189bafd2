package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// appendIDs appends one row per id to a table whose only column is id BIGINT.
func appendIDs(t *testing.T, tbl *table.Table, ids ...int64) {
	t.Helper()
	arrowSchema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(arrowSchema, []arrow.RecordBatch{rec})
	defer at.Release()
	if _, err := tbl.AppendTable(context.Background(), at, 100, nil); err != nil {
		t.Fatal(err)
	}
}

// collect runs q and returns its rows, values joined by spaces and rows by |.
func collect(t *testing.T, conn *sql.Conn, q string) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.String
			if !v.Valid {
				parts[i] = "NULL"
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(out, "|")
}

// TestTableChangesDeletes checks the DELETE rows of table_changes for a
// copy-on-write delete, which iceberg-go commits here since icesql's own
// DELETE is not there yet: the rewritten file's unchanged rows cancel out,
// as in Spark's changelog views. Merge-on-read deletes come back too.
func TestTableChangesDeletes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT, s STRING)",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO t VALUES (3, 'c')",
		"CREATE TABLE m (id BIGINT) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
		"INSERT INTO m VALUES (1), (2), (3)",
		"CREATE TABLE dv (id BIGINT) TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')",
	)
	// icesql cannot write v3 tables yet (rows need first_row_id), so
	// iceberg-go writes the v3 table's rows.
	appendIDs(t, loadWithIcebergGo(t, dir, "db", "dv"), 1, 2, 3)
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	if _, err := tbl.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(2)), nil); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, conn, "SELECT operation FROM db.t.snapshots s JOIN db.t.refs r ON r.snapshot_id = s.snapshot_id"); got != "overwrite" && got != "delete" {
		t.Errorf("the delete's snapshot operation is %s", got)
	}

	all := collect(t, conn, "SELECT id, s, _change_type, _change_ordinal FROM table_changes('db.t', NULL) ORDER BY _change_ordinal, _change_type DESC, id")
	if want := "1 a INSERT 0|2 b INSERT 0|3 c INSERT 1|2 b DELETE 2"; all != want {
		t.Errorf("changes:\n got %s\nwant %s", all, want)
	}
	last := collect(t, conn, `SELECT id, _change_type, _change_ordinal FROM table_changes('db.t',
		(SELECT DISTINCT snapshot_id FROM db.t.entries WHERE sequence_number = 2 AND status = 1))`)
	if want := "2 DELETE 0"; last != want {
		t.Errorf("changes after the second insert:\n got %s\nwant %s", last, want)
	}

	// Merge-on-read deletes, as position delete files (v2) and deletion
	// vectors (v3): the deleted rows come back as DELETE rows.
	for _, name := range []string{"m", "dv"} {
		mor := loadWithIcebergGo(t, dir, "db", name)
		if _, err := mor.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(2)), nil); err != nil {
			t.Fatal(err)
		}
		if n := queryString(t, conn, "SELECT COUNT(*) FROM db."+name+".delete_files"); n != "1" {
			t.Fatalf("%s: merge-on-read delete wrote %s delete files, want 1", name, n)
		}
		got := collect(t, conn, "SELECT id, _change_type, _change_ordinal FROM table_changes('db."+name+"', NULL) ORDER BY _change_ordinal, id")
		if want := "1 INSERT 0|2 INSERT 0|3 INSERT 0|2 DELETE 1"; got != want {
			t.Errorf("%s changes:\n got %s\nwant %s", name, got, want)
		}
		// A second delete: only the row it deleted, not the earlier one.
		mor = loadWithIcebergGo(t, dir, "db", name)
		if _, err := mor.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(3)), nil); err != nil {
			t.Fatal(err)
		}
		got = collect(t, conn, "SELECT id, _change_type, _change_ordinal FROM table_changes('db."+name+"', NULL) WHERE _change_ordinal > 0 ORDER BY _change_ordinal, id")
		if want := "2 DELETE 1|3 DELETE 2"; got != want {
			t.Errorf("%s changes after a second delete:\n got %s\nwant %s", name, got, want)
		}
		// The position_deletes metadata table lists both deleted positions.
		if got := collect(t, conn, "SELECT pos FROM db."+name+".position_deletes ORDER BY pos"); got != "1|2" {
			t.Errorf("%s position_deletes: positions %s, want 1|2", name, got)
		}
	}

	// An equality delete (id = 2) applies to the rows written before it.
	mustExec(t, conn,
		"CREATE TABLE eq (id BIGINT) TBLPROPERTIES ('format-version'='2')",
		"INSERT INTO eq VALUES (1), (2), (3)",
	)
	eq := loadWithIcebergGo(t, dir, "db", "eq")
	keys := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil))
	keys.Field(0).(*array.Int64Builder).Append(2)
	rec := keys.NewRecordBatch()
	keys.Release()
	tx := eq.NewTransaction()
	if err := tx.CommitEqualityDeletes(ctx, []int{1}, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, conn, "SELECT GROUP_CONCAT(id ORDER BY id) FROM db.eq"); got != "1,3" {
		t.Fatalf("after the equality delete the table holds %s, want 1,3", got)
	}
	got := collect(t, conn, "SELECT id, _change_type, _change_ordinal FROM table_changes('db.eq', NULL) WHERE _change_type = 'DELETE'")
	if want := "2 DELETE 1"; got != want {
		t.Errorf("equality delete changes:\n got %s\nwant %s", got, want)
	}
}

// TestTableChangesAfterRollback: after a rollback the rolled-back snapshot
// is no longer in the current history, so it cannot start a changelog, and
// the changes up to now leave it out.
func TestTableChangesAfterRollback(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE t (id BIGINT)",
		"INSERT INTO t VALUES (1)",
		"INSERT INTO t VALUES (2)",
	)
	first := queryString(t, conn, "SELECT snapshot_id FROM db.t.snapshots WHERE parent_id IS NULL")
	second := queryString(t, conn, "SELECT snapshot_id FROM db.t.snapshots WHERE parent_id IS NOT NULL")
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	tx := tbl.NewTransaction()
	var id int64
	if _, err := fmt.Sscan(first, &id); err != nil {
		t.Fatal(err)
	}
	if err := tx.RollbackToSnapshot(id); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "INSERT INTO t VALUES (3)")
	if got := collect(t, conn, "SELECT id FROM table_changes('db.t', NULL) ORDER BY id"); got != "1|3" {
		t.Errorf("changes after the rollback: %s, want 1|3", got)
	}
	if got := collect(t, conn, "SELECT snapshot_id = "+second+", is_current_ancestor FROM db.t.history ORDER BY snapshot_id = "+second+" DESC LIMIT 1"); got != "1 0" {
		t.Errorf("history of the rolled-back snapshot: %s, want 1 0", got)
	}
	_, err := conn.QueryContext(ctx, "SELECT * FROM table_changes('db.t', "+second+")")
	if err == nil || !strings.Contains(err.Error(), "not an ancestor") || !strings.Contains(err.Error(), "1210") {
		t.Errorf("table_changes from a rolled-back snapshot: %v, want error 1210 not an ancestor", err)
	}
}

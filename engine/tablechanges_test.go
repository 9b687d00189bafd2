package engine_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

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
// as in Spark's changelog views. A merge-on-read delete is refused clearly.
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
		"INSERT INTO m VALUES (1), (2)",
	)
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

	mor := loadWithIcebergGo(t, dir, "db", "m")
	if _, err := mor.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(2)), nil); err != nil {
		t.Fatal(err)
	}
	if n := queryString(t, conn, "SELECT COUNT(*) FROM db.m.delete_files"); n != "1" {
		t.Fatalf("merge-on-read delete wrote %s delete files, want 1", n)
	}
	_, err := conn.QueryContext(ctx, "SELECT * FROM table_changes('db.m', NULL)")
	if err == nil || !strings.Contains(err.Error(), "merge-on-read") {
		t.Errorf("table_changes over a merge-on-read delete: %v, want a merge-on-read error", err)
	}
}

package procedures_test

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/icesql/icesql/storage"
)

// The byte counts rewrite_position_delete_files returns and the order of
// the rows it writes vary with the warehouse path, so they are checked here
// against the table's metadata and the written file.

func morTable(t *testing.T) *sql.DB {
	t.Helper()
	db, _ := openDB(t)
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id INT, name STRING) TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')")
	exec(t, db, "INSERT INTO d.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
	exec(t, db, "INSERT INTO d.t VALUES (11, 'k'), (12, 'l'), (13, 'm')")
	// Deleted out of position order, so that the merged file must sort.
	for _, id := range []int{13, 4, 2, 11} {
		exec(t, db, "DELETE FROM d.t WHERE id = "+strconv.Itoa(id))
	}
	return db
}

func TestRewritePositionDeletesOutput(t *testing.T) {
	db := morTable(t)
	before := oneInt(t, db, "SELECT SUM(file_size_in_bytes) FROM d.t.delete_files")
	got := queryStrings(t, db, "CALL system.rewrite_position_delete_files(table => 'd.t', options => map('rewrite-all', 'true'))")
	after := queryStrings(t, db, "SELECT file_path, file_size_in_bytes FROM d.t.delete_files")
	if len(after) != 1 {
		t.Fatalf("delete files after the rewrite: %v, want one", after)
	}
	want := []string{"4", "1", strconv.FormatInt(before, 10), after[0][1]}
	if len(got) != 1 || !slices.Equal(got[0], want) {
		t.Fatalf("output %v, want %v", got, want)
	}
	rows, err := storage.ReadPositionDeletes(context.Background(), icebergio.LocalFS{}, strings.TrimPrefix(after[0][0], "file://"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || !slices.IsSortedFunc(rows, storage.ComparePositionDeletes) {
		t.Fatalf("merged rows %v: want 4 sorted by (file_path, pos)", rows)
	}
	if n := oneInt(t, db, "SELECT COUNT(*) FROM d.t"); n != 4 {
		t.Fatalf("COUNT(*) = %d after the rewrite, want 4", n)
	}
}

// target-file-size-bytes bounds the written files: a target of one byte
// writes one row a file.
func TestRewritePositionDeletesTargetSize(t *testing.T) {
	db := morTable(t)
	got := queryStrings(t, db, "CALL system.rewrite_position_delete_files(table => 'd.t', options => map('target-file-size-bytes', '1'))")
	if len(got) != 1 || got[0][0] != "4" || got[0][1] != "4" {
		t.Fatalf("output %v, want 4 files rewritten as 4", got)
	}
	if got := queryStrings(t, db, "SELECT COUNT(*), SUM(record_count) FROM d.t.delete_files"); !slices.Equal(got[0], []string{"4", "4"}) {
		t.Fatalf("delete files %v, want 4 of one row", got)
	}
	if got := queryStrings(t, db, "SELECT id FROM d.t ORDER BY id"); len(got) != 4 || got[0][0] != "1" || got[3][0] != "12" {
		t.Fatalf("rows after the rewrite: %v, want 1 3 5 12", got)
	}
}

package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/icesql/icesql/engine"
)

// recorder is a QueryObserver that keeps every statement's event.
type recorder struct {
	mu     sync.Mutex
	events []engine.QueryEvent
}

func (r *recorder) QueryDone(ev engine.QueryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}
func (r *recorder) SessionOpened() {}
func (r *recorder) SessionClosed() {}

// last is the event of the last statement whose text is query.
func (r *recorder) last(t *testing.T, query string) engine.QueryEvent {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Query == query {
			return r.events[i]
		}
	}
	t.Fatalf("no event for %q", query)
	return engine.QueryEvent{}
}

// TestQueryEventScansAndCommits checks the per-statement tallies the server
// hands its observer (the slow-query log and /metrics): data files planned,
// pruned by partition and read, bytes and rows read, and the tables a
// statement committed to or lost a commit on (1213).
func TestQueryEventScansAndCommits(t *testing.T) {
	rec := &recorder{}
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0", Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Close() })
	a, b := wireConn(t, srv.Addr()), wireConn(t, srv.Addr())
	// files_read and bytes_read count the files scans open: the
	// decoded-file cache opens none (TestFileCacheCountsNoFileRead).
	mustExec(t, a, "SET icesql_file_cache = OFF")
	mustExec(t, b, "SET icesql_file_cache = OFF")

	mustExec(t, a, "CREATE DATABASE db", "CREATE TABLE db.p (id INT, d DATE) PARTITIONED BY (days(d))",
		"INSERT INTO db.p VALUES (1, '2024-01-01')", "INSERT INTO db.p VALUES (2, '2024-01-02')", "INSERT INTO db.p VALUES (3, '2024-01-03')")
	if ev := rec.last(t, "INSERT INTO db.p VALUES (3, '2024-01-03')"); len(ev.Commits) != 1 || ev.Commits[0] != (engine.CommitTally{Table: "db.p"}) {
		t.Errorf("INSERT under autocommit: commits %+v, want one to db.p", ev.Commits)
	}

	const pruned = "SELECT id FROM db.p WHERE d = '2024-01-02'"
	if got := queryInt(t, a, pruned); got != 2 {
		t.Fatalf("%s: %d", pruned, got)
	}
	s := rec.last(t, pruned).Scan
	if s.FilesPlanned != 1 || s.FilesPruned != 2 || s.FilesRead != 1 || s.BytesRead <= 0 || s.BytesPlanned <= 0 {
		t.Errorf("partition-pruned SELECT: %+v, want 1 file planned and read, 2 pruned, bytes read", s)
	}
	if ev := rec.last(t, pruned); len(ev.Commits) != 0 {
		t.Errorf("a SELECT committed: %+v", ev.Commits)
	}

	if s.RowsRead != 1 {
		t.Errorf("partition-pruned SELECT read %d rows, want 1", s.RowsRead)
	}

	checkRowsRead(t, rec, a)

	const none = "SELECT 1"
	queryInt(t, a, none)
	if ev := rec.last(t, none); ev.Scan != (engine.ScanTally{}) || len(ev.Commits) != 0 {
		t.Errorf("a statement that reads no table: %+v %+v", ev.Scan, ev.Commits)
	}

	// Two transactions change the same row: the second COMMIT loses.
	mustExec(t, a, "BEGIN", "UPDATE db.p SET id = 20 WHERE id = 2")
	mustExec(t, b, "BEGIN", "UPDATE db.p SET id = 21 WHERE id = 2")
	mustExec(t, a, "COMMIT")
	if ev := rec.last(t, "COMMIT"); len(ev.Commits) != 1 || ev.Commits[0] != (engine.CommitTally{Table: "db.p"}) {
		t.Errorf("the first COMMIT: commits %+v, want one to db.p", ev.Commits)
	}
	if _, err := b.ExecContext(context.Background(), "COMMIT"); err == nil {
		t.Fatal("the second COMMIT succeeded")
	}
	ev := rec.last(t, "COMMIT")
	if ev.Code != 1213 || len(ev.Commits) != 1 || ev.Commits[0] != (engine.CommitTally{Table: "db.p", Conflict: true}) {
		t.Errorf("the losing COMMIT: code %d, commits %+v, want 1213 and a conflict on db.p", ev.Code, ev.Commits)
	}
}

// checkRowsRead checks the rows statements read from a table of 40,000
// rows in two files (one of several Arrow batches), on the vector path
// and the row path: every row for a scan of the whole table, the rows of
// the file kept for a partition-pruned one, none for COUNT(*) answered
// from metadata, and no row a delete file deletes; table_changes counts
// the rows of each change's files.
func checkRowsRead(t *testing.T, rec *recorder, c *sql.Conn) {
	t.Helper()
	values := func(from, to int, day string) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			if i > from {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,'%s')", i, day)
		}
		return b.String()
	}
	mustExec(t, c, "CREATE TABLE db.r (id INT, d DATE) PARTITIONED BY (days(d)) TBLPROPERTIES ('write.delete.mode'='merge-on-read')",
		"INSERT INTO db.r VALUES "+values(0, 35000, "2024-02-01"),
		"INSERT INTO db.r VALUES "+values(35000, 40000, "2024-02-02"))
	// check runs query and compares the data files (-1: any) and rows it read.
	check := func(vectorize, query string, files, rows int64) {
		t.Helper()
		rs, err := c.QueryContext(context.Background(), query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		for rs.Next() {
		}
		if err := rs.Err(); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		rs.Close()
		s := rec.last(t, query).Scan
		if (files >= 0 && s.FilesRead != files) || s.RowsRead != rows {
			t.Errorf("vectorize %s: %s: %d files and %d rows read, want %d and %d", vectorize, query, s.FilesRead, s.RowsRead, files, rows)
		}
	}
	const topN = "SELECT id FROM db.r ORDER BY id DESC LIMIT 3"
	for _, vectorize := range []string{"ON", "OFF"} {
		mustExec(t, c, "SET icesql_vectorize = "+vectorize)
		if explain := explainText(t, c, topN); (vectorize == "ON") != strings.Contains(explain, "builds only the rows that can be among") {
			t.Errorf("vectorize %s: EXPLAIN %s:\n%s", vectorize, topN, explain)
		}
		check(vectorize, "SELECT SUM(id) FROM db.r", 2, 40000)
		check(vectorize, "SELECT id FROM db.r WHERE id >= 0", 2, 40000)
		check(vectorize, topN, 2, 40000)
		check(vectorize, "SELECT SUM(id) FROM db.r WHERE d = '2024-02-02'", 1, 5000)
		check(vectorize, "SELECT COUNT(*) FROM db.r", 0, 0) // from metadata
	}
	// A prepared statement, executed twice, counts each execution's rows.
	const prepared = "SELECT SUM(id) FROM db.r WHERE id >= ?"
	for range 2 {
		if _, err := c.ExecContext(context.Background(), prepared, 35000); err != nil {
			t.Fatalf("%s: %v", prepared, err)
		}
		if s := rec.last(t, prepared).Scan; s.FilesRead != 1 || s.RowsRead != 5000 {
			t.Errorf("%s: %d files and %d rows read, want the second file's 5,000 (the first one's statistics prune it)", prepared, s.FilesRead, s.RowsRead)
		}
	}
	// table_changes reads each change's data file: both inserts.
	const changes = "SELECT COUNT(*) FROM table_changes('db.r', NULL)"
	mustExec(t, c, "USE db") // table functions need a current database
	check("OFF", changes, -1, 40000)
	// A position delete file on the first file: its rows are read, less
	// the deleted ones (iceberg-go's reader applies it, native decoding
	// reads the other file).
	mustExec(t, c, "DELETE FROM db.r WHERE id < 10")
	if n := queryInt(t, c, "SELECT COUNT(*) FROM db.r.delete_files"); n != 1 {
		t.Fatalf("DELETE wrote %d delete files, want 1", n)
	}
	for _, vectorize := range []string{"ON", "OFF"} {
		mustExec(t, c, "SET icesql_vectorize = "+vectorize)
		check(vectorize, "SELECT SUM(id) FROM db.r", -1, 39990)
	}
	// The delete's change is the first file's rows before it and after.
	check("OFF", changes, -1, 40000+35000+34990)
}

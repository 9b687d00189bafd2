package engine_test

import (
	"context"
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
// pruned by partition and read, bytes read, and the tables a statement
// committed to or lost a commit on (1213).
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

package procedures_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// failingRemoves is a local store whose file IO cannot delete (a read-only
// folder, to a process that chmod does not stop).
type failingRemoves struct {
	storage.LocalStore
	on *atomic.Bool
}

func (s failingRemoves) IO() icebergio.IO { return noRemoveFS{on: s.on} }

type noRemoveFS struct {
	icebergio.LocalFS
	on *atomic.Bool
}

func (f noRemoveFS) Remove(name string) error {
	if f.on.Load() {
		return errors.New("injected: read-only folder")
	}
	return f.LocalFS.Remove(name)
}

// TestExpireSnapshotsCommitsBeforeDeleting expires snapshots while no file
// can be deleted: the expiry is committed and the statement succeeds, with
// a warning (1011) that names what is left; the table reads in full.
func TestExpireSnapshotsCommitsBeforeDeleting(t *testing.T) {
	ctx := context.Background()
	var on atomic.Bool
	e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir(), Store: failingRemoves{on: &on}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	db := sql.OpenDB(e.Connector())
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec(t, conn, "CREATE DATABASE d")
	exec(t, conn, "CREATE TABLE d.t (id BIGINT)")
	for _, q := range []string{"INSERT INTO d.t VALUES (1)", "DELETE FROM d.t", "INSERT INTO d.t VALUES (2)", "INSERT INTO d.t VALUES (3)"} {
		exec(t, conn, q)
	}
	on.Store(true)
	if _, err := conn.ExecContext(ctx, "CALL system.expire_snapshots(table => 'd.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"); err != nil {
		t.Fatalf("expire_snapshots with deletes failing: %v; want success with a warning", err)
	}
	var level, msg string
	var code int
	if err := conn.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1011 || !strings.Contains(msg, "the snapshots are expired") {
		t.Errorf("warning = %d %q (%v); want 1011 saying the snapshots are expired", code, msg, err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t.snapshots").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d snapshots (%v); want 1: the expiry is committed", n, err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT SUM(id) FROM d.t").Scan(&n); err != nil || n != 5 {
		t.Errorf("SUM(id) = %d (%v); want 5", n, err)
	}
}

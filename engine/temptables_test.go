package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// TestTemporaryTableBelongsToItsSession checks, over the wire, that a
// temporary table is its session's alone: another session reads the
// Iceberg table it hides and may make its own of the same name, and once
// the session ends a new one finds no trace of it (SQL behaviour within
// one session: sqltests/testdata/temporary_tables.test).
func TestTemporaryTableBelongsToItsSession(t *testing.T) {
	ctx := context.Background()
	addr := wireServer(t, openEngine(t, engine.Config{Warehouse: t.TempDir()}))
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", addr
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(connector)
	defer pool.Close()
	a, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := wireConn(t, addr)

	mustExec(t, a, "CREATE DATABASE db", "CREATE TABLE db.t (id INT)", "INSERT INTO db.t VALUES (1)",
		"CREATE TEMPORARY TABLE db.t (id INT)", "INSERT INTO db.t VALUES (10), (20)",
		"CREATE TEMPORARY TABLE db.only_a (x INT)", "INSERT INTO db.only_a VALUES (1)")
	if got := queryInt(t, a, "SELECT SUM(id) FROM db.t"); got != 30 {
		t.Errorf("session a reads %d from db.t, want 30 from its temporary table", got)
	}
	if got := queryInt(t, b, "SELECT SUM(id) FROM db.t"); got != 1 {
		t.Errorf("session b reads %d from db.t, want 1 from the Iceberg table", got)
	}
	_, err = b.ExecContext(ctx, "SELECT * FROM db.only_a")
	wantMySQLError(t, "session b reads a's temporary table", err, 1146)

	mustExec(t, b, "CREATE TEMPORARY TABLE db.only_a (x INT)", "INSERT INTO db.only_a VALUES (5), (6)")
	if got := queryInt(t, a, "SELECT COUNT(*) FROM db.only_a"); got != 1 {
		t.Errorf("session a counts %d rows in its db.only_a, want 1", got)
	}

	// End session a: its connection closes.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	c := wireConn(t, addr)
	_, err = c.ExecContext(ctx, "SELECT * FROM db.only_a")
	wantMySQLError(t, "a new session reads the ended session's temporary table", err, 1146)
	if got := queryInt(t, c, "SELECT SUM(id) FROM db.t"); got != 1 {
		t.Errorf("a new session reads %d from db.t, want 1 from the Iceberg table", got)
	}
	mustExec(t, c, "CREATE TEMPORARY TABLE db.only_a (y INT)")
	if got := queryInt(t, b, "SELECT SUM(x) FROM db.only_a"); got != 11 {
		t.Errorf("session b reads %d from its db.only_a, want 11", got)
	}
}

// wantMySQLError fails unless err is MySQL error code.
func wantMySQLError(t *testing.T, what string, err error, code uint16) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Fatalf("%s: want MySQL error %d, got %v", what, code, err)
	}
}

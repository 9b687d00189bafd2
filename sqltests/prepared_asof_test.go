package sqltests

import (
	"context"
	gosql "database/sql"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// TestPreparedAsOfParameter: AS OF ? in a server-side prepared statement
// is refused with an error, and the connection lives on (go-mysql-server
// panics binding it, which used to drop the connection).
func TestPreparedAsOfParameter(t *testing.T) {
	e := openEngine(t)
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Close() })
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", srv.Addr() // server-side prepares: interpolateParams is off
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn := pinnedConn(t, gosql.OpenDB(connector))
	ctx := context.Background()
	mustExec(t, conn, "CREATE DATABASE d")
	mustExec(t, conn, "CREATE TABLE d.t (id BIGINT)")
	mustExec(t, conn, "INSERT INTO d.t VALUES (1)")

	for _, q := range []string{
		"SELECT * FROM d.t AS OF ?",
		"SELECT * FROM d.t FOR SYSTEM_TIME AS OF ? WHERE id = 1",
		"SELECT * FROM d.t WHERE id IN (SELECT id FROM d.t AS OF ?)",
	} {
		_, err := conn.QueryContext(ctx, q, "123")
		if err == nil || !strings.Contains(err.Error(), "Error 1235") || !strings.Contains(err.Error(), "AS OF ?") {
			t.Errorf("%s: got %v, want error 1235 about AS OF ?", q, err)
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM d.t WHERE id = ?", 1).Scan(&n); err != nil || n != 1 {
			t.Fatalf("after %s the connection does not answer: %d, %v", q, n, err)
		}
	}
}

package engine

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// startTestServer opens the warehouse dir and serves it on a free loopback port.
func startTestServer(t *testing.T, dir string, cfg ServerConfig) (*Engine, *Server) {
	t.Helper()
	e, err := Open(context.Background(), Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	srv, err := e.NewServer(cfg)
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() {
		srv.Close()
		e.Close()
	})
	return e, srv
}

// dial opens a single-connection pool to srv as user.
func dial(t *testing.T, srv *Server, user, password string, tune ...func(*mysql.Config)) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", srv.Addr()
	for _, f := range tune {
		f(cfg)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// wantCode checks that err is MySQL error code.
func wantCode(t *testing.T, what string, err error, code uint16) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Fatalf("%s: want MySQL error %d, got %#v", what, code, err)
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUsersSurviveRestart creates a read-only user over the wire, restarts
// the engine on the same warehouse, and logs in as that user: the account,
// its password change and its grants came back from .icesql/privileges.db.
func TestUsersSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	admin := ServerConfig{User: "admin", Password: "admin-pw"}
	e1, srv1 := startTestServer(t, dir, admin)
	db := dial(t, srv1, "admin", "admin-pw")
	mustExec(t, db,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id BIGINT)",
		"INSERT INTO d.t VALUES (1), (2)",
		"CREATE USER 'reader'@'%' IDENTIFIED BY 'first'",
		"GRANT SELECT ON d.* TO 'reader'@'%'",
		"ALTER USER 'reader'@'%' IDENTIFIED BY 'second'",
		"CREATE USER 'gone'@'%' IDENTIFIED BY 'x'",
		"GRANT SELECT, INSERT ON d.* TO 'gone'@'%'",
		"REVOKE INSERT ON d.* FROM 'gone'@'%'",
	)
	db.Close()
	srv1.Close()
	e1.Close()
	if _, err := os.Stat(filepath.Join(dir, ".icesql", privilegesFile)); err != nil {
		t.Fatalf("users not saved in the warehouse: %v", err)
	}

	_, srv2 := startTestServer(t, dir, admin)
	reader := dial(t, srv2, "reader", "second")
	var n int
	if err := reader.QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("reader SELECT: %d, %v", n, err)
	}
	_, err := reader.Exec("INSERT INTO d.t VALUES (3)")
	wantCode(t, "reader INSERT", err, 1142)
	_, err = reader.Exec("CREATE TABLE d.u (id BIGINT)")
	wantCode(t, "reader CREATE TABLE", err, 1142)
	got := queryStrings(t, reader, "SHOW GRANTS")
	want := []string{"GRANT USAGE ON *.* TO `reader`@`%`", "GRANT SELECT ON `d`.* TO `reader`@`%`"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("SHOW GRANTS: got %q, want %q", got, want)
	}
	_, err = dial(t, srv2, "reader", "first").Exec("SELECT 1")
	wantCode(t, "old password", err, 1045)

	gone := dial(t, srv2, "gone", "x")
	_, err = gone.Exec("INSERT INTO d.t VALUES (3)")
	wantCode(t, "revoked INSERT", err, 1142)
	adm := dial(t, srv2, "admin", "admin-pw")
	mustExec(t, adm, "DROP USER 'gone'@'%'")
	_, err = dial(t, srv2, "gone", "x").Exec("SELECT 1")
	wantCode(t, "dropped user", err, 1045)
	if err := adm.QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("admin SELECT after refused INSERT: %d, %v", n, err)
	}
}

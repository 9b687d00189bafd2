package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/s3test"
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

// wantCode checks that err is MySQL error code, with SQLSTATE state when given.
func wantCode(t *testing.T, what string, err error, code uint16, state ...string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || (len(state) > 0 && string(me.SQLState[:]) != state[0]) {
		t.Fatalf("%s: want MySQL error %d %v, got %#v", what, code, state, err)
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
	if fi, err := os.Stat(filepath.Join(dir, ".icesql", privilegesFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("users not saved in the warehouse, or readable by others: %v %v", fi, err)
	}

	_, srv2 := startTestServer(t, dir, admin)
	reader := dial(t, srv2, "reader", "second")
	var n int
	if err := reader.QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("reader SELECT: %d, %v", n, err)
	}
	_, err := reader.Exec("INSERT INTO d.t VALUES (3)")
	wantCode(t, "reader INSERT", err, 1142, "42000")
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

// TestLoopbackServerAccounts: a server without --user admits any name
// from loopback without a password; the accounts created on it log in with
// their passwords and get only their grants, and SHOW GRANTS works for all.
func TestLoopbackServerAccounts(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{})
	anyone := dial(t, srv, "anyone", "")
	mustExec(t, anyone,
		"CREATE DATABASE d",
		"CREATE USER 'bob'@'%' IDENTIFIED BY 'bob-pw'",
		"GRANT SELECT ON d.* TO 'bob'@'%'",
	)
	var user string
	if err := dial(t, srv, "someone", "").QueryRow("SELECT USER()").Scan(&user); err != nil || user != "someone@localhost" {
		t.Fatalf("another name after CREATE USER: %q, %v", user, err)
	}
	if got := queryStrings(t, dial(t, srv, "root", ""), "SHOW GRANTS"); len(got) != 1 || !strings.HasSuffix(got[0], "CREATE ROLE, DROP ROLE ON *.* TO `root`@`localhost` WITH GRANT OPTION") {
		t.Fatalf("root's grants: %q", got)
	}
	_, err := dial(t, srv, "bob", "wrong").Exec("SELECT 1")
	wantCode(t, "bob with a wrong password", err, 1045)
	bob := dial(t, srv, "bob", "bob-pw")
	_, err = bob.Exec("CREATE TABLE d.t (id BIGINT)")
	wantCode(t, "bob CREATE TABLE", err, 1142)
	if got := queryStrings(t, bob, "SHOW GRANTS"); len(got) != 2 || got[1] != "GRANT SELECT ON `d`.* TO `bob`@`%`" {
		t.Fatalf("bob's grants: %q", got)
	}
}

// failingStore fails writes of the users file while fail is set.
type failingStore struct {
	storage.Store
	fail atomic.Bool
}

func (s *failingStore) WriteFile(ctx context.Context, loc string, data []byte) error {
	if s.fail.Load() && strings.HasSuffix(loc, privilegesFile) {
		return fmt.Errorf("injected write failure")
	}
	return s.Store.WriteFile(ctx, loc, data)
}

// TestUserChangeNotSavedIsUndone: a CREATE USER or GRANT whose save fails
// reports the failure and leaves the accounts as they were.
func TestUserChangeNotSavedIsUndone(t *testing.T) {
	dir := t.TempDir()
	st := &failingStore{Store: storage.LocalStore{}}
	e, err := Open(context.Background(), Config{Warehouse: dir, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	count := func(q string) int {
		t.Helper()
		e.privileges.restoring.Wait()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	st.fail.Store(true)
	if _, err := db.Exec("CREATE USER 'lost'@'%' IDENTIFIED BY 'x'"); err == nil || !strings.Contains(err.Error(), "injected write failure") {
		t.Fatalf("CREATE USER with a failing store: %v", err)
	}
	if n := count("SELECT COUNT(*) FROM mysql.user WHERE user = 'lost'"); n != 0 {
		t.Fatalf("unsaved user still exists")
	}
	st.fail.Store(false)
	mustExec(t, db, "CREATE USER 'kept'@'%' IDENTIFIED BY 'x'")
	st.fail.Store(true)
	if _, err := db.Exec("GRANT SELECT ON *.* TO 'kept'@'%'"); err == nil {
		t.Fatal("GRANT with a failing store succeeded")
	}
	if n := count("SELECT COUNT(*) FROM mysql.user WHERE user = 'kept' AND select_priv = 'Y'"); n != 0 {
		t.Fatalf("unsaved grant still in effect")
	}
	if n := count("SELECT COUNT(*) FROM mysql.user WHERE user = 'kept'"); n != 1 {
		t.Fatalf("saved user lost after a failed GRANT")
	}
	st.fail.Store(false)
	e.Close()
	e2, err := Open(context.Background(), Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	db2 := sql.OpenDB(e2.Connector())
	defer db2.Close()
	var users string
	if err := db2.QueryRow("SELECT GROUP_CONCAT(user ORDER BY user) FROM mysql.user WHERE user IN ('lost', 'kept')").Scan(&users); err != nil || users != "kept" {
		t.Fatalf("users after restart: %q, %v", users, err)
	}
}

// TestUsersOnS3Warehouse: accounts are saved in the bucket (through the
// warehouse's store) and come back for the next engine on it.
func TestUsersOnS3Warehouse(t *testing.T) {
	endpoint := s3test.StartServer(t)
	root := s3test.NewBucket(t, endpoint)
	cfg := Config{Warehouse: root, S3: storage.S3Config{Endpoint: endpoint, Region: s3test.Region, PathStyle: true,
		AccessKeyID: s3test.AccessKeyID, SecretAccessKey: s3test.SecretAccessKey}}
	e1, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	db1 := sql.OpenDB(e1.Connector())
	mustExec(t, db1, "CREATE USER 'carol'@'%' IDENTIFIED BY 'c'", "GRANT SELECT ON *.* TO 'carol'@'%'")
	db1.Close()
	e1.Close()
	if _, err := e1.cfg.Store.ReadFile(context.Background(), storage.Join(root, ".icesql", privilegesFile)); err != nil {
		t.Fatalf("users file in the bucket: %v", err)
	}
	e2, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	db2 := sql.OpenDB(e2.Connector())
	defer db2.Close()
	if got := queryStrings(t, db2, "SHOW GRANTS FOR 'carol'@'%'"); len(got) != 1 || got[0] != "GRANT SELECT ON *.* TO `carol`@`%`" {
		t.Fatalf("carol's grants after reopening: %q", got)
	}
}

// TestOpenAddressNeedsLogin: a server reachable from other machines
// requires --user and --password; loopback needs neither.
func TestOpenAddressNeedsLogin(t *testing.T) {
	e, err := Open(context.Background(), Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, cfg := range []ServerConfig{{Addr: "0.0.0.0:0"}, {Addr: "[::]:0"}, {Addr: "0.0.0.0:0", User: "admin"}} {
		if srv, err := e.NewServer(cfg); err == nil {
			srv.Close()
			t.Errorf("server on %s with user %q and no password started", cfg.Addr, cfg.User)
		}
	}
	srv, err := e.NewServer(ServerConfig{Addr: "0.0.0.0:0", User: "admin", Password: "pw"})
	if err != nil {
		t.Fatalf("server on 0.0.0.0 with a login: %v", err)
	}
	srv.Close()
}

// TestServersOfOneEngine: each server of an engine sets the command-line
// accounts its way: a server with --user locks root@localhost and drops the
// anonymous account; a later loopback server gives both back.
func TestServersOfOneEngine(t *testing.T) {
	e, err := Open(context.Background(), Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	start := func(cfg ServerConfig) *Server {
		cfg.Addr = "127.0.0.1:0"
		srv, err := e.NewServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Start()
		t.Cleanup(func() { srv.Close() })
		return srv
	}
	open := start(ServerConfig{})
	mustExec(t, dial(t, open, "root", ""), "CREATE USER 'x'@'%' IDENTIFIED BY 'x'") // switches checks on
	guarded := start(ServerConfig{User: "admin", Password: "pw"})
	for _, name := range []string{"root", "anyone"} {
		_, err := dial(t, guarded, name, "").Exec("SELECT 1")
		wantCode(t, name+" without a password next to --user", err, 1045)
	}
	open = start(ServerConfig{})
	for _, name := range []string{"root", "anyone"} {
		if err := dial(t, open, name, "").Ping(); err != nil {
			t.Fatalf("%s on a later loopback server: %v", name, err)
		}
	}
}

package sqltests

import (
	"context"
	gosql "database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// TestPreparedUpsertAndReplace: REPLACE and INSERT ... ON DUPLICATE KEY
// UPDATE with ? parameters, prepared on the server as every driver with
// server-side prepares does (they failed with "invalid arguments.
// expected: 0, found: N": icesql runs both statements itself, and the
// parameters never reached it). Values of every kind a driver sends, in
// the rows and in the assignments, and NULL.
func TestPreparedUpsertAndReplace(t *testing.T) {
	e := openEngine(t)
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Close() })
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", srv.Addr() // interpolateParams off: COM_STMT_PREPARE and EXECUTE
	cfg.ParseTime = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn := pinnedConn(t, gosql.OpenDB(connector))
	ctx := context.Background()
	mustExec(t, conn, "CREATE DATABASE d")
	mustExec(t, conn, "CREATE TABLE d.t (id BIGINT PRIMARY KEY, name STRING, amount DECIMAL(10,2), x DOUBLE, day DATE, at DATETIME(6), raw BLOB)")

	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	at := time.Date(2024, 3, 5, 10, 11, 12, 345678000, time.UTC)
	exec := func(q string, want int64, args ...any) {
		t.Helper()
		stmt, err := conn.PrepareContext(ctx, q)
		if err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		defer stmt.Close()
		res, err := stmt.ExecContext(ctx, args...)
		if err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != want {
			t.Errorf("%s %v: %d rows affected (%v), want %d", q, args, n, err, want)
		}
	}
	rows := func() string {
		t.Helper()
		r, err := conn.QueryContext(ctx, "SELECT id, name, amount, x, day, at, hex(raw) FROM d.t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []string
		for r.Next() {
			var id int64
			var name, amount, raw gosql.NullString
			var x gosql.NullFloat64
			var d, a gosql.NullTime
			if err := r.Scan(&id, &name, &amount, &x, &d, &a, &raw); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d %s %s %v %s %s %s", id, name.String, amount.String, x.Float64,
				d.Time.Format("2006-01-02"), a.Time.Format("15:04:05.000000"), raw.String))
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, "; ")
	}
	check := func(want string) {
		t.Helper()
		if got := rows(); got != want {
			t.Errorf("rows:\n got %s\nwant %s", got, want)
		}
	}

	exec("REPLACE INTO d.t VALUES (?, ?, ?, ?, ?, ?, ?)", 1, 1, "it's", "12.50", 1.5, day, at, []byte{0xca, 0xfe})
	exec("REPLACE INTO d.t (id, name, amount) VALUES (?, ?, ?), (?, ?, ?)", 3, 1, `it's a\b`, 3, 2, nil, "7.25")
	check(`1 it's a\b 3.00 0 0001-01-01 00:00:00.000000 ; 2  7.25 0 0001-01-01 00:00:00.000000 `)

	exec("INSERT INTO d.t (id, name, amount) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE amount = amount + ?, name = VALUES(name)", 2, 2, "two", "1.00", "0.75")
	exec("INSERT INTO d.t (id, name, amount) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE amount = amount + ?", 1, 5, "five", "5.00", "1")
	exec("INSERT INTO d.t (id, day, at, raw) VALUES (?, ?, ?, ?) AS new ON DUPLICATE KEY UPDATE day = new.day, at = new.at, raw = new.raw, x = ?", 2, 1, day, at, []byte("z"), -2.25)
	check(`1 it's a\b 3.00 -2.25 2024-03-05 10:11:12.345678 7A; 2 two 8.00 0 0001-01-01 00:00:00.000000 ; 5 five 5.00 0 0001-01-01 00:00:00.000000 `)

	// The same prepared statement, executed again with other values.
	stmt, err := conn.PrepareContext(ctx, "REPLACE INTO d.t (id, name) VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for i, name := range []string{"x", "y"} {
		if _, err := stmt.ExecContext(ctx, 5+i, name); err != nil {
			t.Fatalf("execution %d: %v", i+1, err)
		}
	}
	check(`1 it's a\b 3.00 -2.25 2024-03-05 10:11:12.345678 7A; 2 two 8.00 0 0001-01-01 00:00:00.000000 ; 5 x  0 0001-01-01 00:00:00.000000 ; 6 y  0 0001-01-01 00:00:00.000000 `)

	// An error is the statement's, and changes nothing.
	if _, err := conn.ExecContext(ctx, "INSERT INTO d.t (id) VALUES (?) ON DUPLICATE KEY UPDATE nope = ?", 1, 2); err == nil || !strings.Contains(err.Error(), "Error 1054") {
		t.Errorf("unknown column in the assignments: got %v, want error 1054", err)
	}
	check(`1 it's a\b 3.00 -2.25 2024-03-05 10:11:12.345678 7A; 2 two 8.00 0 0001-01-01 00:00:00.000000 ; 5 x  0 0001-01-01 00:00:00.000000 ; 6 y  0 0001-01-01 00:00:00.000000 `)
}

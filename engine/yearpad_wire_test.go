package engine_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// TestPreparedDateBeforeYear1000 reads dates before year 1000 the three ways
// a Go program can: over the text protocol, over the binary protocol (a
// prepared statement, which dropped the connection), and through the
// in-process driver. Each gives the year with its leading zeros.
func TestPreparedDateBeforeYear1000(t *testing.T) {
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	addr := wireServer(t, e)
	text := wireConn(t, addr)
	mustExec(t, text,
		"CREATE DATABASE y",
		"CREATE TABLE y.t (id INT, d DATE, ts DATETIME(6))",
		"INSERT INTO y.t VALUES (1, '0011-03-05', '0011-03-05 12:06:45.5'), (2, '0999-12-31', '0999-12-31 23:59:59'), (3, '2024-01-02', '2024-01-02 00:00:00')")
	want := map[int][2]string{
		1: {"0011-03-05", "0011-03-05 12:06:45.500000"},
		2: {"0999-12-31", "0999-12-31 23:59:59.000000"},
		3: {"2024-01-02", "2024-01-02 00:00:00.000000"},
	}
	ctx := context.Background()
	check := func(how string, conn *sql.Conn, query string, args ...any) {
		t.Helper()
		for id, w := range want {
			var d, ts string
			if err := conn.QueryRowContext(ctx, query, append(args, id)...).Scan(&d, &ts); err != nil {
				t.Fatalf("%s, id %d: %v", how, id, err)
			}
			if d != w[0] || ts != w[1] {
				t.Errorf("%s, id %d: %q, %q; want %q, %q", how, id, d, ts, w[0], w[1])
			}
		}
	}
	// Without arguments go-sql-driver sends the text; with them it
	// prepares the statement on the server and reads binary rows.
	for id, w := range want {
		var d, ts string
		q := "SELECT d, ts FROM y.t WHERE id = " + strconv.Itoa(id)
		if err := text.QueryRowContext(ctx, q).Scan(&d, &ts); err != nil {
			t.Fatalf("text protocol, id %d: %v", id, err)
		}
		if d != w[0] || ts != w[1] {
			t.Errorf("text protocol, id %d: %q, %q; want %q, %q", id, d, ts, w[0], w[1])
		}
	}
	check("binary protocol", text, "SELECT d, ts FROM y.t WHERE id = ?")
	check("in-process driver", openConnOn(t, e), "SELECT d, ts FROM y.t WHERE id = ?")
	var literal string
	if err := text.QueryRowContext(ctx, "SELECT CAST('0011-03-05' AS DATE)").Scan(&literal); err != nil || literal != "0011-03-05" {
		t.Errorf("CAST('0011-03-05' AS DATE): %q, %v", literal, err)
	}

	// With parseTime the driver makes time.Time values of the binary rows.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.ParseTime = "root", "tcp", addr, true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	var d, ts time.Time
	if err := db.QueryRowContext(ctx, "SELECT d, ts FROM y.t WHERE id = ?", 1).Scan(&d, &ts); err != nil {
		t.Fatal(err)
	}
	if d.Year() != 11 || ts != time.Date(11, 3, 5, 12, 6, 45, 5e8, time.UTC) {
		t.Errorf("parseTime: %v, %v", d, ts)
	}
}

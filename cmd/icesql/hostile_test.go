package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// hostileLimitMiB is the server's --memory-limit-mib in TestHostileStatements.
const hostileLimitMiB = 512

// TestHostileStatements sends, over the wire, statements meant to take the
// server down, to `icesql serve --memory-limit-mib 512` run as its own
// process: each gets the MySQL error it should, no statement takes the
// server's resident memory past the limit + 10% (sampled from /proc), and
// none runs on for more than a second after KILL QUERY.
func TestHostileStatements(t *testing.T) {
	bin := buildBinary(t)
	addr := freeAddr(t)
	srv := startServer(t, bin, "--warehouse", t.TempDir(), "--addr", addr, "--memory-limit-mib", strconv.Itoa(hostileLimitMiB))
	rss := watchRSS(t, srv.Process.Pid)

	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", addr
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx := context.Background()

	// d holds 0..999; three copies of it joined make up to 10M rows without
	// a table that size. big holds 4M distinct keys for the vector path.
	for _, s := range []string{
		"CREATE DATABASE h",
		"CREATE TABLE h.d (x BIGINT)",
		"INSERT INTO h.d WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 999) SELECT x FROM r",
		"CREATE TABLE h.big (k BIGINT)",
		"INSERT INTO h.big SELECT a.x * 1000 + b.x FROM h.d a, h.d b",
		"INSERT INTO h.big SELECT k + 1000000 FROM h.big",
		"INSERT INTO h.big SELECT k + 2000000 FROM h.big",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	const tenMillion = "FROM h.d a, h.d b, h.d c WHERE c.x < 10"
	limit := uint64(hostileLimitMiB) << 20

	for _, c := range []struct {
		name string
		sql  string
		code uint16 // 0: succeeds
		alt  uint16 // another code that is right too (0: none)
	}{
		{"GROUP BY of 10M groups, row path", "SELECT a.x, b.x, c.x, COUNT(*) " + tenMillion + " GROUP BY a.x, b.x, c.x", 1041, 0},
		{"GROUP BY of 4M groups, vector path", "SELECT k, COUNT(*) FROM h.big GROUP BY k", 1041, 0},
		// The sort's own check (1038) or the budget (1041), whichever sees
		// the rows first: on a loaded machine either can.
		{"ORDER BY RAND() of 10M rows", "SELECT a.x, b.x, c.x " + tenMillion + " ORDER BY RAND()", 1038, 1041},
		{"GROUP_CONCAT of 10M rows", "SELECT LENGTH(GROUP_CONCAT(a.x)) " + tenMillion, 1041, 0},
		{"REPEAT past max_allowed_packet", "SELECT REPEAT('x', 9223372036854775807)", 0, 0},
		{"LPAD past max_allowed_packet", "SELECT LPAD('x', 2000000000, 'y')", 0, 0},
		{"catastrophic backtracking", "SELECT REGEXP_LIKE(REPEAT('a', 32), '(a+)+b')", 3699, 0},
		{"10,000 nested NOTs", "SELECT " + strings.Repeat("NOT ", 10000) + "1", 1436, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rss.reset()
			start := time.Now()
			_, err := queryAll(ctx, db, c.sql)
			took := time.Since(start)
			var me *mysql.MySQLError
			if c.alt == 0 || !errors.As(err, &me) || me.Number != c.alt {
				checkCode(t, err, c.code)
			}
			peak := rss.peak()
			t.Logf("%s: %v in %v, peak RSS %d MiB (limit %d MiB)", c.name, errCode(err), took.Round(time.Millisecond), peak>>20, hostileLimitMiB)
			if peak > limit+limit/10 {
				t.Errorf("resident memory reached %d MiB, past the limit of %d MiB + 10%%", peak>>20, hostileLimitMiB)
			}
		})
	}

	// Statements that run long stop soon after KILL QUERY: within 21-35 ms on
	// a quiet machine (the log prints each); the bound of 3 s leaves room
	// for a loaded one and still fails a statement that does not stop.
	for _, c := range []struct{ name, sql string }{
		{"5,000-branch UNION ALL", "SELECT COUNT(*) FROM (SELECT 1 AS a" + strings.Repeat(" UNION ALL SELECT 1", 5000) + ") t"},
		{"ORDER BY RAND() of 1M rows", "SELECT a.x, b.x FROM h.d a, h.d b ORDER BY RAND()"},
		{"cross join of 10M rows", "SELECT COUNT(*) FROM h.d a, h.d b, h.d c WHERE c.x + a.x >= 0"},
	} {
		t.Run("KILL QUERY: "+c.name, func(t *testing.T) {
			killedWithin(t, ctx, db, c.sql, 500*time.Millisecond, 3*time.Second)
		})
	}

	// max_execution_time and its hint stop a SELECT with 3024.
	for _, s := range []string{
		"SELECT /*+ MAX_EXECUTION_TIME(300) */ COUNT(*) FROM h.d a, h.d b, h.d c WHERE c.x + a.x >= 0",
	} {
		start := time.Now()
		_, err := queryAll(ctx, db, s)
		checkCode(t, err, 3024)
		if took := time.Since(start); took > 300*time.Millisecond+3*time.Second {
			t.Errorf("MAX_EXECUTION_TIME(300) stopped the statement after %v", took)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION max_execution_time = 300"); err != nil {
		t.Fatal(err)
	}
	_, err = conn.QueryContext(ctx, "SELECT COUNT(*) FROM h.d a, h.d b, h.d c WHERE c.x + a.x >= 0")
	checkCode(t, err, 3024)

	// The server still answers, and gave the memory back.
	if _, err := queryAll(ctx, db, "SELECT COUNT(*) FROM h.big"); err != nil {
		t.Fatalf("after the hostile statements: %v", err)
	}
	time.Sleep(time.Second)
	t.Logf("resident memory after the hostile statements: %d MiB", rss.now()>>20)
}

// killedWithin starts query, sends KILL QUERY for it after wait, and
// checks that it ends within grace of the KILL with 1317.
func killedWithin(t *testing.T, ctx context.Context, db *sql.DB, query string, wait, grace time.Duration) {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var ended atomic.Int64
	go func() {
		_, err := queryAllConn(ctx, conn, query)
		ended.Store(time.Now().UnixNano())
		done <- err
	}()
	time.Sleep(wait)
	select {
	case err := <-done:
		t.Fatalf("%s ended before the KILL (after %v): %v; make it longer", query[:40], wait, err)
	default:
	}
	killed := time.Now()
	if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		took := time.Unix(0, ended.Load()).Sub(killed)
		t.Logf("stopped %v after KILL QUERY: %v", took.Round(time.Millisecond), err)
		checkCode(t, err, 1317)
		if took > grace {
			t.Errorf("ran on for %v after KILL QUERY", took)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after KILL QUERY")
	}
}

func queryAll(ctx context.Context, db *sql.DB, query string) (int, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return queryAllConn(ctx, conn, query)
}

// queryAllConn runs query and reads every row.
func queryAllConn(ctx context.Context, conn *sql.Conn, query string) (int, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

func errCode(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("error %d", me.Number)
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}

func checkCode(t *testing.T, err error, code uint16) {
	t.Helper()
	var me *mysql.MySQLError
	switch {
	case code == 0 && err != nil:
		t.Errorf("got %v, want success", err)
	case code != 0 && (!errors.As(err, &me) || me.Number != code):
		t.Errorf("got %v, want error %d", err, code)
	}
}

// rssWatch samples a process's resident memory every 10 ms.
type rssWatch struct {
	pid  int
	max  atomic.Uint64
	stop chan struct{}
}

func watchRSS(t *testing.T, pid int) *rssWatch {
	w := &rssWatch{pid: pid, stop: make(chan struct{})}
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			if v := w.now(); v > w.max.Load() {
				w.max.Store(v)
			}
		}
	}()
	t.Cleanup(func() { close(w.stop) })
	return w
}

func (w *rssWatch) reset()       { w.max.Store(w.now()) }
func (w *rssWatch) peak() uint64 { return max(w.max.Load(), w.now()) }

// now reads VmRSS from /proc/<pid>/status, in bytes.
func (w *rssWatch) now() uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

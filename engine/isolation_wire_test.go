package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// Transactions as a MySQL client sees them over the wire (go-sql-driver
// against the served port): snapshots per transaction, validation at
// COMMIT, and the code of every conflict (1213, SQLSTATE 40001).

// wireServer serves e on a free loopback port.
func wireServer(t testing.TB, e *engine.Engine) string {
	t.Helper()
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

// wireConn is one client session on the server at addr.
func wireConn(t testing.TB, addr string) *sql.Conn {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", addr
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// wireSessions starts a server on a fresh warehouse and opens n sessions,
// the first of which runs setup.
func wireSessions(t *testing.T, n int, setup ...string) []*sql.Conn {
	t.Helper()
	addr := wireServer(t, openEngine(t, engine.Config{Warehouse: t.TempDir()}))
	conns := make([]*sql.Conn, n)
	for i := range conns {
		conns[i] = wireConn(t, addr)
	}
	mustExec(t, conns[0], setup...)
	return conns
}

// accounts is a table of balances, one data file per account so that
// changes of different accounts touch different files.
var accounts = []string{
	"CREATE DATABASE bank",
	"CREATE TABLE bank.a (id BIGINT, bal BIGINT)",
	"INSERT INTO bank.a VALUES (0, 1000)",
	"INSERT INTO bank.a VALUES (1, 1000)",
	"CREATE TABLE bank.log (id BIGINT)",
}

func queryInt(t *testing.T, conn *sql.Conn, query string) int64 {
	t.Helper()
	var v int64
	if err := conn.QueryRowContext(context.Background(), query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

// wantDeadlock fails unless err is MySQL error 1213 with SQLSTATE 40001.
func wantDeadlock(t *testing.T, what string, err error) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1213 || string(me.SQLState[:]) != "40001" {
		t.Fatalf("%s: want error 1213 (40001), got %v", what, err)
	}
}

// TestRepeatableReadOverWire is the reproduction: a transaction
// reads one snapshot, and its read-then-write loses to the concurrent
// update with 1213 instead of overwriting it.
func TestRepeatableReadOverWire(t *testing.T) {
	for _, begin := range [][]string{{"BEGIN"}, {"SET autocommit = 0"}, {"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "START TRANSACTION"}} {
		t.Run(begin[len(begin)-1], func(t *testing.T) {
			c := wireSessions(t, 2, accounts...)
			t1, t2 := c[0], c[1]
			mustExec(t, t1, begin...)
			want := "REPEATABLE-READ"
			if strings.Contains(begin[0], "SERIALIZABLE") {
				want = "SERIALIZABLE"
			}
			if got := queryString(t, t1, "SELECT @@transaction_isolation"); got != want {
				t.Errorf("@@transaction_isolation = %s, want %s", got, want)
			}
			if got := queryInt(t, t1, "SELECT bal FROM bank.a WHERE id = 0"); got != 1000 {
				t.Fatalf("T1 first read: %d", got)
			}
			mustExec(t, t2, "UPDATE bank.a SET bal = 500 WHERE id = 0")
			if got := queryInt(t, t1, "SELECT bal FROM bank.a WHERE id = 0"); got != 1000 {
				t.Errorf("T1 second read: got %d, want 1000 (its snapshot)", got)
			}
			if got := queryInt(t, t1, "SELECT SUM(bal) FROM bank.a"); got != 2000 {
				t.Errorf("T1 sum: got %d, want 2000 (its snapshot)", got)
			}
			mustExec(t, t1, "UPDATE bank.a SET bal = 990 WHERE id = 0")
			if got := queryInt(t, t1, "SELECT bal FROM bank.a WHERE id = 0"); got != 990 {
				t.Errorf("T1 reads its own update: got %d, want 990", got)
			}
			_, err := t1.ExecContext(context.Background(), "COMMIT")
			wantDeadlock(t, "COMMIT", err)
			if got := queryInt(t, t2, "SELECT bal FROM bank.a WHERE id = 0"); got != 500 {
				t.Errorf("after the conflict: bal %d, want T2's 500", got)
			}
			if got := queryInt(t, t1, "SELECT bal FROM bank.a WHERE id = 0"); got != 500 {
				t.Errorf("T1's next transaction: bal %d, want 500", got)
			}
		})
	}
}

// TestReadCommittedOverWire: READ COMMITTED reads each statement's newest
// snapshot, as in MySQL.
func TestReadCommittedOverWire(t *testing.T) {
	c := wireSessions(t, 2, accounts...)
	t1, t2 := c[0], c[1]
	mustExec(t, t1, "SET SESSION transaction_isolation = 'READ-COMMITTED'", "BEGIN")
	if got := queryInt(t, t1, "SELECT bal FROM bank.a WHERE id = 0"); got != 1000 {
		t.Fatalf("first read: %d", got)
	}
	mustExec(t, t2, "UPDATE bank.a SET bal = 500 WHERE id = 0")
	if got := queryInt(t, t1, "SELECT bal FROM bank.a WHERE id = 0"); got != 500 {
		t.Errorf("second read: got %d, want 500 (read committed)", got)
	}
	mustExec(t, t1, "COMMIT")
}

// TestOwnWritesAtPinnedSnapshot: a transaction reads its own inserts on
// top of its snapshot, while another session's commit stays invisible.
func TestOwnWritesAtPinnedSnapshot(t *testing.T) {
	c := wireSessions(t, 2, accounts...)
	t1, t2 := c[0], c[1]
	mustExec(t, t1, "BEGIN", "INSERT INTO bank.a VALUES (2, 10)")
	mustExec(t, t2, "INSERT INTO bank.a VALUES (3, 20)")
	if got := queryInt(t, t1, "SELECT COUNT(*) FROM bank.a"); got != 3 {
		t.Errorf("T1 count: got %d, want 3 (its snapshot and its own row)", got)
	}
	if got := queryInt(t, t1, "SELECT SUM(bal) FROM bank.a WHERE id >= 2"); got != 10 {
		t.Errorf("T1 sum of new rows: got %d, want 10", got)
	}
	mustExec(t, t1, "COMMIT") // appends never conflict
	if got := queryInt(t, t1, "SELECT COUNT(*) FROM bank.a"); got != 4 {
		t.Errorf("after COMMIT: count %d, want 4", got)
	}
}

// TestLockingReadsValidatedAtCommit: rows read FOR UPDATE / FOR SHARE /
// LOCK IN SHARE MODE, and every read under SERIALIZABLE, fail the COMMIT
// with 1213 when another session changed them since, and the transaction
// then writes nothing; without a concurrent change the COMMIT succeeds.
func TestLockingReadsValidatedAtCommit(t *testing.T) {
	reads := []struct{ name, setup, read string }{
		{"for update", "", "SELECT bal FROM bank.a WHERE id = 0 FOR UPDATE"},
		{"for share", "", "SELECT bal FROM bank.a WHERE id = 0 FOR SHARE"},
		{"lock in share mode", "", "SELECT bal FROM bank.a WHERE id = 0 LOCK IN SHARE MODE"},
		{"for update in a subquery", "", "SELECT COUNT(*) FROM bank.log WHERE id IN (SELECT id FROM bank.a FOR UPDATE)"},
		{"serializable", "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SELECT bal FROM bank.a WHERE id = 0"},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			c := wireSessions(t, 2, accounts...)
			t1, t2 := c[0], c[1]
			if r.setup != "" {
				mustExec(t, t1, r.setup)
			}
			// Without a concurrent change: COMMIT succeeds.
			mustExec(t, t1, "BEGIN", r.read, "INSERT INTO bank.log VALUES (1)", "COMMIT")
			// A concurrent update of the rows read: 1213, nothing written.
			mustExec(t, t1, "BEGIN", r.read, "INSERT INTO bank.log VALUES (2)")
			mustExec(t, t2, "UPDATE bank.a SET bal = bal - 1 WHERE id = 0")
			_, err := t1.ExecContext(context.Background(), "COMMIT")
			wantDeadlock(t, "COMMIT", err)
			if got := queryInt(t, t2, "SELECT COUNT(*) FROM bank.log"); got != 1 {
				t.Errorf("bank.log has %d rows, want 1: the conflicting transaction wrote", got)
			}
			// Read-only: the COMMIT still reports the conflict.
			mustExec(t, t1, "BEGIN", r.read)
			mustExec(t, t2, "INSERT INTO bank.a VALUES (9, 1)")
			_, err = t1.ExecContext(context.Background(), "COMMIT")
			wantDeadlock(t, "read-only COMMIT", err)
		})
	}
}

// TestPlainReadNotValidated: a plain read under REPEATABLE READ takes no
// lock, as in InnoDB: a concurrent change of what it read does not fail
// a COMMIT that writes other rows.
func TestPlainReadNotValidated(t *testing.T) {
	c := wireSessions(t, 2, accounts...)
	t1, t2 := c[0], c[1]
	mustExec(t, t1, "BEGIN", "SELECT bal FROM bank.a WHERE id = 0", "INSERT INTO bank.log VALUES (1)")
	mustExec(t, t2, "UPDATE bank.a SET bal = 1 WHERE id = 0")
	mustExec(t, t1, "COMMIT")
}

// TestAutocommitConflictsOverWire: autocommit UPDATEs of one row from many
// clients race; a loser gets 1213 (never 1105) and, retried, every
// increment lands exactly once.
func TestAutocommitConflictsOverWire(t *testing.T) {
	const clients, each = 4, 4
	c := wireSessions(t, clients, "CREATE DATABASE c", "CREATE TABLE c.t (id BIGINT, v BIGINT)", "INSERT INTO c.t VALUES (1, 0)")
	conflicts := make(chan int, clients)
	errs := make(chan error, clients)
	for _, conn := range c {
		go func() {
			n := 0
			for done := 0; done < each; {
				_, err := conn.ExecContext(context.Background(), "UPDATE c.t SET v = v + 1 WHERE id = 1")
				var me *mysql.MySQLError
				switch {
				case err == nil:
					done++
				case errors.As(err, &me) && me.Number == 1213 && string(me.SQLState[:]) == "40001":
					n++
				default:
					errs <- err
					conflicts <- n
					return
				}
			}
			errs <- nil
			conflicts <- n
		}()
	}
	total := 0
	for range clients {
		if err := <-errs; err != nil {
			t.Errorf("UPDATE: want success or 1213, got %v", err)
		}
		total += <-conflicts
	}
	if got := queryInt(t, c[0], "SELECT v FROM c.t WHERE id = 1"); got != clients*each {
		t.Errorf("v = %d after %d increments", got, clients*each)
	}
	t.Logf("%d increments, %d conflicts (1213) retried", clients*each, total)
}

// TestLockedReadWithOverwrite: a locked read of a table that the same
// transaction then changes by INSERT OVERWRITE is validated too, though
// the overwrite's own validation finds no conflict (the concurrent insert
// is in another partition).
func TestLockedReadWithOverwrite(t *testing.T) {
	c := wireSessions(t, 2, "CREATE DATABASE c", "CREATE TABLE c.p (id BIGINT, v BIGINT) PARTITIONED BY (v)",
		"INSERT INTO c.p VALUES (1, 1), (2, 2)")
	mustExec(t, c[0], "BEGIN", "SELECT COUNT(*) FROM c.p WHERE v = 2 FOR UPDATE", "INSERT OVERWRITE c.p PARTITION (v = 1) VALUES (10)")
	mustExec(t, c[1], "INSERT INTO c.p VALUES (3, 2)")
	_, err := c[0].ExecContext(context.Background(), "COMMIT")
	wantDeadlock(t, "COMMIT", err)
	if got := queryInt(t, c[1], "SELECT COUNT(*) FROM c.p WHERE id = 10"); got != 0 {
		t.Errorf("the conflicting overwrite committed")
	}
	// Without the locked read the same race commits.
	mustExec(t, c[0], "ROLLBACK", "BEGIN", "INSERT OVERWRITE c.p PARTITION (v = 1) VALUES (11)")
	mustExec(t, c[1], "INSERT INTO c.p VALUES (4, 2)")
	mustExec(t, c[0], "COMMIT")
}

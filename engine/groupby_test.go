package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine"
)

// queryEnds runs q to its last row and returns its error, failing the test
// if it has not ended within limit: go-mysql-server's GROUP BY left its
// reading goroutine blocked when grouping failed, and the statement never
// returned (planrules/groupby.go). The statement of a failed run is left behind.
func queryEnds(t *testing.T, conn *sql.Conn, q string, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		rows, err := conn.QueryContext(context.Background(), q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s: still running after %v", q, limit)
		return nil
	}
}

// A GROUP BY whose aggregate fails on a late row (JSON_OBJECTAGG refuses a
// NULL key), when the rows read are ahead of the grouping, answers with
// the error.
func TestGroupByErrorEnds(t *testing.T) {
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn, "CREATE DATABASE g", "USE g", "CREATE TABLE t (x BIGINT)",
		"INSERT INTO t WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 4999) SELECT x FROM r")
	for _, vectorize := range []string{"ON", "OFF"} {
		mustExec(t, conn, "SET icesql_vectorize = "+vectorize)
		err := queryEnds(t, conn, "SELECT x % 10, JSON_OBJECTAGG(IF(x = 4000, NULL, 'k'), x) FROM t GROUP BY x % 10", time.Minute)
		if err == nil || !strings.Contains(err.Error(), "NULL member names") {
			t.Errorf("vectorize %s: JSON_OBJECTAGG with a NULL key: %v, want its error", vectorize, err)
		}
	}
}

// The hostile test's row-path GROUP BY of millions of groups (a cross join
// of three copies of a table) stops with 1041 once the statement budget is
// spent, under a limit small enough to reach in a few seconds.
func TestGroupByOverBudget(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(engine.RuntimeMemoryLimit(128 << 20)) // as cmd/icesql does
	conn := openConn(t, engine.Config{Warehouse: t.TempDir(), MemoryLimit: 128 << 20})
	mustExec(t, conn, "CREATE DATABASE h", "USE h", "CREATE TABLE d (x BIGINT)",
		"INSERT INTO d WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 999) SELECT x FROM r")
	q := "SELECT a.x, b.x, c.x, COUNT(*) FROM d a, d b, d c WHERE c.x < 10 GROUP BY a.x, b.x, c.x"
	start := time.Now()
	err := queryEnds(t, conn, q, 2*time.Minute)
	var me *mysql.SQLError
	if !errors.As(err, &me) || me.Num != 1041 {
		t.Fatalf("GROUP BY of 10M groups under a 128 MiB limit: %v, want error 1041", err)
	}
	t.Logf("1041 after %v", time.Since(start).Round(time.Millisecond))
}

package engine_test

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine"
)

// A vectorized GROUP BY of a million integer keys under a 128 MiB limit
// stops with 1041 before its groups are made (its table doublings and the
// result of a million groups ask the budget first, memlimit/vecreserve.go), while
// one of a thousand keys under the same limit answers.
func TestVectorGroupByOverBudget(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(engine.RuntimeMemoryLimit(128 << 20)) // as cmd/icesql does
	conn := openConn(t, engine.Config{Warehouse: t.TempDir(), MemoryLimit: 128 << 20})
	mustExec(t, conn, "CREATE DATABASE h", "USE h", "CREATE TABLE d (x BIGINT)", "CREATE TABLE big (k BIGINT)",
		"INSERT INTO d WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 999) SELECT x FROM r",
		"INSERT INTO big SELECT a.x * 1000 + b.x FROM d a, d b")
	q := "SELECT k, COUNT(*) FROM big GROUP BY k"
	if plan := explainText(t, conn, q); !strings.Contains(plan, "VectorizedGroupBy") {
		t.Fatalf("%s does not run on the vector path:\n%s", q, plan)
	}
	err := queryEnds(t, conn, q, 2*time.Minute)
	var me *mysql.SQLError
	if !errors.As(err, &me) || me.Num != 1041 {
		t.Fatalf("GROUP BY of 1M groups under a 128 MiB limit: %v, want error 1041", err)
	}
	small := "SELECT x, COUNT(*) FROM d GROUP BY x"
	if plan := explainText(t, conn, small); !strings.Contains(plan, "VectorizedGroupBy") {
		t.Fatalf("%s does not run on the vector path:\n%s", small, plan)
	}
	if got := queryStrings(t, conn, small); len(got) != 1000 {
		t.Errorf("GROUP BY of 1,000 groups under the same limit: %d groups, want 1000", len(got))
	}
}

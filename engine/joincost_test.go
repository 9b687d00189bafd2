package engine_test

import (
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestJoinOrderFromColumnRanges checks that the join planner sizes a
// filtered table by its column's range in Iceberg's file bounds
// (joincost.go) and builds the hash table of the smaller side: big.k < 50
// keeps 50 of big's 20,000 rows, fewer than small's 2,000.
// go-mysql-server's own estimate keeps 85% of a table through any filter,
// so it built small's table and probed it with big's rows. (The same
// estimates joined TPC-H Q5's customer and supplier on their nation first:
// it took every equality for a key join, and timed out at SF 0.1.)
func TestJoinOrderFromColumnRanges(t *testing.T) {
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn,
		"CREATE DATABASE jo", "USE jo",
		"CREATE TABLE digits (d INT)",
		"INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)",
		"CREATE TABLE big (k INT, v INT)",
		"INSERT INTO big SELECT a.d + 10*b.d + 100*c.d + 1000*e.d + 10000*(f.d % 2), a.d FROM digits a, digits b, digits c, digits e, digits f WHERE f.d < 2",
		"CREATE TABLE small (k INT, w INT)",
		"INSERT INTO small SELECT k * 10, v FROM big WHERE k < 2000",
		"CREATE TABLE other (w INT, name VARCHAR(10))",
		"INSERT INTO other SELECT d, CONCAT('w', d) FROM digits")
	q := "SELECT COUNT(*), COUNT(DISTINCT name) FROM big, small, other WHERE big.k = small.k AND small.w = other.w AND big.k < 50"
	for _, vectorize := range []string{"ON", "OFF"} {
		mustExec(t, conn, "SET icesql_vectorize = "+vectorize)
		if got := queryInt(t, conn, "SELECT COUNT(*) FROM ("+q+") x WHERE `COUNT(*)` = 5"); got != 1 {
			t.Errorf("vectorize %s: not the 5 rows of k = 0, 10, 20, 30, 40", vectorize)
		}
		plan := explainText(t, conn, q)
		if !strings.Contains(plan, "HashJoin(small; big)") && !strings.Contains(plan, "HashJoin(small, other; big)") || strings.Contains(plan, "nested loop") {
			t.Errorf("vectorize %s: big's 50 rows are not the hashed side:\n%s", vectorize, plan)
		}
	}
}

// NOT EXISTS on a key with few values stays an anti join, hashed after
// planning (joincost.go's hashedAfterPlanning): costed as a nested loop,
// it lost to go-mysql-server's other plan for it, a left join keeping the
// rows without a match, which joins every pair of equal keys (3,000 rows
// a side on a boolean: 4.5 million pairs, over 10 s). The answers are
// NOT IN's over the non-NULL keys.
func TestNotExistsIsAHashedAntiJoin(t *testing.T) {
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn, "CREATE DATABASE ne", "USE ne")
	createSubqueryTables(t, conn)
	for _, c := range []struct{ notExists, same string }{
		{"SELECT COUNT(*) FROM o AS l WHERE NOT EXISTS (SELECT 1 FROM i AS q WHERE q.b = l.b)",
			"SELECT COUNT(*) FROM o AS l WHERE l.b IS NULL OR l.b NOT IN (SELECT q.b FROM i AS q WHERE q.b IS NOT NULL)"},
		{"SELECT COUNT(*) FROM o AS l WHERE NOT EXISTS (SELECT 1 FROM i AS q WHERE q.s = l.s AND q.x > 3)",
			"SELECT COUNT(*) FROM o AS l WHERE l.s IS NULL OR l.s NOT IN (SELECT q.s FROM i AS q WHERE q.s IS NOT NULL AND q.x > 3)"},
	} {
		for _, vectorize := range []string{"ON", "OFF"} {
			mustExec(t, conn, "SET icesql_vectorize = "+vectorize)
			plan := explainText(t, conn, c.notExists)
			if !strings.Contains(plan, "AntiJoinIncludingNulls(l; q): hash join") || strings.Contains(plan, "LeftOuter") {
				t.Errorf("vectorize %s: %s is not a hashed anti join:\n%s", vectorize, c.notExists, plan)
			}
			got, want := queryInt(t, conn, c.notExists), queryInt(t, conn, c.same)
			if got != want || got == 0 {
				t.Errorf("vectorize %s: %s: %d rows, NOT IN: %d", vectorize, c.notExists, got, want)
			}
		}
	}
}

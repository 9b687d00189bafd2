package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// orJoinShapes are joins whose condition is an OR that
// planrules/orjoin.go keys per branch: keys of each kind (integers,
// strings, decimals, dates, a pair), branches on one side alone, inner,
// left, right, cross joins under WHERE, EXISTS and NOT EXISTS, keys that
// find the same right row twice, NULLs in keys, aggregates, ORDER BY with
// LIMIT, and a join inside a correlated subquery.
var orJoinShapes = []string{
	"SELECT l.id, r.id FROM o AS l JOIN i AS r ON l.k = r.id OR l.x = r.x",
	"SELECT l.id, r.id FROM o AS l JOIN i AS r ON l.k = r.k OR l.id = r.id",
	"SELECT l.id, r.id FROM o AS l LEFT JOIN i AS r ON l.s = r.s AND l.b OR l.m = r.m",
	"SELECT l.id, r.id FROM o AS l RIGHT JOIN i AS r ON l.d = r.d AND l.k > 6 OR l.id = r.k",
	"SELECT l.id, r.id FROM o AS l LEFT JOIN i AS r ON (l.k = r.k AND l.s = r.s) OR l.id = r.id OR r.x > 9",
	"SELECT l.id, r.id FROM o AS l LEFT JOIN i AS r ON l.k = r.id OR l.x IS NULL",
	"SELECT l.id, r.id FROM o AS l CROSS JOIN i AS r WHERE l.k = r.id AND MONTH(l.d) >= 1 OR r.d <=> '2024-01-03'",
	"SELECT l.id, r.id FROM o AS l CROSS JOIN i AS r WHERE l.id = r.k AND r.b OR l.m IS NULL",
	"SELECT COUNT(*), SUM(r.m), MIN(l.s) FROM o AS l CROSS JOIN i AS r WHERE l.k = r.k AND r.x > 0 OR l.s = r.s AND l.id < 20",
	"SELECT r.s, COUNT(l.id) FROM o AS l RIGHT JOIN i AS r ON l.k = r.id OR l.m = r.m GROUP BY r.s",
	"SELECT l.id, r.id FROM o AS l JOIN i AS r ON l.k = r.id OR l.s = r.s ORDER BY l.id DESC, r.id LIMIT 7",
	"SELECT l.id FROM o AS l WHERE EXISTS (SELECT 1 FROM i AS q WHERE q.k = l.k AND q.x > 3 OR q.s = l.s AND q.b)",
	"SELECT l.id FROM o AS l WHERE NOT EXISTS (SELECT 1 FROM i AS q WHERE q.k = l.k OR q.m = l.m)",
	"SELECT l.id FROM o AS l WHERE NOT EXISTS (SELECT 1 FROM i AS q WHERE q.id = l.k AND q.b OR q.x > 10)",
	"SELECT l.id FROM o AS l WHERE NOT EXISTS (SELECT 1 FROM i AS q WHERE q.id = l.id OR l.k IS NULL)",
	"SELECT a.id, b.id, c.id FROM o AS a LEFT JOIN i AS b ON a.id = b.k CROSS JOIN i AS c WHERE a.k = c.id AND b.s = 'w1' OR c.x BETWEEN 3 AND 4",
	"SELECT l.id, (SELECT COUNT(*) FROM i AS a JOIN i AS b ON a.k = b.id OR a.s = b.s WHERE a.id = l.id) FROM o AS l",
	"SELECT l.id, r.id FROM o AS l LEFT JOIN i AS r ON l.k = r.k AND r.x > 2 AND l.b OR l.s = r.s AND r.m < 5 OR l.id = r.k AND NOT r.b",
	"SELECT l.id, r.id FROM o AS l JOIN i AS r ON l.k = r.k AND r.x <=> 3.25 OR l.k = r.k AND r.s = 'w1' OR r.id IN (9, 40, 77)",
	"SELECT COUNT(*), COUNT(r.id) FROM o AS l LEFT JOIN i AS r ON l.d = r.d AND l.x < r.x AND l.m > 3 OR l.k = r.id AND l.x IS NOT NULL",
}

// Each shape answers as the nested loop does (icesql_decorrelate = OFF),
// on the vector path and off it, and EXPLAIN names the keyed OR.
func TestOrJoinsMatchNestedLoop(t *testing.T) {
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	conn := openConnOn(t, e)
	mustExec(t, conn, "CREATE DATABASE oj", "USE oj")
	createSubqueryTables(t, conn)
	for _, q := range orJoinShapes {
		for _, vectorize := range []string{"ON", "OFF"} {
			mustExec(t, conn, "SET icesql_vectorize = "+vectorize, "SET icesql_decorrelate = ON")
			if plan := strings.Join(explainLines(t, conn, q), "\n"); !strings.Contains(plan, "hash join per branch of the OR") {
				t.Errorf("vectorize %s: %s is not keyed by branch:\n%s", vectorize, q, plan)
			}
			got := queryStrings(t, conn, q)
			mustExec(t, conn, "SET icesql_decorrelate = OFF")
			if plan := strings.Join(explainLines(t, conn, q), "\n"); strings.Contains(plan, "OrSource") {
				t.Errorf("icesql_decorrelate = OFF keyed %s", q)
			}
			want := queryStrings(t, conn, q)
			if !strings.Contains(q, "LIMIT") {
				slices.Sort(got)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("vectorize %s: %s\n got %d rows %v\nwant %d rows %v", vectorize, q, len(got), got, len(want), want)
			}
		}
	}
}

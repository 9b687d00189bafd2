package engine_test

import (
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// Joins on string, boolean, date and decimal keys, and LEFT and RIGHT
// joins, run on the vector path (vecexec/vecjoinkey.go, vecexec/vecjoin.go) and give the
// row path's rows, over issue 16's tables: strings that differ only in
// case or a trailing space, NULL keys on both sides, booleans joined with
// booleans and with integers, conditions beyond the key, and GROUP BYs above, which run on
// the vector path with the join, LEFT joins' padded rows included.
// EXPLAIN must say which part took the vector path, or the test would
// compare the row path with itself.
func TestVectorJoinKeysAndOuterJoinsMatchRowPath(t *testing.T) {
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn, "CREATE DATABASE vk", "USE vk")
	createCliffTables(t, conn)
	const (
		join = "vectorized hash join"
		agg  = "GROUP BY above it run on Arrow batches"
	)
	for _, c := range []struct{ q, path string }{
		// strings
		{"SELECT l.id, r.id, r.s FROM t1 AS l JOIN t2 AS r ON l.s = r.s WHERE l.id < 200", join},
		{"SELECT l.s, COUNT(*), SUM(r.m), MIN(r.d) FROM t1 AS l JOIN t2 AS r ON l.s = r.s GROUP BY l.s", agg},
		{"SELECT COUNT(*), COUNT(b.id) FROM t1 AS a JOIN t1 AS b ON a.s = b.s AND a.id <> b.id", join},
		{"SELECT l.id, r.id FROM t1 AS l LEFT JOIN t3 AS r ON l.s = r.s AND r.k < 100", join},
		{"SELECT r.s, COUNT(*), COUNT(r.id), SUM(r.m) FROM t1 AS l LEFT JOIN t2 AS r ON l.s = r.s AND r.id < 300 GROUP BY r.s", agg},
		// booleans
		{"SELECT l.id, r.id FROM t1 AS l JOIN t2 AS r ON l.b = r.b WHERE l.id < 40 AND r.id < 60", join},
		{"SELECT l.id, r.id, r.x FROM t2 AS l LEFT JOIN t3 AS r ON l.b = r.b AND r.x > l.x WHERE l.id < 30 AND r.id < 400", join},
		{"SELECT l.id, r.id FROM t1 AS l JOIN t2 AS r ON l.b = r.k", join},
		{"SELECT COUNT(*), COUNT(r.id), MIN(r.m) FROM t2 AS l LEFT JOIN t3 AS r ON l.b = r.b AND r.id < 100", agg},
		// integers, outer
		{"SELECT UPPER(r.s) AS c0, CONCAT(l.s, '-', l.id) AS c1 FROM t1 AS l LEFT JOIN t2 AS r ON l.k = r.id", join},
		{"SELECT l.id, r.id, l.s FROM t1 AS l RIGHT JOIN t2 AS r ON l.k = r.id WHERE r.id < 500", join},
		{"SELECT r.s, COUNT(l.id) FROM t1 AS l RIGHT JOIN t3 AS r ON l.k = r.id GROUP BY r.s", agg},
		{"SELECT l.s, COUNT(*), COUNT(r.id), MAX(r.d), SUM(r.m) FROM t2 AS l LEFT JOIN t3 AS r ON l.k = r.id WHERE l.id < 2000 GROUP BY l.s", agg},
		// dates and decimals
		{"SELECT l.id, r.id, r.d FROM t1 AS l JOIN t2 AS r ON l.d = r.d WHERE l.id < 1500", join},
		{"SELECT l.d, COUNT(*), SUM(r.m), MAX(r.id) FROM t1 AS l JOIN t3 AS r ON l.d = r.d GROUP BY l.d", agg},
		{"SELECT l.id, r.id, r.m FROM t2 AS l LEFT JOIN t3 AS r ON l.m = r.m", join},
		{"SELECT l.s, COUNT(*), COUNT(r.id) FROM t1 AS l LEFT JOIN t2 AS r ON l.m = r.m GROUP BY l.s", agg},
		// an empty build side pads every row (the row path aggregates them)
		{"SELECT l.s, COUNT(*), COUNT(r.id) FROM t2 AS l LEFT JOIN t3 AS r ON l.k = r.id AND r.id < 0 GROUP BY l.s", join},
	} {
		if !matchesRowPath(t, conn, c.q) {
			continue
		}
		mustExec(t, conn, "SET icesql_vectorize = ON")
		plan := strings.Join(explainLines(t, conn, c.q), "\n")
		if !strings.Contains(plan, c.path) {
			t.Errorf("%s: EXPLAIN does not say %q:\n%s", c.q, c.path, plan)
		}
	}
}

package engine_test

import (
	"testing"

	"github.com/icesql/icesql/engine"
)

// cliffShapes are one query of each shape the history tester's shapes run
// draws (sqltests/history/query.go), over issue 16's tables: what a BI
// tool sends against small tables, each expected to answer in
// milliseconds.
var cliffShapes = []struct{ name, q string }{
	{"filter", "SELECT id, s, x FROM t1 WHERE k < 500 AND s <> 'apple'"},
	{"aggregate", "SELECT COUNT(*), MIN(d), MAX(x), AVG(m) FROM t2 WHERE b"},
	{"group", "SELECT s, COUNT(*), SUM(x) FROM t3 GROUP BY s ORDER BY s"},
	{"group/having", "SELECT YEAR(d) AS y, COUNT(*) AS n FROM t1 GROUP BY YEAR(d) HAVING n > 10"},
	{"distinct", "SELECT DISTINCT s, b FROM t2"},
	{"topn", "SELECT id, ts FROM t3 ORDER BY ts DESC, id LIMIT 10"},
	{"window/row_number", "SELECT id, ROW_NUMBER() OVER (PARTITION BY s ORDER BY id) FROM t1"},
	{"window/running-sum", "SELECT id, SUM(x) OVER (PARTITION BY b ORDER BY id) FROM t2"},
	{"join/inner", "SELECT l.id, r.s FROM t1 AS l JOIN t2 AS r ON l.k = r.id"},
	{"join/left", "SELECT UPPER(r.s) AS c0, CONCAT(l.s, '-', l.id) AS c1 FROM t1 AS l LEFT JOIN t2 AS r ON l.k = r.id ORDER BY c0 DESC, c1"},
	{"join/right/group", "SELECT r.s, COUNT(l.id) FROM t1 AS l RIGHT JOIN t3 AS r ON l.k = r.id GROUP BY r.s"},
	{"join/string/group", "SELECT l.s, COUNT(*) FROM t1 AS l JOIN t2 AS r ON l.s = r.s GROUP BY l.s"},
	{"join/left-bool/aggregate", "SELECT COUNT(*), COUNT(r.id) FROM t2 AS l LEFT JOIN t3 AS r ON l.b = r.b AND r.id < 100"},
	{"join/cross/aggregate", "SELECT COUNT(*), MAX(a.x) FROM t1 AS a CROSS JOIN t2 AS b WHERE a.k = b.id"},
	{"join/left-cross/group", "SELECT c.b, COUNT(*), MIN(a.m) FROM t1 AS a LEFT JOIN t2 AS b ON a.k = b.id CROSS JOIN t3 AS c WHERE c.id < 3 GROUP BY c.b"},
	{"subquery/in", "SELECT l.id FROM t1 AS l WHERE l.k IN (SELECT q.id FROM t2 AS q WHERE q.b)"},
	{"subquery/not-in", "SELECT MAX(l.k), COUNT(*), AVG(l.x) FROM t2 AS l WHERE l.s NOT IN (SELECT q.s FROM t3 AS q)"},
	{"subquery/exists", "SELECT COUNT(*) FROM t1 AS l WHERE EXISTS (SELECT 1 FROM t2 AS q WHERE q.k = l.k)"},
	{"subquery/correlated-in", "SELECT l.id FROM t1 AS l WHERE l.s IN (SELECT q.s FROM t3 AS q WHERE q.k = l.k)"},
	{"subquery/scalar", "SELECT l.id FROM t1 AS l WHERE l.x > (SELECT AVG(q.x) FROM t2 AS q)"},
	{"subquery/correlated-range", "SELECT COUNT(*) FROM t1 AS l WHERE l.x > (SELECT AVG(q.x) FROM t2 AS q WHERE q.k < l.k)"},
	{"subquery/scalar-select", "SELECT l.id, (SELECT MAX(q.x) FROM t2 AS q WHERE q.k = l.k) FROM t1 AS l"},
	{"union", "SELECT s FROM t1 WHERE k < 100 UNION SELECT s FROM t2 WHERE k > 2900"},
	{"union-all/order", "SELECT id, x FROM t1 WHERE b UNION ALL SELECT id, x FROM t3 WHERE NOT b ORDER BY id, x LIMIT 20"},
}

// BenchmarkCliffShapes times each shape on the row path and the vector
// path, one statement an iteration:
//
//	go test ./engine -run '^$' -bench CliffShapes -benchtime 20x -cpuprofile cpu.prof
func BenchmarkCliffShapes(b *testing.B) {
	e := openEngine(b, engine.Config{Warehouse: b.TempDir()})
	conn := openConnOn(b, e)
	for _, s := range []string{"CREATE DATABASE cliffs", "USE cliffs"} {
		if _, err := conn.ExecContext(b.Context(), s); err != nil {
			b.Fatal(err)
		}
	}
	createCliffTables(b, conn)
	for _, vectorize := range []string{"ON", "OFF"} {
		if _, err := conn.ExecContext(b.Context(), "SET icesql_vectorize = "+vectorize); err != nil {
			b.Fatal(err)
		}
		for _, s := range cliffShapes {
			b.Run("vectorize="+vectorize+"/"+s.name, func(b *testing.B) {
				for b.Loop() {
					queryStrings(b, conn, s.q)
				}
			})
		}
	}
}

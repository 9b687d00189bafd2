package engine_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// Trees of joins under a GROUP BY (vecexec/vecrel.go) give the row path's
// groups: three and four tables, snowflakes, a LEFT JOIN inside an inner
// join, EXISTS and NOT EXISTS with conditions beyond the key, the EXISTS
// go-mysql-server plans as a join with Distinct keys, a self-join, and an
// ORDER BY ... LIMIT above. The tables are of format versions 2 and 3 with
// merge-on-read deletes (position deletes, deletion vectors), columns
// added after some files were written (older files lack them), NULL and
// duplicate keys on every side, keys one side lacks, and several files
// each. EXPLAIN must say the joins ran on the vector path, or the test
// would compare the row path with itself.
func TestVectorJoinTreesMatchRowPath(t *testing.T) {
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn, "CREATE DATABASE vr", "USE vr")
	rng := rand.New(rand.NewPCG(18, 4))
	or := func(null bool, v string) string {
		if null {
			return "NULL"
		}
		return v
	}
	maybe := func(n int, v string) string { return or(rng.IntN(n) == 0, v) }
	for _, v := range []int{2, 3} {
		props := fmt.Sprintf(" TBLPROPERTIES ('format-version' = '%d', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')", v)
		f, d1, d2, d3 := fmt.Sprintf("f%d", v), fmt.Sprintf("da%d", v), fmt.Sprintf("db%d", v), fmt.Sprintf("dc%d", v)
		mustExec(t, conn,
			"CREATE TABLE "+f+" (k1 BIGINT, k2 INT, s STRING, q DECIMAL(12,2), dt DATE)"+props,
			"CREATE TABLE "+d1+" (id BIGINT, grp INT, name STRING)"+props,
			"CREATE TABLE "+d2+" (id INT, region STRING)"+props,
			"CREATE TABLE "+d3+" (code STRING, n INT)"+props)
		fact := func(extra bool) {
			var vals []string
			for range 300 {
				row := fmt.Sprintf("%s, %s, %s, %s, %s", maybe(12, fmt.Sprint(rng.IntN(60))), maybe(10, fmt.Sprint(rng.IntN(12))),
					maybe(9, fmt.Sprintf("'c%d'", rng.IntN(8))), maybe(8, fmt.Sprintf("%d.%02d", rng.IntN(100), rng.IntN(100))),
					maybe(11, fmt.Sprintf("DATE '2024-0%d-1%d'", 1+rng.IntN(4), rng.IntN(9))))
				if extra {
					row += ", " + maybe(5, fmt.Sprint(rng.IntN(7)))
				}
				vals = append(vals, "("+row+")")
			}
			mustExec(t, conn, "INSERT INTO "+f+" VALUES "+strings.Join(vals, ", "))
		}
		for range 3 {
			fact(false)
		}
		dims := func() {
			var a, b, c []string
			for range 40 {
				// ids up to 70: some the fact lacks, and duplicates.
				a = append(a, fmt.Sprintf("(%s, %s, %s)", maybe(10, fmt.Sprint(rng.IntN(70))), maybe(9, fmt.Sprint(rng.IntN(12))), maybe(8, fmt.Sprintf("'n%d'", rng.IntN(5)))))
			}
			for range 8 {
				b = append(b, fmt.Sprintf("(%s, %s)", maybe(8, fmt.Sprint(rng.IntN(14))), maybe(6, fmt.Sprintf("'r%d'", rng.IntN(3)))))
			}
			for range 6 {
				c = append(c, fmt.Sprintf("(%s, %s)", maybe(7, fmt.Sprintf("'c%d'", rng.IntN(10))), maybe(6, fmt.Sprint(rng.IntN(4)))))
			}
			mustExec(t, conn, "INSERT INTO "+d1+" VALUES "+strings.Join(a, ", "),
				"INSERT INTO "+d2+" (id, region) VALUES "+strings.Join(b, ", "),
				"INSERT INTO "+d3+" VALUES "+strings.Join(c, ", "))
		}
		dims()
		// Columns added later: the files written before lack them.
		mustExec(t, conn, "ALTER TABLE "+f+" ADD COLUMN extra INT", "ALTER TABLE "+d2+" ADD COLUMN w DECIMAL(10,2)")
		fact(true)
		fact(true)
		dims()
		mustExec(t, conn, "UPDATE "+d2+" SET w = id * 1.5 WHERE id % 3 <> 0")
		// Merge-on-read deletes on every table.
		mustExec(t, conn, "DELETE FROM "+f+" WHERE k2 = 3 OR q < 5", "DELETE FROM "+d1+" WHERE grp = 4",
			"DELETE FROM "+d2+" WHERE id = 5", "DELETE FROM "+d3+" WHERE n = 2")
	}
	const onVector = "hash joins and the GROUP BY above it run on Arrow batches"
	queries := []string{
		// star and snowflake, inner joins
		"SELECT d1.grp, COUNT(*), SUM(f.q), MIN(f.dt), MAX(d2.region) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id JOIN {d2} d2 ON f.k2 = d2.id WHERE d2.region <> 'r2' GROUP BY d1.grp",
		"SELECT d2.region, COUNT(*), SUM(f.q * 2), COUNT(f.extra) FROM {f} f, {d1} d1, {d2} d2 WHERE f.k1 = d1.id AND d1.grp = d2.id AND f.dt > DATE '2024-02-01' GROUP BY d2.region",
		"SELECT d3.n, d1.name, COUNT(*), SUM(f.extra), AVG(f.q) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id JOIN {d3} d3 ON f.s = d3.code JOIN {d2} d2 ON f.k2 = d2.id GROUP BY d3.n, d1.name",
		"SELECT d2.w, COUNT(*), SUM(f.q - d2.w) FROM {f} f JOIN {d2} d2 ON f.k2 = d2.id JOIN {d1} d1 ON d1.id = f.k1 WHERE f.q > d2.w OR d1.name IS NULL GROUP BY d2.w",
		"SELECT COUNT(*), SUM(f.q), MIN(d1.name), MAX(d3.code) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id JOIN {d3} d3 ON d3.code = f.s",
		// a self-join in the tree
		"SELECT d1.grp, COUNT(*), SUM(b.q) FROM {f} a JOIN {f} b ON a.k1 = b.k1 JOIN {d1} d1 ON b.k1 = d1.id WHERE a.k2 < b.k2 GROUP BY d1.grp",
		// a LEFT JOIN inside
		"SELECT d2.region, COUNT(*), COUNT(d2.id), SUM(f.q) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id LEFT JOIN {d2} d2 ON f.k2 = d2.id GROUP BY d2.region",
		// EXISTS and NOT EXISTS with conditions beyond the key (TPC-H Q21's shape)
		"SELECT d1.name, COUNT(*) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id WHERE EXISTS (SELECT * FROM {f} g WHERE g.k1 = f.k1 AND g.k2 <> f.k2) GROUP BY d1.name",
		"SELECT d1.name, COUNT(*), SUM(f.q) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id WHERE NOT EXISTS (SELECT * FROM {f} g WHERE g.k1 = f.k1 AND g.k2 <> f.k2 AND g.q > f.q) GROUP BY d1.name",
		"SELECT d1.grp, COUNT(*) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id WHERE EXISTS (SELECT * FROM {f} g WHERE g.k1 = f.k1 AND g.k2 <> f.k2) AND NOT EXISTS (SELECT * FROM {f} h WHERE h.k1 = f.k1 AND h.k2 <> f.k2 AND h.dt > f.dt) GROUP BY d1.grp",
		// an anti join whose subquery finds no row at all
		"SELECT d1.name, COUNT(*) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id WHERE NOT EXISTS (SELECT * FROM {f} g WHERE g.k1 = f.k1 AND g.k2 <> f.k2 AND g.q > 1000) GROUP BY d1.name",
		"SELECT d1.name, COUNT(*) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id WHERE EXISTS (SELECT * FROM {f} g WHERE g.k1 = f.k1 AND g.k2 <> f.k2 AND g.q > 1000) GROUP BY d1.name",
		// EXISTS as a join with the subquery's Distinct keys (TPC-H Q4's shape)
		"SELECT d1.grp, COUNT(*) FROM {d1} d1 WHERE d1.grp > 1 AND EXISTS (SELECT * FROM {f} f WHERE f.k1 = d1.id AND f.q > 20) GROUP BY d1.grp",
		// a derived table's columns, the year of a date among them (TPC-H Q7 and Q9's shape)
		"SELECT x.g, x.y, SUM(x.v), COUNT(*), MAX(x.y) FROM (SELECT d1.grp AS g, EXTRACT(YEAR FROM f.dt) AS y, f.q * (1 - f.q) AS v FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id JOIN {d2} d2 ON f.k2 = d2.id WHERE d2.region IS NOT NULL) AS x GROUP BY x.g, x.y ORDER BY x.g, x.y",
		"SELECT r, y, SUM(amount) FROM (SELECT d2.region AS r, YEAR(f.dt) AS y, f.q - d2.w * f.extra AS amount FROM {f} f, {d2} d2, {d1} d1 WHERE f.k2 = d2.id AND d1.id = f.k1) AS p GROUP BY r, y",
		// CASE in the aggregates (TPC-H Q8, Q12, Q14)
		"SELECT y, SUM(CASE WHEN r = 'r1' THEN v ELSE 0 END) / SUM(v), SUM(CASE WHEN r IS NULL THEN 1 ELSE 0 END) FROM (SELECT YEAR(f.dt) AS y, f.q * (1 - f.q) AS v, d2.region AS r FROM {f} f JOIN {d2} d2 ON f.k2 = d2.id JOIN {d1} d1 ON f.k1 = d1.id) AS a GROUP BY y ORDER BY y",
		"SELECT d1.name, SUM(CASE WHEN d1.grp = 1 OR d1.grp = 2 THEN 1 ELSE 0 END), SUM(CASE WHEN f.s LIKE 'c1%' THEN f.q * 2 WHEN f.k2 > 5 THEN f.extra ELSE f.q END) FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id GROUP BY d1.name",
		// an ORDER BY ... LIMIT over the groups
		"SELECT f.k1, d2.region, SUM(f.q) AS t FROM {f} f JOIN {d1} d1 ON f.k1 = d1.id JOIN {d2} d2 ON f.k2 = d2.id GROUP BY f.k1, d2.region ORDER BY t DESC, f.k1, d2.region LIMIT 5",
	}
	for _, v := range []string{"2", "3"} {
		r := strings.NewReplacer("{f}", "f"+v, "{d1}", "da"+v, "{d2}", "db"+v, "{d3}", "dc"+v)
		for _, q := range queries {
			q = r.Replace(q)
			if !matchesRowPath(t, conn, q) {
				continue
			}
			plan := explainText(t, conn, q)
			if !strings.Contains(plan, onVector) && !strings.Contains(plan, "the hash join's probe and the GROUP BY above it run on Arrow batches") {
				t.Errorf("row path: %s\n%s", q, plan)
			}
		}
	}
}

package engine_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// A GROUP BY over a vectorized join (vecexec/vecjoinagg.go) must give the row
// path's groups. The tables: jb, the build side, with duplicate and NULL
// keys, NULL dates, strings and decimals; jp, the probe side, with NULL
// keys, keys jb lacks, NULL measures, a 32-bit copy of the key; jsparse,
// jb with a third of its keys too far apart for the array index; jnone, empty. Each is
// written by several INSERTs, so several files and batches.

const (
	jbColumns = "(k BIGINT, d DATE, pr INT, `dec` DECIMAL(15,2), s STRING)"
	jpColumns = "(k BIGINT, i INT, x DECIMAL(15,2), y DECIMAL(15,2), dt DATE, s STRING)"
)

func createJoinAggTables(t *testing.T, conn *sql.Conn) {
	t.Helper()
	rng := rand.New(rand.NewPCG(10, 3))
	or := func(null bool, v string) string {
		if null {
			return "NULL"
		}
		return v
	}
	date := func() string { return fmt.Sprintf("DATE '2024-%02d-%02d'", 1+rng.IntN(4), 1+rng.IntN(28)) }
	build := func(spread int64) []string {
		var stmts []string
		for range 3 {
			var vals []string
			for range 100 {
				k := int64(rng.IntN(200))
				if rng.IntN(3) == 0 {
					k *= spread // far apart when spread is large; joins nothing then
				}
				vals = append(vals, fmt.Sprintf("(%s, %s, %d, %s, %s)",
					or(rng.IntN(10) == 0, fmt.Sprint(k)), or(rng.IntN(12) == 0, date()), rng.IntN(3),
					or(rng.IntN(9) == 0, fmt.Sprintf("%d.%02d", rng.IntN(50)-10, rng.IntN(100))),
					or(rng.IntN(7) == 0, fmt.Sprintf("'b%d'", rng.IntN(5)))))
			}
			stmts = append(stmts, strings.Join(vals, ", "))
		}
		return stmts
	}
	mustExec(t, conn, "CREATE TABLE jb "+jbColumns, "CREATE TABLE jsparse "+jbColumns,
		"CREATE TABLE jp "+jpColumns, "CREATE TABLE jnone "+jpColumns, "CREATE TABLE jbnone "+jbColumns)
	for _, v := range build(1) {
		mustExec(t, conn, "INSERT INTO jb VALUES "+v)
	}
	for _, v := range build(1_000_000_000_007) {
		mustExec(t, conn, "INSERT INTO jsparse VALUES "+v)
	}
	for range 4 {
		var vals []string
		for range 250 {
			k := rng.IntN(260)
			null := rng.IntN(11) == 0
			vals = append(vals, fmt.Sprintf("(%s, %s, %s, 0.%02d, %s, %s)",
				or(null, fmt.Sprint(k)), or(null, fmt.Sprint(k)),
				or(rng.IntN(8) == 0, fmt.Sprintf("%d.%02d", rng.IntN(9000), rng.IntN(100))), rng.IntN(11),
				or(rng.IntN(13) == 0, date()), or(rng.IntN(6) == 0, fmt.Sprintf("'p%d'", rng.IntN(4)))))
		}
		mustExec(t, conn, "INSERT INTO jp VALUES "+strings.Join(vals, ", "))
	}
}

// vecJoinAggQueries run on the vector path; {b} is the build side's table,
// {p} the probe side's. ORDER BY names every grouping key where a LIMIT
// follows, so that ties cannot pick different rows.
func vecJoinAggQueries() []string {
	return []string{
		// TPC-H Q3's shape.
		"SELECT p.k, SUM(p.x * (1 - p.y)) AS revenue, b.d, b.pr FROM {b} b, {p} p WHERE p.k = b.k AND b.d < DATE '2024-03-01' AND p.dt > DATE '2024-02-01' GROUP BY p.k, b.d, b.pr ORDER BY revenue DESC, b.d, p.k, b.pr LIMIT 10",
		"SELECT p.k, SUM(p.x * (1 - p.y)) AS revenue, b.d, b.pr FROM {b} b, {p} p WHERE p.k = b.k AND b.d < '2024-03-01' AND p.dt > '2024-02-01' GROUP BY p.k, b.d, b.pr",
		"SELECT b.pr, COUNT(*), COUNT(p.x), SUM(p.x), AVG(p.x), MIN(b.d), MAX(p.dt), MIN(p.s), MAX(b.s) FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.pr",
		"SELECT COUNT(*), SUM(p.x), AVG(b.`dec`), MIN(p.k), MAX(b.k) FROM {p} p JOIN {b} b ON b.k = p.k",
		"SELECT b.s, p.s, COUNT(*), SUM(p.y) FROM {p} p JOIN {b} b ON p.k = b.k WHERE p.x > 100 GROUP BY b.s, p.s",
		"SELECT b.d, COUNT(DISTINCT p.k), COUNT(DISTINCT p.s), SUM(p.x * b.`dec`) FROM {p} p JOIN {b} b ON p.i = b.k GROUP BY b.d",
		"SELECT p.dt, b.`dec`, SUM(p.x - b.`dec`), MIN(p.x + 1) FROM {p} p JOIN {b} b ON p.k = b.k WHERE b.`dec` IS NOT NULL OR p.s IN ('p1', 'p2') GROUP BY p.dt, b.`dec`",
		"SELECT b.pr, SUM(p.x) AS t FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.pr HAVING t > 1000 ORDER BY t DESC",
		"SELECT p.k, COUNT(*) AS c FROM {p} p JOIN {b} b ON p.k = b.k WHERE p.x IS NULL GROUP BY p.k ORDER BY c DESC, p.k LIMIT 7",
		"SELECT b.k, SUM(p.i), SUM(p.k * 2) FROM {p} p JOIN {b} b ON p.k = b.k WHERE p.k > 100 GROUP BY b.k",
		// Products past int64: the vector path gives up (ErrInexact) and
		// the row path computes the groups.
		"SELECT b.pr, SUM(p.x * b.`dec` * 100000000000) FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.pr",
		// ORDER BY ... LIMIT picks groups on the vector path: NULL
		// minimums first, descending strings, integer sums, one row, more
		// rows than groups, none; by an AVG; under HAVING.
		"SELECT b.s, p.s, MIN(p.x) AS m FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.s, p.s ORDER BY m, b.s DESC, p.s LIMIT 5",
		"SELECT p.k, b.pr, SUM(p.k) AS t FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY p.k, b.pr ORDER BY t DESC, p.k, b.pr LIMIT 1",
		"SELECT p.k, b.pr, MAX(b.d) FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY p.k, b.pr ORDER BY p.k DESC, b.pr LIMIT 1000",
		"SELECT p.k, COUNT(*) FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY p.k ORDER BY p.k LIMIT 0",
		"SELECT b.pr, AVG(p.x) AS a FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.pr ORDER BY a, b.pr LIMIT 2",
		"SELECT p.k, AVG(p.i) AS a FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY p.k ORDER BY a DESC, p.k LIMIT 100",
		"SELECT b.pr, p.s, SUM(p.x) AS t FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.pr, p.s HAVING COUNT(*) > 3 ORDER BY t DESC, b.pr, p.s LIMIT 4",
		"SELECT p.k, AVG(p.x) AS a, COUNT(*) AS c FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY p.k HAVING c >= 2 AND a IS NOT NULL ORDER BY a DESC, p.k LIMIT 6",
		"SELECT b.pr, p.s, SUM(p.x) AS t FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.pr, p.s ORDER BY SUM(p.x) - SUM(p.y) * 100, b.pr, p.s LIMIT 5",
		// Conditions on both tables: in the join's ON, in the WHERE clause.
		"SELECT b.pr, SUM(p.x), COUNT(*) FROM {p} p JOIN {b} b ON p.k = b.k AND p.x > b.`dec` * 100 GROUP BY b.pr",
		"SELECT b.pr, p.s, SUM(p.x) FROM {p} p JOIN {b} b ON b.k = p.k WHERE p.dt >= b.d AND (p.s < b.s OR b.s IS NULL) GROUP BY b.pr, p.s",
	}
}

// vecJoinAggDeclined stay on the row path, and EXPLAIN says why.
func vecJoinAggDeclined() []string {
	return []string{
		"SELECT p.k + 1, COUNT(*) FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY p.k + 1",
		"SELECT b.pr, SUM(p.x / 2) FROM {p} p JOIN {b} b ON p.k = b.k GROUP BY b.pr",
	}
}

func TestVectorJoinAggregateMatchesRowPath(t *testing.T) {
	_, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	createJoinAggTables(t, conn)
	const onVector = "the GROUP BY above it run on Arrow batches"
	for _, pair := range [][2]string{{"jb", "jp"}, {"jsparse", "jp"}, {"jb", "jb"}, {"jbnone", "jp"}, {"jb", "jnone"}, {"jbnone", "jnone"}} {
		r := strings.NewReplacer("{b}", pair[0], "{p}", pair[1])
		for _, q := range vecJoinAggQueries() {
			q = r.Replace(q)
			if pair[1] == "jb" {
				// A self-join of the build table: its columns have
				// other names.
				q = strings.NewReplacer("p.x", "p.`dec`", "p.y", "p.`dec`", "p.dt", "p.d", "p.i", "p.pr").Replace(q)
			}
			if !matchesRowPath(t, conn, q) {
				continue
			}
			plan := explainText(t, conn, q)
			if !strings.Contains(plan, onVector) {
				t.Errorf("row path: %s\n%s", q, plan)
			}
			if picked := strings.Contains(q, "LIMIT"); picked != strings.Contains(plan, "the ORDER BY ... LIMIT picks its groups") {
				t.Errorf("ORDER BY ... LIMIT on the wrong path: %s\n%s", q, plan)
			}
		}
		for _, q := range vecJoinAggDeclined() {
			q = r.Replace(q)
			if pair[1] == "jb" {
				continue
			}
			if !matchesRowPath(t, conn, q) {
				continue
			}
			if plan := explainText(t, conn, q); strings.Contains(plan, onVector) {
				t.Errorf("vector path for a declined shape: %s\n%s", q, plan)
			}
		}
	}
	// EXPLAIN says why a GROUP BY over a vectorized join stays on the row
	// path.
	plan := explainText(t, conn, "SELECT p.k + 1, COUNT(*) FROM jp p JOIN jb b ON p.k = b.k GROUP BY p.k + 1")
	if !strings.Contains(plan, "the GROUP BY above runs on the row path: grouping by") {
		t.Errorf("no reason given:\n%s", plan)
	}
}

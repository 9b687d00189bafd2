package engine_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// An ORDER BY ... LIMIT over a vectorized GROUP BY of one scan
// (vecaggtopn.go) must keep the row path's groups, in its order. The
// table ta has NULL keys and measures, few distinct values (so sums and
// counts tie, and ORDER BY names every grouping key after them), several
// files; tnone is empty.

const topNColumns = "(k BIGINT, i INT, x DECIMAL(15,2), s STRING, d DATE)"

func createAggTopNTables(t *testing.T, conn *sql.Conn) {
	t.Helper()
	rng := rand.New(rand.NewPCG(10, 5))
	or := func(null bool, v string) string {
		if null {
			return "NULL"
		}
		return v
	}
	mustExec(t, conn, "CREATE TABLE ta "+topNColumns, "CREATE TABLE tnone "+topNColumns)
	for range 4 {
		var vals []string
		for range 200 {
			vals = append(vals, fmt.Sprintf("(%s, %d, %s, %s, %s)",
				or(rng.IntN(12) == 0, fmt.Sprint(rng.IntN(40))), rng.IntN(5),
				or(rng.IntN(8) == 0, fmt.Sprintf("%d.%d0", rng.IntN(20)-5, rng.IntN(4))),
				or(rng.IntN(7) == 0, fmt.Sprintf("'s%d'", rng.IntN(9))),
				or(rng.IntN(10) == 0, fmt.Sprintf("DATE '2024-%02d-%02d'", 1+rng.IntN(3), 1+rng.IntN(28)))))
		}
		mustExec(t, conn, "INSERT INTO ta VALUES "+strings.Join(vals, ", "))
	}
}

// aggTopNPicked are picked on the vector path; {t} is the table.
func aggTopNPicked() []string {
	return []string{
		"SELECT k, SUM(x) AS s FROM {t} GROUP BY k ORDER BY s DESC, k LIMIT 10",
		"SELECT SUM(x) AS s, k FROM {t} GROUP BY k ORDER BY s DESC, k LIMIT 10",
		"SELECT k, COUNT(*) FROM {t} GROUP BY k ORDER BY k LIMIT 5",
		"SELECT k, COUNT(*) FROM {t} GROUP BY k ORDER BY k DESC LIMIT 5",
		"SELECT k, COUNT(*) AS c FROM {t} WHERE x > 3 AND s <> 's1' GROUP BY k ORDER BY c DESC, k LIMIT 3",
		"SELECT s, MIN(x) AS m FROM {t} GROUP BY s ORDER BY m, s DESC LIMIT 4",
		"SELECT s, d, MAX(d) AS m, COUNT(x) FROM {t} GROUP BY s, d ORDER BY s DESC, d LIMIT 1",
		"SELECT s, d, MAX(x) AS m FROM {t} GROUP BY s, d ORDER BY m DESC, s, d DESC LIMIT 7",
		"SELECT k, SUM(i) AS t FROM {t} GROUP BY k ORDER BY t DESC, k LIMIT 1",
		"SELECT k, SUM(x * i) AS t, COUNT(DISTINCT s) AS n FROM {t} GROUP BY k ORDER BY n DESC, t, k LIMIT 6",
		"SELECT k, COUNT(*) FROM {t} GROUP BY k ORDER BY k LIMIT 0",
		"SELECT k, i, SUM(x) AS t FROM {t} GROUP BY k, i ORDER BY k, i LIMIT 1000",
		"SELECT i, k + 1, SUM(x) AS t FROM {t} WHERE d < DATE '2024-02-15' GROUP BY i, k ORDER BY t, i, k LIMIT 8",
		"SELECT k, SUM(x * x * 100000000000000000) AS t FROM {t} GROUP BY k ORDER BY t DESC, k LIMIT 3",
		// Integer sums past 2^53, which the row path adds as float64s:
		// the vector path gives up (ErrInexact) and the TopN runs over
		// the original GROUP BY.
		"SELECT i, SUM(k * 1000000000000000) AS t FROM {t} GROUP BY i ORDER BY t DESC, i LIMIT 3",
	}
}

// aggTopNDeclined keep the vectorized GROUP BY but leave the ORDER BY ...
// LIMIT to the row path.
func aggTopNDeclined() []string {
	return []string{
		"SELECT k, AVG(x) AS a FROM {t} GROUP BY k ORDER BY a, k LIMIT 3",
		"SELECT k, SUM(x) AS t FROM {t} GROUP BY k HAVING t > 10 ORDER BY t DESC, k LIMIT 5",
		"SELECT k, SUM(x) + 1 AS s FROM {t} GROUP BY k ORDER BY s DESC, k LIMIT 5",
		"SELECT SQL_CALC_FOUND_ROWS k, COUNT(*) FROM {t} GROUP BY k ORDER BY k LIMIT 2",
		"SELECT k, SUM(x) AS s FROM {t} GROUP BY k ORDER BY s DESC, k",
	}
}

func TestVectorAggTopNMatchesRowPath(t *testing.T) {
	_, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	createAggTopNTables(t, conn)
	const onVector, picked = "vectorized: yes: filter, grouping and aggregates", "the ORDER BY ... LIMIT picks its groups"
	for _, tbl := range []string{"ta", "tnone"} {
		for _, q := range aggTopNPicked() {
			q = strings.ReplaceAll(q, "{t}", tbl)
			if !matchesRowPath(t, conn, q) {
				continue
			}
			if plan := explainText(t, conn, q); !strings.Contains(plan, onVector) || !strings.Contains(plan, picked) {
				t.Errorf("ORDER BY ... LIMIT not picked on the vector path: %s\n%s", q, plan)
			}
		}
		for _, q := range aggTopNDeclined() {
			q = strings.ReplaceAll(q, "{t}", tbl)
			if !matchesRowPath(t, conn, q) {
				continue
			}
			if plan := explainText(t, conn, q); !strings.Contains(plan, onVector) || strings.Contains(plan, picked) {
				t.Errorf("declined shape: %s\n%s", q, plan)
			}
		}
	}
	// EXPLAIN says why the ORDER BY ... LIMIT stays on the row path.
	plan := explainText(t, conn, "SELECT k, AVG(x) AS a FROM ta GROUP BY k ORDER BY a, k LIMIT 3")
	if !strings.Contains(plan, "the ORDER BY ... LIMIT runs on the row path: ORDER BY") {
		t.Errorf("no reason given:\n%s", plan)
	}
	// Inside a subquery the row path runs the GROUP BY and its LIMIT.
	matchesRowPath(t, conn, "SELECT * FROM (SELECT k, COUNT(*) AS c FROM ta GROUP BY k ORDER BY c DESC, k LIMIT 4) q WHERE q.k > 3")
	matchesRowPath(t, conn, "SELECT k FROM ta WHERE k IN (SELECT k FROM (SELECT k, SUM(x) AS s FROM ta GROUP BY k ORDER BY s DESC, k LIMIT 3) q) ORDER BY k")
}

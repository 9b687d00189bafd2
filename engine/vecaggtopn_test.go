package engine_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// An ORDER BY ... LIMIT over a vectorized GROUP BY of one scan
// (vecexec/vecaggtopn.go) must keep the row path's groups, in its order. The
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
		"SELECT i, SUM(k * 1000000000000000) AS t FROM {t} GROUP BY i HAVING COUNT(*) > 1 ORDER BY t DESC, i LIMIT 3",
		// HAVING, evaluated on the groups that would take a top slot:
		// over aggregates selected or not, keys, NULLs; rejecting every
		// group; with more than 64 groups kept (sorted, then filtered).
		"SELECT k, SUM(x) AS t FROM {t} GROUP BY k HAVING t > 10 ORDER BY t DESC, k LIMIT 5",
		"SELECT k, SUM(x) s FROM {t} GROUP BY k HAVING COUNT(*) > 22 ORDER BY s DESC, k LIMIT 10",
		"SELECT k, SUM(x) s FROM {t} GROUP BY k HAVING COUNT(*) > 22 ORDER BY s, k LIMIT 1",
		"SELECT k, MAX(d) AS m, SUM(x) AS t FROM {t} GROUP BY k HAVING t IS NULL OR k > 30 ORDER BY m DESC, k LIMIT 4",
		"SELECT k, COUNT(*) AS c, MIN(s) AS ms FROM {t} GROUP BY k HAVING ms < 's3' AND c > 10 ORDER BY c, k DESC LIMIT 3",
		"SELECT k, COUNT(*) AS c FROM {t} GROUP BY k HAVING c > 1000 ORDER BY c DESC LIMIT 3",
		"SELECT k, i, SUM(x) AS t FROM {t} GROUP BY k, i HAVING t < 0 OR t IS NULL ORDER BY t, k, i LIMIT 100",
		"SELECT s, d, COUNT(*) AS c FROM {t} GROUP BY s, d HAVING c > 1 ORDER BY c DESC, s, d LIMIT 1000",
		"SELECT k, AVG(x) AS a FROM {t} GROUP BY k HAVING a > 4 ORDER BY a DESC, k LIMIT 5",
		// AVG as a sort key: of decimals, integers, a product; NULL
		// averages; through its alias or the aggregate; with more than 64
		// groups kept.
		"SELECT k, AVG(x) AS a FROM {t} GROUP BY k ORDER BY a, k LIMIT 3",
		"SELECT k, AVG(x) AS a FROM {t} GROUP BY k ORDER BY a DESC, k LIMIT 7",
		"SELECT s, AVG(i) AS a, COUNT(*) FROM {t} GROUP BY s ORDER BY a DESC, s LIMIT 4",
		"SELECT k, AVG(k) AS a FROM {t} GROUP BY k ORDER BY a DESC LIMIT 4",
		"SELECT i, k, AVG(x * i) AS a FROM {t} GROUP BY i, k ORDER BY a, i, k LIMIT 9",
		"SELECT k, AVG(x) FROM {t} GROUP BY k ORDER BY AVG(x) DESC, k LIMIT 6",
		"SELECT k, d, AVG(x) AS a FROM {t} GROUP BY k, d ORDER BY a DESC, k, d LIMIT 100",
		"SELECT d, AVG(x) AS a, AVG(i) AS b FROM {t} GROUP BY d ORDER BY b, a DESC, d LIMIT 5",
		// Sort keys computed from keys and aggregates, through an alias
		// or not, mixing decimals, integers, NULLs, strings, dates.
		"SELECT k, SUM(x) + 1 AS s FROM {t} GROUP BY k ORDER BY s DESC, k LIMIT 5",
		"SELECT k, SUM(x) s FROM {t} GROUP BY k ORDER BY SUM(x) - SUM(i) DESC, k LIMIT 10",
		"SELECT k, SUM(x) - SUM(i) AS t, COUNT(*) - COUNT(x) AS n FROM {t} GROUP BY k ORDER BY n DESC, t, k LIMIT 6",
		"SELECT k, COUNT(*) AS c FROM {t} GROUP BY k ORDER BY SUM(x) / COUNT(*) DESC, k LIMIT 4",
		"SELECT k, AVG(x) AS a FROM {t} GROUP BY k ORDER BY a * k, k LIMIT 100",
		"SELECT s, MAX(d) AS m FROM {t} GROUP BY s ORDER BY CONCAT(s, '-', COUNT(*)) DESC LIMIT 3",
		"SELECT s, MAX(d) AS m FROM {t} GROUP BY s ORDER BY DATEDIFF(MAX(d), MIN(d)), s LIMIT 3",
		"SELECT k, SUM(x) AS t FROM {t} GROUP BY k HAVING COUNT(*) > 20 ORDER BY ABS(t - 100), k LIMIT 4",
		"SELECT k, SUM(i) AS t FROM {t} GROUP BY k ORDER BY -k LIMIT 5",
	}
}

// aggTopNDeclined keep the vectorized GROUP BY but leave the ORDER BY ...
// LIMIT to the row path.
func aggTopNDeclined() []string {
	return []string{
		"SELECT SQL_CALC_FOUND_ROWS k, COUNT(*) FROM {t} GROUP BY k ORDER BY k LIMIT 2",
		"SELECT k, SUM(x) AS s FROM {t} GROUP BY k ORDER BY s DESC, k",
		"SELECT k, COUNT(*) AS c FROM {t} GROUP BY k HAVING c > (SELECT COUNT(*) FROM {t}) / 100 ORDER BY c DESC, k LIMIT 5",
		"SELECT k, COUNT(*) AS c FROM {t} GROUP BY k HAVING c > RAND() * 0 ORDER BY c DESC, k LIMIT 5",
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
	plan := explainText(t, conn, "SELECT k, COUNT(*) AS c FROM ta GROUP BY k HAVING c > RAND() * 0 ORDER BY c DESC, k LIMIT 5")
	if !strings.Contains(plan, "the ORDER BY ... LIMIT runs on the row path: a non-deterministic HAVING") {
		t.Errorf("no reason given:\n%s", plan)
	}
	// Inside a subquery the row path runs the GROUP BY and its LIMIT.
	matchesRowPath(t, conn, "SELECT * FROM (SELECT k, COUNT(*) AS c FROM ta GROUP BY k ORDER BY c DESC, k LIMIT 4) q WHERE q.k > 3")
	matchesRowPath(t, conn, "SELECT k FROM ta WHERE k IN (SELECT k FROM (SELECT k, SUM(x) AS s FROM ta GROUP BY k ORDER BY s DESC, k LIMIT 3) q) ORDER BY k")
}

// TestVectorAggTopNAverageTies checks the ORDER BY of an AVG compares the
// rounded value the row path compares: groups 1 and 2 average 45/101 and
// 49/110 of 1 (and of 0.01), which differ but round alike (0.4455 and
// 0.004455), so the next key orders them; groups 3 and 4 likewise below
// zero. Group 5 averages 1/32 (and 0.0003125), a half that rounds away
// from zero, to the rounded average of group 10 (10/319); groups 6 and 11
// are their opposites. Group 7 holds only NULLs; group 8's sum passes
// 2^63, and group 9's sum times 10^4 does.
func TestVectorAggTopNAverageTies(t *testing.T) {
	_, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db", "CREATE TABLE tavg (g BIGINT, i INT, x DECIMAL(15,2), b BIGINT)")
	var vals []string
	add := func(g string, n, ones int, sign string) {
		for r := range n {
			v := 0
			if r < ones {
				v = 1
			}
			vals = append(vals, fmt.Sprintf("(%s, %s%d, %s0.0%d, %s%d)", g, sign, v, sign, v, sign, v))
		}
	}
	add("1", 101, 45, "")
	add("2", 110, 49, "")
	add("3", 101, 45, "-")
	add("4", 110, 49, "-")
	add("5", 32, 1, "")
	add("6", 32, 1, "-")
	add("10", 319, 10, "")
	add("11", 319, 10, "-")
	add("NULL", 3, 2, "")
	vals = append(vals, "(7, NULL, NULL, NULL)", "(7, NULL, NULL, NULL)",
		"(8, 1, 1.00, 9000000000000000000)", "(8, 1, 1.00, 9000000000000000000)", "(8, 1, 1.00, 1)",
		"(9, 2, 2.00, 4000000000000000000)", "(9, 2, 2.00, 4000000000000000001)")
	mustExec(t, conn, "INSERT INTO tavg VALUES "+strings.Join(vals[:200], ", "), "INSERT INTO tavg VALUES "+strings.Join(vals[200:], ", "))
	for _, q := range []string{
		"SELECT g, AVG(i) AS a FROM tavg GROUP BY g ORDER BY a, g LIMIT 20",
		"SELECT g, AVG(i) AS a FROM tavg GROUP BY g ORDER BY a DESC, g LIMIT 20",
		"SELECT g, AVG(i) AS a FROM tavg GROUP BY g ORDER BY a, g DESC LIMIT 20",
		"SELECT g, AVG(i) AS a FROM tavg GROUP BY g ORDER BY a DESC, g DESC LIMIT 100",
		"SELECT g, AVG(x) AS a FROM tavg GROUP BY g ORDER BY a, g DESC LIMIT 20",
		"SELECT g, AVG(x) AS a FROM tavg GROUP BY g ORDER BY a DESC, g DESC LIMIT 3",
		"SELECT g, AVG(b) AS a FROM tavg GROUP BY g ORDER BY a DESC, g LIMIT 20",
		"SELECT g, AVG(b) AS a FROM tavg GROUP BY g ORDER BY a, g LIMIT 5",
		"SELECT g, AVG(x * 3) AS a FROM tavg GROUP BY g ORDER BY a, g LIMIT 20",
		"SELECT g, AVG(i) AS a, COUNT(*) AS c FROM tavg GROUP BY g HAVING c > 100 ORDER BY a DESC, g LIMIT 2",
		// The key fails on the groups HAVING rejects: the row path never
		// evaluates it there, and answers; without the HAVING both fail.
		"SELECT g, COUNT(*) AS c FROM tavg GROUP BY g HAVING c < 50 ORDER BY JSON_EXTRACT(IF(c < 50, '1', '{'), '$'), g LIMIT 3",
		"SELECT g, COUNT(*) AS c FROM tavg GROUP BY g ORDER BY JSON_EXTRACT(IF(c < 50, '1', '{'), '$'), g LIMIT 3",
	} {
		if !matchesRowPath(t, conn, q) {
			continue
		}
		if plan := explainText(t, conn, q); !strings.Contains(plan, "the ORDER BY ... LIMIT picks its groups") {
			t.Errorf("ORDER BY ... LIMIT not picked on the vector path: %s\n%s", q, plan)
		}
	}
	// The tie is real: the row path orders 1 before 2 by the key.
	got, err := resultRows(conn, "SELECT g, AVG(i) AS a FROM tavg WHERE g IN (1, 2) GROUP BY g ORDER BY a DESC, g DESC LIMIT 2")
	if err != nil {
		t.Fatal(err)
	}
	two, one := strings.Index(got, "int64:2|string:0.4455|"), strings.Index(got, "int64:1|string:0.4455|")
	if two < 0 || one < two {
		t.Errorf("groups 1 and 2 should tie on 0.4455 and order by g DESC:\n%s", got)
	}
}

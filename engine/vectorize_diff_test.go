package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The vectorized path (pushdown/vector) must give exactly the rows of
// go-mysql-server's row path: same values, same Go types, same column
// types. Every query below runs with icesql_vectorize ON and OFF over the
// diff table (NULLs, an all-NULL file, NaN and infinities in the float
// columns), a table of extreme values, and an empty table.

// vecEdgeTable has extreme values: the integer limits (the magnitudes
// they sum pass 2^63, which the 128-bit exact sums hold), decimals of 18
// digits (their products overflow), negative decimals, empty strings, a
// column that is NULL in every row, far dates.
var vecEdgeTable = []string{
	"CREATE TABLE edge (i INT, l BIGINT, `dec` DECIMAL(18,4), s STRING, dt DATE, n INT, g INT)",
	`INSERT INTO edge VALUES
	 (2147483647, 9223372036854775807, 99999999999999.9999, '', '1970-01-01', NULL, 1),
	 (-2147483648, -9223372036854775808, -99999999999999.9999, 'a', '0001-01-01', NULL, 1),
	 (0, 0, -0.0001, NULL, '9999-12-31', NULL, 2),
	 (NULL, NULL, NULL, '', NULL, NULL, NULL),
	 (-1, -1, -12.5, 'é', '2024-02-29', NULL, 2),
	 (7, 3, 0.5, 'b', '1969-12-31', NULL, 3)`,
	"CREATE TABLE nothing (i INT, l BIGINT, `dec` DECIMAL(18,4), s STRING, dt DATE, n INT, g INT)",
}

// vecQueries are the shapes the vectorized path computes; {t} is the table.
func vecQueries() []string {
	aggs := []string{
		"COUNT(*), COUNT(i), COUNT(s), COUNT(dt), COUNT(`dec`)",
		"SUM(i), AVG(i), MIN(i), MAX(i)",
		"SUM(l), AVG(l), MIN(l), MAX(l)",
		"SUM(`dec`), AVG(`dec`), MIN(`dec`), MAX(`dec`)",
		"SUM(`dec` * (1 - `dec`)), SUM(`dec` * `dec` * (1 + `dec`)), MIN(`dec` - 2), MAX(`dec` + 0.125)",
		"SUM(i + 1), SUM(i * 2 - l), AVG(`dec` + i), MIN(i - 3)",
		"MIN(s), MAX(s), MIN(dt), MAX(dt)",
		"COUNT(DISTINCT i), COUNT(DISTINCT s), COUNT(DISTINCT dt), COUNT(DISTINCT `dec`)",
		"COUNT(DISTINCT l), SUM(i), COUNT(*), COUNT(DISTINCT i)",
		"SUM(YEAR(dt)), MIN(EXTRACT(YEAR FROM dt)), MAX(YEAR(dt) - i), COUNT(YEAR(dt))",
		"SUM(CASE WHEN i > 10 THEN `dec` ELSE 0 END), SUM(CASE WHEN s IS NULL THEN 1 ELSE 0 END), COUNT(CASE WHEN i < 5 THEN i END)",
		"MIN(CASE WHEN dt > '2024-02-01' THEN i * 2 WHEN i < 0 THEN -1 END), SUM(CASE WHEN `dec` > 5 THEN `dec` * `dec` ELSE `dec` END), COUNT(CASE WHEN s LIKE 'k0%' THEN `dec` ELSE NULL END)",
	}
	filters := []string{
		"",
		"WHERE i > 10",
		"WHERE i >= -20 AND i < 60 AND `dec` BETWEEN -5 AND 50.5",
		"WHERE `dec` <= 0.05 OR s = 'k05-a'",
		"WHERE NOT (i > 10 AND `dec` < 20)",
		"WHERE dt >= '2024-01-20' AND dt < DATE '2024-03-01'",
		"WHERE dt <= DATE '2024-06-01' - INTERVAL '90' DAY",
		"WHERE s IS NULL OR i IS NOT NULL",
		"WHERE s IN ('', 'k01-a', 'b', NULL)",
		"WHERE i IN (1, -20, 7, 2147483647)",
		"WHERE i NOT IN (1, 2, 3)",
		"WHERE `dec` IN (1.25, -12.5, 0.5, 5)",
		"WHERE s > 'k05' AND s <> ''",
		"WHERE `dec` * 2 > i + 1",
		"WHERE l < 60000000000 AND i = 15",
		"WHERE i > 1000000",
		"WHERE YEAR(dt) = 2024 OR EXTRACT(YEAR FROM dt) < 2000",
		"WHERE s LIKE 'k0%-b' OR s LIKE '%a'",
		"WHERE s NOT LIKE 'k1\\_%' AND s LIKE '_%'",
	}
	groups := []string{"", "GROUP BY s", "GROUP BY dt", "GROUP BY i", "GROUP BY `dec`", "GROUP BY s, dt", "GROUP BY l"}
	var out []string
	for _, g := range groups {
		keys := strings.TrimPrefix(g, "GROUP BY ")
		for i, f := range filters {
			// Each filter with two of the aggregate lists, in turn.
			for _, a := range []string{aggs[i%len(aggs)], aggs[(i+len(groups)+len(out))%len(aggs)]} {
				sel := a
				if keys != "" {
					sel = keys + ", " + a
				}
				out = append(out, fmt.Sprintf("SELECT %s FROM {t} %s %s", sel, f, g))
			}
		}
	}
	// The TPC-H shapes, ordered as Q1 is.
	out = append(out,
		"SELECT s, dt, SUM(`dec`) AS a, SUM(`dec` * (1 - `dec`)) AS b, AVG(`dec`), COUNT(*) AS c FROM {t} WHERE dt <= DATE '2024-12-01' - INTERVAL '90' DAY GROUP BY s, dt ORDER BY s, dt",
		"SELECT SUM(`dec` * `dec`) AS revenue FROM {t} WHERE dt >= DATE '2024-01-01' AND dt < DATE '2024-02-01' AND `dec` BETWEEN 0.05 AND 70 AND i < 24",
		"SELECT s, COUNT(*) AS c FROM {t} GROUP BY s ORDER BY c DESC, s LIMIT 3",
	)
	return out
}

// vecSubqueries have aggregates in subqueries, which stay on the row path
// (their rows carry the outer scope) and must still give the same rows.
func vecSubqueries() []string {
	return []string{
		"SELECT (SELECT COUNT(*) FROM {t} WHERE i = 6), (SELECT SUM(i) FROM {t})",
		"SELECT CASE WHEN i > (SELECT AVG(i) FROM {t}) THEN i * 2 ELSE l END FROM {t} ORDER BY 1",
		"SELECT s, (SELECT MAX(`dec`) FROM {t} x WHERE x.s = y.s) FROM {t} y",
		"SELECT * FROM (SELECT s, COUNT(*) AS c FROM {t} GROUP BY s) q WHERE c > 1",
	}
}

// matchesRowPath runs q with the vector path off and on and reports any
// difference; false when only one of them failed, so that the caller
// skips checks of the plan.
func matchesRowPath(t *testing.T, conn *sql.Conn, q string) bool {
	t.Helper()
	mustExec(t, conn, "SET icesql_vectorize = OFF")
	want, wantErr := resultRows(conn, q)
	mustExec(t, conn, "SET icesql_vectorize = ON")
	got, gotErr := resultRows(conn, q)
	if (gotErr != nil) != (wantErr != nil) {
		t.Errorf("%s: error %v, row path %v", q, gotErr, wantErr)
		return false
	}
	if got != want {
		t.Errorf("%s:\n  vectorized %s\n  row path   %s", q, got, want)
	}
	return true
}

func TestVectorizedMatchesRowPath(t *testing.T) {
	e, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	createDiffTable(t, e, "diff", false)
	mustExec(t, conn, vecEdgeTable...)
	vectorized, checked := 0, 0
	queries := vecQueries()
	for _, tbl := range []string{"diff", "edge", "nothing"} {
		for _, q := range append(vecSubqueries(), queries...) {
			q = strings.ReplaceAll(q, "{t}", tbl)
			if !matchesRowPath(t, conn, q) {
				continue
			}
			if strings.Contains(q, "(SELECT") {
				continue
			}
			checked++
			if plan := explainText(t, conn, q); strings.Contains(plan, "VectorizedGroupBy") {
				vectorized++
			} else {
				t.Logf("row path: %s\n%s", q, plan)
			}
		}
	}
	// Every shape is one the vectorized path takes (the WHERE clauses and
	// aggregates above all translate).
	if total := 3 * len(queries); vectorized != total || checked != total {
		t.Errorf("%d of %d queries ran vectorized", vectorized, total)
	}
}

// TestVectorizeDeclines checks that shapes the vector path does not
// compute stay on the row path and EXPLAIN says why.
func TestVectorizeDeclines(t *testing.T) {
	_, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	mustExec(t, conn, vecEdgeTable...)
	for _, q := range []string{
		"SELECT COUNT(DISTINCT i + 1) FROM edge",
		"SELECT COUNT(DISTINCT s, i) FROM edge",
		"SELECT SUM(i / 2) FROM edge",
		"SELECT g, SUM(i) FROM edge WHERE UPPER(s) LIKE '%A' GROUP BY g",
		"SELECT g, SUM(i) FROM edge WHERE s LIKE CONCAT(s, '%') GROUP BY g",
		"SELECT SUM(i) FROM edge GROUP BY i + 1",
	} {
		plan := explainText(t, conn, q)
		if strings.Contains(plan, "VectorizedGroupBy") || !strings.Contains(plan, "vectorized: no") {
			t.Errorf("%s: want the row path and a reason, EXPLAIN gives\n%s", q, plan)
		}
	}
}

// resultRows is the rows of q, each value with its Go type, and the column
// types, sorted by row text.
func resultRows(conn *sql.Conn, q string) (string, error) {
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return "", err
	}
	var head []string
	for _, c := range cts {
		head = append(head, c.Name()+":"+c.DatabaseTypeName())
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var lines []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		var b strings.Builder
		for _, v := range vals {
			if raw, ok := v.([]byte); ok {
				v = string(raw)
			}
			fmt.Fprintf(&b, "%T:%v|", v, v)
		}
		lines = append(lines, b.String())
	}
	if !strings.Contains(q, "ORDER BY") {
		slices.Sort(lines)
	}
	return strings.Join(head, ",") + "\n" + strings.Join(lines, "\n"), rows.Err()
}

func explainText(t testing.TB, conn *sql.Conn, q string) string {
	t.Helper()
	return strings.Join(explainLines(t, conn, q), "\n") + "\n"
}

// TestVectorizedHavingOnAggregates checks GROUP BYs whose HAVING (or
// ORDER BY) aggregates a column: go-mysql-server adds the column to the
// GroupBy's outputs, unread, and the vector path still computes them.
func TestVectorizedHavingOnAggregates(t *testing.T) {
	e, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	createDiffTable(t, e, "diff", false)
	mustExec(t, conn, vecEdgeTable...)
	for _, tbl := range []string{"diff", "edge", "nothing"} {
		for _, q := range []string{
			"SELECT s, SUM(i) FROM {t} GROUP BY s HAVING SUM(i) > 10",
			"SELECT dt, COUNT(*) FROM {t} GROUP BY dt HAVING MIN(s) < 'k05' OR MAX(`dec`) > 40",
			"SELECT dt, AVG(`dec`) AS a FROM {t} WHERE i > 0 GROUP BY dt HAVING AVG(`dec`) > 5 AND COUNT(l) > 0",
			"SELECT s FROM {t} GROUP BY s HAVING SUM(l) IS NULL OR SUM(l) > 0",
			"SELECT s, MAX(i) FROM {t} GROUP BY s ORDER BY MAX(i) DESC, s LIMIT 5",
		} {
			q = strings.ReplaceAll(q, "{t}", tbl)
			if !matchesRowPath(t, conn, q) {
				continue
			}
			if plan := explainText(t, conn, q); !strings.Contains(plan, "VectorizedGroupBy") {
				t.Errorf("%s: want the vector path, EXPLAIN gives\n%s", q, plan)
			}
		}
	}
	// HAVING conjuncts that compare an aggregate with a constant are
	// decided on the exact accumulators before any row is built
	// (vecexec/vechaving.go); the sums here pass the int64 limits, the constants
	// are integers, decimals, the limits themselves and beyond them.
	mustExec(t, conn, "CREATE TABLE sums (g INT, l BIGINT, d DECIMAL(18,2))",
		`INSERT INTO sums VALUES (1, 9223372036854775807, 99999999999999.99), (1, 9223372036854775807, 0.01),
		 (2, -9223372036854775808, -0.5), (2, -9223372036854775808, NULL), (3, 5, 2.5), (3, NULL, 0.5), (4, NULL, NULL), (5, -1, -1)`)
	for _, tbl := range []string{"sums", "edge", "diff", "nothing"} {
		for _, q := range []string{
			"SELECT g, SUM(l) FROM {t} GROUP BY g HAVING SUM(l) > 9223372036854775807",
			"SELECT g, SUM(l) FROM {t} GROUP BY g HAVING SUM(l) < -9223372036854775808",
			"SELECT g, SUM(l) FROM {t} GROUP BY g HAVING SUM(l) >= -1 AND SUM(l) <= 5",
			"SELECT g, SUM(l) FROM {t} GROUP BY g HAVING SUM(l) = 18446744073709551614",
			"SELECT g, SUM(l) FROM {t} GROUP BY g HAVING 4 < SUM(l)",
			"SELECT g, SUM(l) AS total FROM {t} GROUP BY g HAVING total <> 5 AND total > 1 ORDER BY g",
			"SELECT g, SUM(l) FROM {t} GROUP BY g HAVING SUM(l) > 4.5",
			"SELECT g, SUM(l) FROM {t} GROUP BY g HAVING SUM(l) = 4.5 OR SUM(l) IS NULL",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) > 2.99",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) > 2.999",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) >= 2.99999 AND SUM(d) <= 100000000000000.001",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) = 3.001",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) >= 3 AND COUNT(*) = 2",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) = 100000000000000",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) < -0.499",
			"SELECT g, SUM(d) FROM {t} GROUP BY g HAVING SUM(d) <= -0.5 AND SUM(l) < 0",
			"SELECT g, COUNT(*) FROM {t} GROUP BY g HAVING COUNT(*) > 1",
			"SELECT g, COUNT(l) FROM {t} GROUP BY g HAVING COUNT(l) < 2 AND COUNT(*) >= 1",
			"SELECT g, COUNT(l) FROM {t} GROUP BY g HAVING COUNT(l) > 0.5",
			"SELECT g, COUNT(DISTINCT l) FROM {t} GROUP BY g HAVING COUNT(DISTINCT l) = 1",
			"SELECT g, SUM(l) FROM {t} WHERE l > 0 GROUP BY g HAVING SUM(l) > 0 ORDER BY SUM(l) DESC LIMIT 1",
		} {
			if tbl != "sums" {
				// The other tables group by g as well, from other columns.
				q = strings.NewReplacer("SUM(l)", "SUM(i)", "COUNT(l)", "COUNT(i)", "COUNT(DISTINCT l)", "COUNT(DISTINCT i)", "SUM(d)", "SUM(`dec`)").Replace(q)
				if tbl == "diff" {
					q = strings.ReplaceAll(q, "GROUP BY g", "GROUP BY s")
					q = strings.ReplaceAll(q, "SELECT g,", "SELECT s,")
					q = strings.ReplaceAll(q, "ORDER BY g", "ORDER BY s")
				}
			}
			q = strings.ReplaceAll(q, "{t}", tbl)
			if !matchesRowPath(t, conn, q) {
				continue
			}
			if plan := explainText(t, conn, q); !strings.Contains(plan, "VectorizedGroupBy") {
				t.Errorf("%s: want the vector path, EXPLAIN gives\n%s", q, plan)
			}
		}
	}
	// A non-grouped column read above the GroupBy stays on the row path.
	mustExec(t, conn, "SET sql_mode = ''")
	q := "SELECT g, i FROM edge GROUP BY g HAVING SUM(i) > 0"
	if plan := explainText(t, conn, q); strings.Contains(plan, "VectorizedGroupBy") {
		t.Errorf("%s: a non-grouped column the query selects ran on the vector path\n%s", q, plan)
	}
}

package engine_test

import (
	"slices"
	"strings"
	"testing"
)

// vecFilterQueries are WHERE clauses without aggregation: the vector path
// selects the rows and builds only those (SELECT * materialises every
// column type the tables have), alone, under projections, ORDER BY and
// LIMIT, and on both sides of a join.
func vecFilterQueries() []string {
	filters := []string{
		"WHERE i > 10",
		"WHERE i >= -20 AND i < 60 AND `dec` BETWEEN -5 AND 50.5",
		"WHERE `dec` <= 0.05 OR s = 'k05-a'",
		"WHERE NOT (i > 10 AND `dec` < 20)",
		"WHERE dt >= '2024-01-20' AND dt < DATE '2024-03-01'",
		"WHERE dt <= DATE '2024-06-01' - INTERVAL '90' DAY",
		"WHERE s IS NULL OR i IS NOT NULL",
		"WHERE s IN ('', 'k01-a', 'b', NULL)",
		"WHERE i NOT IN (1, 2, 3)",
		"WHERE `dec` IN (1.25, -12.5, 0.5, 5)",
		"WHERE `dec` * 2 > i + 1",
		"WHERE l < 60000000000 AND i = 15",
		"WHERE i > 1000000",
		// LIKE, tested by go-mysql-server's matcher once per dictionary
		// value: wildcards, multi-byte characters, escapes, NOT.
		"WHERE s LIKE 'k01%' OR s LIKE 'k01-_' OR s LIKE ''",
		"WHERE s LIKE 'k0%-b' OR s LIKE '%a' OR s LIKE 'é%'",
		"WHERE s LIKE 'k1\\_%' OR s LIKE 'k1|%%' ESCAPE '|'",
		"WHERE s NOT LIKE 'k01%' AND i > 3",
		"WHERE NOT (s LIKE '%-_') OR s IS NULL",
	}
	var out []string
	for k, f := range filters {
		out = append(out, "SELECT * FROM {t} "+f)
		out = append(out, "SELECT s, i + 1, `dec` * `dec`, dt FROM {t} "+f)
		if k%3 == 0 {
			out = append(out, "SELECT i, s FROM {t} "+f+" ORDER BY i DESC, s LIMIT 4")
		}
	}
	return append(out, vecJoinQueries()...)
}

// vecJoinQueries are inner hash joins of two scans on an integer key:
// keys with NULLs, 32- against 64-bit keys, conditions beyond the key
// equality, joins under GROUP BY, ORDER BY and LIMIT.
func vecJoinQueries() []string {
	return []string{
		"SELECT a.i, b.s FROM {t} a JOIN {t} b ON a.i = b.i WHERE a.dt < '2024-02-01' AND b.`dec` > 0",
		"SELECT a.i, SUM(b.`dec`) FROM {t} a, {t} b WHERE a.i = b.i AND a.i > 3 AND b.dt >= DATE '2024-01-15' GROUP BY a.i",
		"SELECT * FROM {t} a JOIN {t} b ON a.l = b.i",
		"SELECT a.s, b.s, a.`dec` * b.`dec` FROM {t} a JOIN {t} b ON b.i = a.i AND a.s < b.s",
		"SELECT a.i, b.dt FROM {t} a JOIN {t} b ON a.i = b.i AND b.dt > a.dt WHERE a.s IS NOT NULL",
		"SELECT a.i, COUNT(*) AS c FROM {t} a JOIN {t} b ON a.i = b.i GROUP BY a.i ORDER BY c DESC, a.i LIMIT 5",
	}
}

// vecJoinDeclined are joins the vector path leaves to go-mysql-server (the
// key is an expression; an outer join); a filter on the join's outer side
// still runs vectorized, one on its inner side (read again per outer row)
// does not.
func vecJoinDeclined() []string {
	return []string{
		"SELECT a.i, b.i FROM {t} a JOIN {t} b ON a.i = b.i + 0 WHERE a.i < 100",
		"SELECT a.i, b.s FROM {t} a LEFT JOIN {t} b ON a.i = b.i WHERE a.i > 10",
	}
}

// vecFoldQueries compare a date or time with string literals: those the
// vector path does not translate (a timestamp, an invalid date, <=>) stay
// on the row path, which then converts the literal once instead of per
// row; an invalid date is left to the row path's own per-row handling.
func vecFoldQueries() []string {
	return []string{
		"SELECT i, dt FROM {t} WHERE dt > '2024-01-20' AND s LIKE 'k%'",
		"SELECT i, dt FROM {t} WHERE dt BETWEEN '2024-01-01' AND '2024-02-01 12:00:00' AND s LIKE '%a'",
		"SELECT i FROM {t} WHERE dt = '2024-01-05 00:00:00' OR s LIKE '%b'",
		"SELECT i FROM {t} WHERE '2024-02-01' <= dt AND s LIKE '%'",
		"SELECT i FROM {t} WHERE dt < '2024-13-45' AND s LIKE '%'",
		"SELECT i FROM {t} WHERE dt <=> '2024-01-07' AND s LIKE '%'",
	}
}

func TestVectorFilterMatchesRowPath(t *testing.T) {
	e, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	createDiffTable(t, e, "diff", false)
	mustExec(t, conn, vecEdgeTable...)
	vectorized, total := 0, 0
	for _, tbl := range []string{"diff", "edge", "nothing"} {
		declined := map[string]bool{}
		for _, q := range vecJoinDeclined() {
			declined[strings.ReplaceAll(q, "{t}", tbl)] = true
		}
		fold := map[string]bool{}
		for _, q := range vecFoldQueries() {
			fold[strings.ReplaceAll(q, "{t}", tbl)] = true
		}
		joins := map[string]bool{}
		for _, q := range vecJoinQueries() {
			joins[strings.ReplaceAll(q, "{t}", tbl)] = true
		}
		for _, q := range slices.Concat(vecFilterQueries(), vecFoldQueries(), vecJoinDeclined()) {
			q = strings.ReplaceAll(q, "{t}", tbl)
			if !matchesRowPath(t, conn, q) {
				continue
			}
			if fold[q] || declined[q] {
				continue
			}
			total++
			plan := explainText(t, conn, q)
			if joins[q] != strings.Contains(plan, "the hash join's probe") {
				t.Errorf("%s: join vectorized %v, want %v\n%s", q, !joins[q], joins[q], plan)
			}
			if strings.Contains(plan, "vectorized filter: yes") && !strings.Contains(plan, "vectorized filter: no") {
				vectorized++
			} else {
				t.Errorf("row path: %s\n%s", q, plan)
			}
		}
	}
	if vectorized != total {
		t.Errorf("%d of %d queries ran vectorized", vectorized, total)
	}
}

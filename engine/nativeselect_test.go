package engine_test

import (
	"regexp"
	"testing"
)

// TestLateMaterialisationMatchesRowPath checks the native scan's late
// materialisation (pushdown/nativeselect.go: the WHERE clause's columns
// decoded first, the others only for the rows it keeps) against the row
// path. The tables have pages of about a hundred rows in row groups of a
// thousand, so that kept rows fall on the first and last rows of pages and
// ranges cross page boundaries; one table keeps dictionaries, one writes
// every column PLAIN, one has dictionaries small enough to overflow into
// PLAIN pages within a column chunk. Columns have NULLs, and one file has
// position deletes, which sends it through iceberg-go's reader in the same
// scan. The larger tables read enough batches for the scan to stop
// selecting when the predicate keeps most rows.
func TestLateMaterialisationMatchesRowPath(t *testing.T) {
	_, conn, _ := openCounting(t)
	// Native decoding is what is tested (see TestNativeDecodeMatchesRowPath).
	mustExec(t, conn, "SET icesql_file_cache = OFF")
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	layouts := map[string]string{
		"dict": "",
		"plain": ", 'write.parquet.dict-encoding-enabled.column.k'='false', 'write.parquet.dict-encoding-enabled.column.dt'='false'" +
			", 'write.parquet.dict-encoding-enabled.column.d'='false', 'write.parquet.dict-encoding-enabled.column.l'='false'",
		"overflow": ", 'write.parquet.dict-size-bytes'='300'",
	}
	for name, props := range layouts {
		mustExec(t, conn,
			"CREATE TABLE lm_"+name+" (k INT, l BIGINT, d DECIMAL(12,2), s STRING, dt DATE, p DECIMAL(15,2)) "+
				"TBLPROPERTIES ('write.parquet.row-group-limit'='1000', 'write.parquet.page-row-limit'='100', "+
				"'write.parquet.page-size-bytes'='64', 'write.delete.mode'='merge-on-read'"+props+")",
			// Dates fall on even days only, so that a date between two of
			// them is inside every row group's bounds yet matches no row.
			`INSERT INTO lm_`+name+` WITH RECURSIVE seq (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 2999)
			 SELECT n, CASE WHEN n % 7 = 0 THEN NULL ELSE n * 1000003 END,
			        CASE WHEN n % 11 = 0 THEN NULL ELSE (n % 200) - 100.25 END,
			        CASE WHEN n % 13 = 0 THEN NULL ELSE CONCAT('s', n % 5) END,
			        CASE WHEN n % 17 = 5 THEN NULL ELSE DATE_ADD('2020-01-01', INTERVAL (n * 7919 % 500) * 2 DAY) END,
			        (n * 7919 % 100000) / 100
			 FROM seq`,
			`INSERT INTO lm_`+name+` WITH RECURSIVE seq (n) AS (SELECT 3000 UNION ALL SELECT n + 1 FROM seq WHERE n < 11999)
			 SELECT n, n, n % 97, CASE WHEN n % 2 = 0 THEN 's1' ELSE 'other' END, DATE_ADD('2020-01-01', INTERVAL (n % 400) * 2 DAY), n / 4
			 FROM seq`,
			`INSERT INTO lm_`+name+` WITH RECURSIVE seq (n) AS (SELECT 12000 UNION ALL SELECT n + 1 FROM seq WHERE n < 12999)
			 SELECT n, -n, n % 89, 's4', DATE_ADD('2020-01-01', INTERVAL (n % 300) * 2 DAY), n / 8
			 FROM seq`,
			"DELETE FROM lm_"+name+" WHERE k >= 12000 AND k % 10 = 3",
		)
	}
	queries := []string{
		// Nothing kept, though no row group can be skipped.
		"SELECT COUNT(*), SUM(p), MIN(s), SUM(l), SUM(k) FROM {t} WHERE dt = '2020-01-02'",
		"SELECT COUNT(*), SUM(l) FROM {t} WHERE k % 1000 = 1001",
		// Everything kept.
		"SELECT COUNT(*), SUM(p), SUM(d), COUNT(l), MIN(s), MAX(s) FROM {t} WHERE dt >= '2000-01-01'",
		"SELECT COUNT(*), SUM(p), SUM(d) FROM {t} WHERE k >= 0",
		// First and last rows of pages and row groups, and ranges across
		// their boundaries.
		"SELECT COUNT(*), SUM(p), SUM(d), SUM(l), MIN(s), MAX(dt) FROM {t} WHERE k = 0 OR k = 99 OR k = 100 OR k = 199 OR k = 999 OR k = 1000 OR k = 2999 OR k = 4999",
		"SELECT s, COUNT(*), SUM(p), SUM(d), SUM(l), MIN(dt) FROM {t} WHERE k BETWEEN 95 AND 105 OR k BETWEEN 990 AND 1010 GROUP BY s",
		"SELECT COUNT(*), SUM(p), SUM(d) FROM {t} WHERE k % 100 = 0 OR k % 100 = 99",
		// A 1% date range (the benchmark's shape), and others.
		"SELECT COUNT(*), SUM(p) FROM {t} WHERE dt >= '2020-03-01' AND dt < '2020-03-11'",
		"SELECT s, COUNT(*), SUM(p), AVG(d), MIN(l), MAX(l) FROM {t} WHERE dt BETWEEN '2020-06-01' AND '2020-09-30' GROUP BY s",
		"SELECT COUNT(*), SUM(l), SUM(p) FROM {t} WHERE d BETWEEN -5 AND 5.5",
		"SELECT COUNT(*), SUM(d), COUNT(dt) FROM {t} WHERE p < 10",
		"SELECT COUNT(*), SUM(d) FROM {t} WHERE l > 1000000000 AND l < 2000000000",
		// NULLs: kept by the predicate, rejected by it, and in the other
		// columns of kept rows.
		"SELECT COUNT(*), SUM(p), SUM(d), COUNT(l) FROM {t} WHERE dt IS NULL",
		"SELECT COUNT(*), SUM(p), COUNT(d) FROM {t} WHERE dt IS NULL OR dt < '2020-02-01'",
		"SELECT COUNT(*), SUM(p) FROM {t} WHERE d IS NOT NULL AND d < -99",
		"SELECT COUNT(*), SUM(p) FROM {t} WHERE l IS NULL",
		// Several columns in the predicate.
		"SELECT COUNT(*), SUM(p), SUM(l) FROM {t} WHERE dt < '2020-04-01' AND d > 50",
		"SELECT s, COUNT(*), SUM(p) FROM {t} WHERE s = 's1' AND k < 4000 GROUP BY s",
		"SELECT COUNT(*), SUM(p) FROM {t} WHERE s = 's3' OR s IS NULL",
		// A value the vector path cannot compute exactly (p * 10^14
		// overflows an int64): the prefilter keeps the batch's rows and
		// the consumer answers as without one.
		"SELECT COUNT(*), SUM(p) FROM {t} WHERE p * 100000000000000 > 50000000000000000",
		// Rows, not aggregates: the vectorized filter's scan (a point
		// lookup, a date range) builds rows from the kept rows only.
		"SELECT k, l, d, s, dt, p FROM {t} WHERE k = 4321",
		"SELECT * FROM {t} WHERE k = 0 OR k = 99 OR k = 100 OR k = 999 OR k = 1000 OR k = 12003 OR k = 12004 ORDER BY k",
		"SELECT k, s, p, dt FROM {t} WHERE dt >= '2020-03-01' AND dt < '2020-03-11' ORDER BY k",
		"SELECT s, d, l FROM {t} WHERE dt IS NULL ORDER BY k",
		"SELECT k, s, p FROM {t} WHERE s = 's3' OR s IS NULL ORDER BY k LIMIT 50",
		"SELECT k, p FROM {t} WHERE p * 100000000000000 > 90000000000000000 ORDER BY k",
		"SELECT k, d, s FROM {t} WHERE d BETWEEN -5 AND 5.5 ORDER BY k DESC LIMIT 20",
		// LIKE, tested once per value of each row group's dictionary.
		"SELECT k, s FROM {t} WHERE s LIKE '%3' OR s LIKE 'oth_r' ORDER BY k",
		"SELECT COUNT(*), SUM(p), MIN(s) FROM {t} WHERE s NOT LIKE 's%'",
		// ORDER BY ... LIMIT: rows are built only while their first key
		// can place them among the first n (vecexec/vecrowstopn.go). Keys of
		// each type, NULLs first (ascending) and last (descending), ties
		// broken by k, LIMIT 1, OFFSET, with and without a WHERE.
		"SELECT k, p FROM {t} ORDER BY p DESC, k LIMIT 5",
		"SELECT k, p, s FROM {t} WHERE dt < '2020-06-01' ORDER BY p, k LIMIT 7",
		"SELECT * FROM {t} ORDER BY d, k LIMIT 20",
		"SELECT k, d FROM {t} ORDER BY d DESC, k DESC LIMIT 20",
		"SELECT k, l FROM {t} ORDER BY l, k LIMIT 3 OFFSET 200",
		"SELECT k, l FROM {t} WHERE k > 100 ORDER BY l DESC LIMIT 1",
		"SELECT k, dt FROM {t} ORDER BY dt, k LIMIT 30",
		"SELECT k, dt FROM {t} ORDER BY dt DESC, k LIMIT 30",
		"SELECT k, s FROM {t} ORDER BY s, k LIMIT 10",
		"SELECT k, s FROM {t} WHERE p > 10 ORDER BY s DESC, k DESC LIMIT 10",
		"SELECT k FROM {t} ORDER BY k DESC LIMIT 4",
		"SELECT k, p FROM {t} WHERE s = 'none' ORDER BY p LIMIT 3",
	}
	for _, tbl := range []string{"lm_dict", "lm_plain", "lm_overflow"} {
		for _, q := range queries {
			matchesRowPath(t, conn, replaceTable(q, tbl))
		}
	}
	for _, q := range []string{"SELECT k, p FROM lm_dict ORDER BY p DESC, k LIMIT 5", "SELECT k, p FROM lm_dict WHERE dt < '2020-06-01' ORDER BY p, k LIMIT 7"} {
		if plan := explainText(t, conn, q); !regexp.MustCompile(`builds only the rows that can be among its first [57]`).MatchString(plan) {
			t.Errorf("%s: want the ORDER BY ... LIMIT on the vector path\n%s", q, plan)
		}
	}
	// The native reader kept only the rows of the range for the other
	// columns.
	late := regexp.MustCompile(`late materialisation: other columns decoded for (\d+) of (\d+) rows`)
	for _, tbl := range []string{"lm_dict", "lm_plain", "lm_overflow"} {
		for _, q := range []string{
			"SELECT COUNT(*), SUM(p) FROM {t} WHERE dt >= '2020-03-01' AND dt < '2020-03-11'",
			"SELECT k, s, p FROM {t} WHERE dt >= '2020-03-01' AND dt < '2020-03-11'",
		} {
			line := nativeExplain(t, conn, replaceTable(q, tbl))
			m := late.FindStringSubmatch(line)
			if m == nil || atoi(m[1]) == 0 || atoi(m[1])*10 > atoi(m[2]) {
				t.Errorf("%s: want the other columns decoded for a few rows: %q", replaceTable(q, tbl), line)
			}
		}
	}
}

func replaceTable(q, tbl string) string {
	return regexp.MustCompile(`\{t\}`).ReplaceAllString(q, tbl)
}

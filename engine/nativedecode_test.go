package engine_test

import (
	"database/sql"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNativeDecodeMatchesRowPath checks the vector path's own Parquet
// reader (pushdown/native.go) against the row path over a table of several
// row groups with NULLs, one file with position deletes (which iceberg-go's
// reader must read, in the same scan) and one without (which the native
// reader reads), and filters that skip row groups by their statistics.
func TestNativeDecodeMatchesRowPath(t *testing.T) {
	_, conn, _ := openCounting(t)
	// The native decoder is what is tested: small files are otherwise
	// served decoded from memory (filecache_test.go).
	mustExec(t, conn, "SET icesql_file_cache = OFF")
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE nd (k INT, l BIGINT, d DECIMAL(12,2), s STRING, dt DATE, big DECIMAL(18,4)) "+
			"TBLPROPERTIES ('write.parquet.row-group-limit'='1000', 'write.delete.mode'='merge-on-read')",
		`INSERT INTO nd WITH RECURSIVE seq (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 4999)
		 SELECT n, CASE WHEN n % 7 = 0 THEN NULL ELSE n * 1000003 END,
		        CASE WHEN n % 11 = 0 THEN NULL ELSE (n % 200) - 100.25 END,
		        CASE WHEN n % 13 = 0 THEN NULL ELSE CONCAT('s', n % 5) END,
		        CASE WHEN n % 17 = 0 THEN NULL ELSE DATE_ADD('2020-01-01', INTERVAL n DAY) END,
		        CASE WHEN n % 3 = 0 THEN -99999999999999.9999 WHEN n % 3 = 1 THEN 99999999999999.9999 ELSE n / 8 END
		 FROM seq`,
		"DELETE FROM nd WHERE k % 10 = 3",
		`INSERT INTO nd WITH RECURSIVE seq (n) AS (SELECT 5000 UNION ALL SELECT n + 1 FROM seq WHERE n < 8999)
		 SELECT n, n, n % 97, CASE WHEN n % 2 = 0 THEN 's1' ELSE 'other' END, DATE_ADD('2030-01-01', INTERVAL n % 400 DAY), -n
		 FROM seq`,
	)
	queries := []string{
		"SELECT s, COUNT(*), COUNT(d), SUM(d), AVG(d), MIN(dt), MAX(dt) FROM nd GROUP BY s",
		"SELECT s, dt, COUNT(*), SUM(l) FROM nd WHERE k < 1500 GROUP BY s, dt",
		"SELECT COUNT(*), SUM(l), MIN(l), MAX(l), SUM(k * 2 - l) FROM nd",
		"SELECT COUNT(*), SUM(d), MIN(s), MAX(s) FROM nd WHERE k >= 2500 AND k < 2600",
		"SELECT COUNT(*), SUM(d) FROM nd WHERE d BETWEEN -5 AND 5.5 AND dt >= '2021-01-01'",
		"SELECT SUM(big), MIN(big), MAX(big), COUNT(big) FROM nd WHERE k > 7000 OR k < 100",
		"SELECT d, COUNT(*) FROM nd WHERE s IS NULL OR d IS NULL GROUP BY d",
		"SELECT COUNT(*) FROM nd WHERE k = 8123",
		"SELECT COUNT(*) FROM nd WHERE k > 100000",
	}
	for _, q := range queries {
		if !matchesRowPath(t, conn, q) {
			continue
		}
	}
	// The file with deletes goes through iceberg-go, the others are decoded
	// natively; a filter on k skips their row groups outside its range.
	explained := regexp.MustCompile(`native decoding: (\d+) tasks \(row groups: (\d+) read, (\d+) skipped by statistics\), (\d+) tasks through iceberg-go`)
	m := explained.FindStringSubmatch(nativeExplain(t, conn, "SELECT s, COUNT(*) FROM nd GROUP BY s"))
	if m == nil || atoi(m[1]) == 0 || atoi(m[4]) == 0 {
		t.Errorf("want tasks decoded natively and through iceberg-go: %v", m)
	}
	// Row groups outside k's range are skipped, by planning
	// (pushdown.PruneRowGroups) or by the native reader, and the few
	// that might match are decoded natively.
	const ranged = "SELECT COUNT(*), SUM(d) FROM nd WHERE k >= 6000 AND k < 6500"
	m = explained.FindStringSubmatch(nativeExplain(t, conn, ranged))
	if m == nil || atoi(m[1]) == 0 || atoi(m[2]) == 0 || atoi(m[2]) > 2 {
		t.Errorf("want at most 2 row groups decoded natively: %v", m)
	}
	read := regexp.MustCompile(`row groups: (\d+) read, (\d+) skipped of (\d+)`).FindStringSubmatch(explainText(t, conn, "ANALYZE "+ranged))
	if read == nil || atoi(read[1]) > 2 || atoi(read[2]) == 0 {
		t.Errorf("want the row groups outside k's range skipped: %v", read)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// nativeExplain is EXPLAIN ANALYZE's native decoding line for q.
func nativeExplain(t *testing.T, conn *sql.Conn, q string) string {
	t.Helper()
	for _, l := range strings.Split(explainText(t, conn, "ANALYZE "+q), "\n") {
		if strings.Contains(l, "native decoding:") {
			return l
		}
	}
	return ""
}

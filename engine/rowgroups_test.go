package engine_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDefaultRowGroupRows checks that a table without
// write.parquet.row-group-limit is written in row groups of 131,072 rows,
// so that a point lookup decodes one of them rather than a million rows.
func TestDefaultRowGroupRows(t *testing.T) {
	e, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db", "CREATE TABLE big (id BIGINT)")
	const rows = 300_000 // three row groups: 131,072 + 131,072 + 37,856
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	var recs []arrow.RecordBatch
	for start := 0; start < rows; start += 50_000 {
		for i := start; i < start+50_000; i++ {
			b.Append(int64(i))
		}
		arr := b.NewArray()
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len())))
		arr.Release()
	}
	rdr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if _, err := e.Import(context.Background(), "db", "big", rdr, nil); err != nil {
		t.Fatal(err)
	}
	text := explainText(t, conn, "ANALYZE SELECT id FROM big WHERE id = 200000")
	if !regexp.MustCompile(`row groups: 1 read, 2 skipped of 3`).MatchString(text) {
		t.Errorf("EXPLAIN ANALYZE does not show 1 of 3 row groups read:\n%s", text)
	}
	if got := queryString(t, conn, "SELECT COUNT(*) FROM big WHERE id >= 131000 AND id < 131100"); got != "100" {
		t.Errorf("rows across the first row-group boundary: %s, want 100", got)
	}
}

// TestRowGroupPruningMatchesFullScan runs filters whose row groups the
// statistics decide (row groups of four rows: NULL-only groups, groups with
// some NULLs, decimals, dates, strings, merge-on-read deletes) and checks
// each against the same filter that pushdown cannot translate, which reads
// every row.
func TestRowGroupPruningMatchesFullScan(t *testing.T) {
	_, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE rgd (id BIGINT, i INT, d DECIMAL(10,2), day DATE, s STRING) TBLPROPERTIES ('write.parquet.row-group-limit'='4', 'write.delete.mode'='merge-on-read')")
	var values []string
	day0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for id := range 200 {
		i, day, s := fmt.Sprint(id/8), "'"+day0.AddDate(0, 0, id).Format("2006-01-02")+"'", fmt.Sprintf("'k%03d'", id)
		if id%7 == 0 {
			i = "NULL"
		}
		if id >= 40 && id < 60 {
			day = "NULL"
		}
		if id%5 == 0 {
			s = "NULL"
		}
		values = append(values, fmt.Sprintf("(%d, %s, %.2f, %s, %s)", id, i, float64(id-100)*0.25, day, s))
	}
	mustExec(t, conn, "INSERT INTO rgd VALUES "+strings.Join(values, ", "), "DELETE FROM rgd WHERE id % 11 = 3")
	text := explainText(t, conn, "ANALYZE SELECT COUNT(*), SUM(id) FROM rgd WHERE id = 17")
	// 50 row groups of data, and the position delete file's one.
	if !regexp.MustCompile(`row groups: 2 read, 49 skipped of 51`).MatchString(text) {
		t.Errorf("EXPLAIN ANALYZE does not show 1 of 50 data row groups read:\n%s", text)
	}
	// Each type's statistics prune: one value lies in one or two row groups.
	skipped := regexp.MustCompile(`row groups: \d+ read, (\d+) skipped`)
	for _, where := range []string{"i = 5", "d = 2.50", "day = '2024-01-10'", "s = 'k017'", "s LIKE 'k01%'"} {
		// The vector path, and the row path (which iceberg-go alone could
		// not prune on a decimal or a column with NULLs).
		for _, q := range []string{"SELECT COUNT(*), SUM(id) FROM rgd WHERE ", "SELECT id, s, d FROM rgd WHERE "} {
			text := explainText(t, conn, "ANALYZE "+q+where)
			if m := skipped.FindStringSubmatch(text); m == nil || len(m[1]) < 2 {
				t.Errorf("%s skips fewer than 10 of 50 row groups:\n%s", q+where, text)
			}
		}
	}
	for _, where := range []string{
		"id = 17", "id = 14", "id < 10", "id >= 190", "id IN (3, 150, 999)", "id <> 17", "NOT (id <> 17)",
		"i = 5", "i > 20", "i IS NULL", "i IS NOT NULL", "NOT (i > 3)", "i IN (0, 24)",
		"d = 2.50", "d < -10", "d >= 12.00", "d BETWEEN -1 AND 1", "d IS NOT NULL",
		"day = '2024-01-10'", "day < '2024-01-05'", "day IS NULL", "day IS NOT NULL AND day > '2024-06-01'", "day = '2024-02-15'",
		"s = 'k017'", "s LIKE 'k01%'", "s > 'k190'", "s IS NULL", "s < 'k'", "s IN ('k001', 'k199')",
		"id = 17 OR s = 'k150'", "i IS NULL AND day IS NULL",
	} {
		agg := "SELECT CONCAT(COUNT(*), ' ', COALESCE(SUM(id), -1)) FROM rgd WHERE "
		got := queryString(t, conn, agg+where)
		want := queryString(t, conn, agg+"("+where+") IS TRUE")
		if got != want {
			t.Errorf("%s: count and sum %s, full scan %s", where, got, want)
		}
		gotIDs, err := ridList(conn, "SELECT id FROM rgd WHERE "+where+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		wantIDs, err := ridList(conn, "SELECT id FROM rgd WHERE ("+where+") IS TRUE ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		if gotIDs != wantIDs {
			t.Errorf("%s: rows %q, full scan %q", where, gotIDs, wantIDs)
		}
	}
}

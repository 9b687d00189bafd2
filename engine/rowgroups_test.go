package engine_test

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"

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
	text := explainAnalyze(t, conn, "SELECT id FROM big WHERE id = 200000")
	if !regexp.MustCompile(`row groups: 1 read, 2 skipped of 3`).MatchString(text) {
		t.Errorf("EXPLAIN ANALYZE does not show 1 of 3 row groups read:\n%s", text)
	}
	if got := queryString(t, conn, "SELECT COUNT(*) FROM big WHERE id >= 131000 AND id < 131100"); got != "100" {
		t.Errorf("rows across the first row-group boundary: %s, want 100", got)
	}
}

// explainAnalyze returns the lines of EXPLAIN ANALYZE q.
func explainAnalyze(t *testing.T, conn *sql.Conn, q string) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "EXPLAIN ANALYZE "+q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

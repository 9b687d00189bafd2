package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// The diff table holds every pushable type, with NULLs, NaNs, files where
// a column is all NULL or all NaN, and values clustered per file so that
// filters prune. Each filter's rows with pushdown must equal its rows
// without (the same WHERE clause wrapped in IS TRUE, which is not pushed).
const (
	diffFiles       = 16
	diffRowsPerFile = 40
)

func diffSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "rid", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 6, Name: "dec", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 7, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 8, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 9, Name: "dt", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 10, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 11, Name: "tz", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
}

func createDiffTable(t testing.TB, e *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	ident := table.Identifier{"db", "diff"}
	tbl, err := e.Catalog().CreateTable(ctx, ident, diffSchema())
	if err != nil {
		t.Fatal(err)
	}
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 2))
	var files []iceberg.DataFile
	for k := range diffFiles {
		rec := diffBatch(schema, rng, k)
		for f, err := range table.WriteRecords(ctx, tbl, schema, single(rec)) {
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	if _, err := storage.AppendFiles(ctx, e.Catalog(), ident, files, nil); err != nil {
		t.Fatal(err)
	}
}

func diffBatch(schema *arrow.Schema, rng *rand.Rand, k int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	day0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	null := func(col int) bool {
		switch {
		case k == 5: // every column but rid is NULL in file 5
			return true
		case k == 6 && col%2 == 0:
			return true
		}
		return rng.IntN(8) == 0
	}
	for r := range diffRowsPerFile {
		b.Field(0).(*array.Int64Builder).Append(int64(k*diffRowsPerFile + r))
		v := k*10 + rng.IntN(12) // overlaps the next file a little
		appendOr(b.Field(1), null(1), func() { b.Field(1).(*array.Int32Builder).Append(int32(v - 20)) })
		appendOr(b.Field(2), null(2), func() { b.Field(2).(*array.Int64Builder).Append(int64(v)*1_000_000_007 - 3) })
		fv := float64(v)/4 - 5 // quarters: exact in float32
		switch {
		case k == 7, k == 8 && r%3 == 0:
			fv = math.NaN()
		case k == 9 && r == 0:
			fv = math.Inf(1)
		}
		appendOr(b.Field(3), null(3), func() { b.Field(3).(*array.Float32Builder).Append(float32(fv)) })
		appendOr(b.Field(4), null(4), func() { b.Field(4).(*array.Float64Builder).Append(fv) })
		appendOr(b.Field(5), null(5), func() {
			b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromBigInt(big.NewInt(int64(v)*125 - 1000)))
		})
		appendOr(b.Field(6), null(6), func() {
			s := fmt.Sprintf("k%02d-%c", v/10, 'a'+rune(v%10))
			if v%13 == 0 {
				s = ""
			} else if v%17 == 0 {
				s = "é" + s
			}
			b.Field(6).(*array.StringBuilder).Append(s)
		})
		appendOr(b.Field(7), null(7), func() { b.Field(7).(*array.BooleanBuilder).Append(v%3 == 0) })
		appendOr(b.Field(8), null(8), func() {
			b.Field(8).(*array.Date32Builder).Append(arrow.Date32FromTime(day0.AddDate(0, 0, v)))
		})
		ts := day0.Add(time.Duration(v)*time.Hour + time.Duration(rng.IntN(3))*time.Microsecond)
		appendOr(b.Field(9), null(9), func() { b.Field(9).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro())) })
		appendOr(b.Field(10), null(10), func() { b.Field(10).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro())) })
	}
	return b.NewRecordBatch()
}

func appendOr(b array.Builder, null bool, appendValue func()) {
	if null {
		b.AppendNull()
		return
	}
	appendValue()
}

// diffPredicates are the filters of TestPushdownMatchesFullScan: every
// operator on every type, at and around the values the files hold.
func diffPredicates() []string {
	var out []string
	ops := []string{"=", "<>", "<", "<=", ">", ">=", "<=>"}
	lits := map[string][]string{
		"i":   {"-21", "-20", "0", "15", "119", "131", "132", "'15'", "15.0", "15.5", "2e1", "NULL"},
		"l":   {"-3", "14999999902", "15000000102", "131000000914", "15000000102.0", "15000000102.5", "'-3'"},
		"f":   {"-5", "0", "0.25", "0.1", "1.5", "27.75", "28", "1e30", "'1.5'"},
		"d":   {"-5", "0", "0.25", "0.1", "1.5", "27.75", "28", "1e308"},
		"dec": {"-10", "0", "0.25", "1.25", "1.255", "5", "153.75", "154", "1.2500", "2e0"},
		"s":   {"''", "'k'", "'k01'", "'k01-a'", "'k01-b'", "'k15-z'", "'k16'", "'é'", "'ék05-b'", "'K01-a'", "'k01-a '", "5"},
		"b":   {"true", "false", "1", "0", "2", "'1'"},
		"dt":  {"'2024-01-01'", "'2024-01-20'", "'2024-01-20 00:00:00'", "'2024-01-20 12:00:00'", "'2024-06-01'", "'2024-1-20'", "20240120"},
		"ts":  {"'2024-01-01 00:00:00'", "'2024-01-02 02:00:00'", "'2024-01-02 02:00:00.000001'", "'2024-01-02 02:00:00.000002'", "'2024-01-02'", "'2024-01-07 11:00:00'", "'2025-01-01'"},
		"tz":  {"'2024-01-02 02:00:00'", "'2024-01-02 02:00:00.000001'", "'2024-01-07 11:00:00'"},
	}
	for _, col := range []string{"i", "l", "f", "d", "dec", "s", "b", "dt", "ts", "tz"} {
		for _, lit := range lits[col] {
			for _, op := range ops {
				out = append(out, fmt.Sprintf("%s %s %s", col, op, lit))
			}
			out = append(out, fmt.Sprintf("%s > %s OR %s IS NULL", col, lit, col))
			out = append(out, fmt.Sprintf("NOT (%s >= %s)", col, lit))
			out = append(out, fmt.Sprintf("NOT (%s <> %s)", col, lit))
		}
		ls := lits[col]
		out = append(out,
			fmt.Sprintf("%s IS NULL", col),
			fmt.Sprintf("%s IS NOT NULL", col),
			fmt.Sprintf("NOT (%s IS NULL)", col),
			fmt.Sprintf("%s IN (%s)", col, strings.Join(ls[:3], ", ")),
			fmt.Sprintf("%s IN (%s, NULL)", col, ls[1]),
			fmt.Sprintf("%s NOT IN (%s)", col, strings.Join(ls[:3], ", ")),
			fmt.Sprintf("%s NOT IN (%s, NULL)", col, ls[1]),
			fmt.Sprintf("%s BETWEEN %s AND %s", col, ls[1], ls[len(ls)/2]),
			fmt.Sprintf("%s NOT BETWEEN %s AND %s", col, ls[1], ls[len(ls)/2]),
		)
	}
	out = append(out,
		"s LIKE 'k01%'", "s LIKE 'k01-_'", "s LIKE 'k0%-b'", "s LIKE 'k01-a'", "s LIKE ''", "s LIKE '%a'",
		"s LIKE 'é%'", "s LIKE 'k1\\_%'", "s LIKE 'k1|%%' ESCAPE '|'", "s NOT LIKE 'k01%'", "NOT (s LIKE 'k01%')",
		"i > 10 AND l < 60000000000", "i > 100 OR d < 0", "NOT (i > 10 AND d < 20)", "NOT (i > 10 OR s = 'k05-a')",
		"(i BETWEEN 0 AND 30 OR dt > '2024-05-01') AND NOT (b = true)", "i + 0 > 50 AND i < 80",
		"f > 27 OR f IS NULL", "d >= 27.75 AND d <= 28", "NOT (d < 30)", "d <> d",
	)
	return out
}

// TestPushdownMatchesFullScan compares, filter by filter, the rows of a
// pushed-down scan with a scan that pushes nothing.
func TestPushdownMatchesFullScan(t *testing.T) {
	t.Parallel()
	e, conn, opens := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	createDiffTable(t, e)

	// The reference really scans everything.
	if got := plannedFiles(t, conn, "SELECT rid FROM diff WHERE (i > 100) IS TRUE"); len(got) != 1 || got[0] != diffFiles {
		t.Fatalf("the reference query planned %v files, want all %d", got, diffFiles)
	}
	// The reference queries open every file, so what the pushed ones
	// opened is the rest.
	preds := diffPredicates()
	opens.Store(0)
	var refOpens int64
	for _, p := range preds {
		got, gotErr := ridList(conn, "SELECT rid FROM diff WHERE "+p+" ORDER BY rid")
		want, wantErr := ridList(conn, "SELECT rid FROM diff WHERE ("+p+") IS TRUE ORDER BY rid")
		if wantErr == nil {
			refOpens += diffFiles
		}
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, without pushdown %v", p, gotErr, wantErr)
			continue
		}
		if got != want {
			t.Errorf("%s:\n  pushed    %s\n  full scan %s", p, got, want)
		}
	}
	pushedOpens := opens.Load() - refOpens
	full := int64(len(preds) * diffFiles)
	// Pruning happened, so the comparison tested something.
	if pushedOpens > full*3/4 {
		t.Errorf("the pushed filters read %d files, full scans %d: little pruning", pushedOpens, full)
	}
	t.Logf("%d filters: pushed down they read %d files, full scans %d", len(preds), pushedOpens, full)
}

func ridList(conn *sql.Conn, q string) (string, error) {
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d ", rid)
	}
	return b.String(), rows.Err()
}

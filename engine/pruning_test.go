package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// The events table: days × filesPerDay data files of rowsPerFile rows,
// partitioned by day(ts). Row r of file j of day d has
// id = (d*filesPerDay + j)*rowsPerFile + r, ts = day d + j*10 min + r s,
// grp = j: id and ts are sorted across files (tight bounds), grp repeats
// in every day.
const (
	eventDays        = 10
	eventFilesPerDay = 100
	eventRowsPerFile = 10
)

var eventDay0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func eventSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 3, Name: "grp", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 4, Name: "region", Type: iceberg.PrimitiveTypes.String},
	)
}

// createEvents makes db.events with iceberg-go and writes its files, one
// commit (so one manifest) per day.
func createEvents(t testing.TB, e *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	ident := table.Identifier{"db", "events"}
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl, err := e.Catalog().CreateTable(ctx, ident, eventSchema(), catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	files := make([][]iceberg.DataFile, eventDays)
	errs := make([]error, eventDays)
	var wg sync.WaitGroup
	for d := range eventDays {
		wg.Go(func() {
			for j := range eventFilesPerDay {
				rec := eventBatch(schema, d, j)
				for f, err := range table.WriteRecords(ctx, tbl, schema, single(rec)) {
					if err != nil {
						errs[d] = err
						return
					}
					files[d] = append(files[d], f)
				}
			}
		})
	}
	wg.Wait()
	for d := range eventDays {
		if errs[d] != nil {
			t.Fatal(errs[d])
		}
		if _, err := storage.AppendFiles(ctx, e.Catalog(), ident, files[d], nil); err != nil {
			t.Fatal(err)
		}
	}
}

func single(rec arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
}

func eventBatch(schema *arrow.Schema, d, j int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r := range eventRowsPerFile {
		ts := eventDay0.AddDate(0, 0, d).Add(time.Duration(j)*10*time.Minute + time.Duration(r)*time.Second)
		b.Field(0).(*array.Int64Builder).Append(int64((d*eventFilesPerDay+j)*eventRowsPerFile + r))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		b.Field(2).(*array.Int32Builder).Append(int32(j))
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("r%d", j%7))
	}
	return b.NewRecordBatch()
}

// openCounting opens an engine whose store counts Parquet files opened.
func openCounting(t testing.TB) (*engine.Engine, *sql.Conn, *atomic.Int64) {
	t.Helper()
	opens := &atomic.Int64{}
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir(), Store: countingStore{opens: opens}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	db := sql.OpenDB(e.Connector())
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return e, conn, opens
}

func explainLines(t testing.TB, conn *sql.Conn, q string) []string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var plannedRE = regexp.MustCompile(`data files: (\d+) planned, (\d+) skipped of (\d+)`)

// plannedFiles returns the data files planned by each Iceberg scan of q.
func plannedFiles(t testing.TB, conn *sql.Conn, q string) []int {
	t.Helper()
	var out []int
	for _, l := range explainLines(t, conn, q) {
		if m := plannedRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	return out
}

// TestPruning checks which of the events table's 1,000 files each filter
// plans, and that the rows come back right.
func TestPruning(t *testing.T) {
	e, conn, opens := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	createEvents(t, e)

	tests := []struct {
		where string
		files int // planned
		rows  int
	}{
		{"", 1000, 10000},
		// A point query on the partition source: the day prunes manifests
		// and partitions, the ts bounds the other files of the day.
		{"ts = '2024-01-04 01:30:05'", 1, 1},
		// One day of a days() partition.
		{"ts >= '2024-01-04' AND ts < '2024-01-05'", 100, 1000},
		{"ts BETWEEN '2024-01-04 00:00:00' AND '2024-01-04 23:59:59.999999'", 100, 1000},
		{"NOT (ts < '2024-01-10')", 100, 1000},
		// A sorted column that is not a partition source.
		{"id = 3095", 1, 1},
		{"id > 9989", 1, 10},
		{"id BETWEEN 15 AND 35", 3, 21},
		{"id IN (5, 3095, 9999)", 3, 3},
		{"id < 0", 0, 0},
		// grp repeats in every day: the files whose bounds hold 7.
		{"grp = 7", 10, 100},
		{"id = 3095 OR ts >= '2024-01-10'", 101, 1001},
		// Untranslatable conjuncts stay in SQL, the rest still prunes.
		{"id = 3095 AND id + 0 = 3095", 1, 1},
		{"id + 0 = 3095", 1000, 1},
		{"region = 'r3' AND ts < '2024-01-02'", 14, 140},
	}
	for _, tc := range tests {
		q := "SELECT * FROM events"
		count := "SELECT COUNT(*) FROM events"
		if tc.where != "" {
			q += " WHERE " + tc.where
			count += " WHERE " + tc.where
		}
		got := plannedFiles(t, conn, q)
		if len(got) != 1 || got[0] != tc.files {
			t.Errorf("%s: planned %v files, want %d", tc.where, got, tc.files)
		}
		opens.Store(0)
		if n := queryString(t, conn, count); n != strconv.Itoa(tc.rows) {
			t.Errorf("%s: %s rows, want %d", tc.where, n, tc.rows)
		}
		if tc.where != "" && opens.Load() > int64(tc.files) {
			t.Errorf("%s: opened %d files, planned %d", tc.where, opens.Load(), tc.files)
		}
	}

	lines := strings.Join(explainLines(t, conn, "SELECT * FROM events WHERE ts >= '2024-01-04' AND ts < '2024-01-05'"), "\n")
	for _, want := range []string{
		"pushed filter: (ts >= '2024-01-04 00:00:00.000000' AND ts < '2024-01-05 00:00:00.000000')",
		"manifests: 1 scanned, 9 skipped of 10",
		"data files: 100 planned, 900 skipped of 1000",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, lines)
		}
	}
}

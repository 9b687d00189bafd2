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
	e := openEngine(t, engine.Config{Warehouse: t.TempDir(), Store: countingStore{opens: opens}})
	conn := openConnOn(t, e)
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

	// COUNT(*) reads the snapshot summary, no data file.
	opens.Store(0)
	if n := queryString(t, conn, "SELECT COUNT(*) FROM events"); n != "10000" {
		t.Errorf("COUNT(*) = %s", n)
	}
	if n := opens.Load(); n != 0 {
		t.Errorf("COUNT(*) opened %d data files", n)
	}

	// So do MIN and MAX of columns whose bounds are exact.
	opens.Store(0)
	var minID, maxID, minTS, maxTS, n string
	if err := conn.QueryRowContext(context.Background(), "SELECT MIN(id), MAX(id), MIN(ts), MAX(ts), COUNT(*) FROM events").Scan(&minID, &maxID, &minTS, &maxTS, &n); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join([]string{minID, maxID, minTS, maxTS, n}, " "); got != "0 9999 2024-01-01 00:00:00.000000 2024-01-10 16:30:09.000000 10000" {
		t.Errorf("MIN/MAX/COUNT = %s", got)
	}
	if n := opens.Load(); n != 0 {
		t.Errorf("MIN/MAX opened %d data files", n)
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

// TestPruningTransforms writes a table partitioned by identity, day,
// bucket and truncate through icesql's INSERT, and checks that filters on
// the source columns prune partitions (iceberg-go projects them through the
// transforms) and return the rows a full scan returns.
func TestPruningTransforms(t *testing.T) {
	e, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db")
	ctx := context.Background()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 4, Name: "name", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1002, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}},
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1003, Name: "name_trunc", Transform: iceberg.TruncateTransform{Width: 2}},
	)
	if _, err := e.Catalog().CreateTable(ctx, table.Identifier{"db", "p"}, sc, catalog.WithPartitionSpec(&spec)); err != nil {
		t.Fatal(err)
	}
	var values []string
	for i := range 64 {
		values = append(values, fmt.Sprintf("(%d, '%s', '2024-01-%02d %02d:00:00', '%s')",
			i, []string{"eu", "us", "ap"}[i%3], 1+i%4, i%24, []string{"abc", "abd", "xyz", "xa"}[i%4]))
	}
	mustExec(t, conn, "INSERT INTO p VALUES "+strings.Join(values[:32], ", "), "INSERT INTO p VALUES "+strings.Join(values[32:], ", "))
	all := plannedFiles(t, conn, "SELECT * FROM p")
	if len(all) != 1 || all[0] < 20 {
		t.Fatalf("the partitioned table has %v files; the test needs many partitions", all)
	}
	for _, where := range []string{
		"region = 'eu'",
		"region IN ('eu', 'ap')",
		"ts >= '2024-01-02' AND ts < '2024-01-03'",
		"ts > '2024-01-03 23:00:00'",
		"id = 17",
		"id IN (1, 2)",
		"name LIKE 'ab%'",
		"name >= 'x'",
		"name = 'xa' AND region <> 'us'",
	} {
		planned := plannedFiles(t, conn, "SELECT * FROM p WHERE "+where)
		if len(planned) != 1 || planned[0] >= all[0] {
			t.Errorf("%s planned %v of %d files", where, planned, all[0])
		}
		got, err := ridList(conn, "SELECT id FROM p WHERE "+where+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		want, err := ridList(conn, "SELECT id FROM p WHERE ("+where+") IS TRUE ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		if got != want || got == "" {
			t.Errorf("%s: %q, full scan %q", where, got, want)
		}
	}
}

// TestRowGroupPruning checks that a filter skips the Parquet row groups its
// column statistics rule out, and that EXPLAIN ANALYZE says so.
func TestRowGroupPruning(t *testing.T) {
	_, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE rg (id BIGINT, pad STRING) TBLPROPERTIES ('write.parquet.row-group-limit'='1000')",
		"INSERT INTO rg WITH RECURSIVE seq (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 9999) SELECT n, MD5(n) FROM seq",
	)
	rows, err := conn.QueryContext(context.Background(), "EXPLAIN ANALYZE SELECT * FROM rg WHERE id = 4321")
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, l)
	}
	rows.Close()
	text := strings.Join(plan, "\n")
	m := regexp.MustCompile(`bytes planned: (\d+)[\s\S]*row groups: 1 read, 9 skipped of 10[\s\S]*bytes read: (\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("EXPLAIN ANALYZE does not show 1 of 10 row groups read:\n%s", text)
	}
	planned, _ := strconv.Atoi(m[1])
	read, _ := strconv.Atoi(m[2])
	if read*3 > planned {
		t.Errorf("read %d of %d bytes for one row group of ten", read, planned)
	}
	if n := queryString(t, conn, "SELECT pad FROM rg WHERE id = 4321"); n != queryString(t, conn, "SELECT MD5(4321)") {
		t.Errorf("row 4321 reads %s", n)
	}
}

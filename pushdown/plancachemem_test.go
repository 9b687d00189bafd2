package pushdown

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
)

// statsTable makes a table of cols columns (BIGINT, STRING and DOUBLE in
// turn) holding files small data files, each with the statistics
// iceberg-go's writer records for every column: sizes, value and null
// counts, NaN counts for doubles, bounds (strings truncated to 16 bytes as
// the default metrics mode does) and one split offset.
func statsTable(t testing.TB, cols, files int) *table.Table {
	t.Helper()
	ctx := context.Background()
	cat, err := hadoop.NewCatalog("test", "file://"+filepath.ToSlash(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	fields := make([]iceberg.NestedField, cols)
	for i := range fields {
		typ := []iceberg.Type{iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Float64}[i%3]
		fields[i] = iceberg.NestedField{ID: i + 1, Name: fmt.Sprintf("c%d", i), Type: typ}
	}
	ident := table.Identifier{"db", fmt.Sprintf("w%d", cols)}
	tbl, err := cat.CreateTable(ctx, ident, iceberg.NewSchema(0, fields...),
		catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	dfs := make([]iceberg.DataFile, files)
	for f := range dfs {
		dfs[f] = statsFile(t, tbl, cols, f)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, dfs, nil, table.WithoutDuplicateCheck()); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func statsFile(t testing.TB, tbl *table.Table, cols, f int) iceberg.DataFile {
	sizes, values, nulls, nans := map[int]int64{}, map[int]int64{}, map[int]int64{}, map[int]int64{}
	lower, upper := map[int][]byte{}, map[int][]byte{}
	for i := range cols {
		id := i + 1
		sizes[id], values[id], nulls[id] = 1000+int64(i), 100, int64(f%7)
		switch i % 3 {
		case 0:
			lower[id] = binary.LittleEndian.AppendUint64(nil, uint64(f*100))
			upper[id] = binary.LittleEndian.AppendUint64(nil, uint64(f*100+99))
		case 1:
			lower[id] = fmt.Appendf(nil, "customer-%07d", f)
			upper[id] = fmt.Appendf(nil, "customer-%07d", f+1)
		case 2:
			nans[id] = 0
			lower[id] = binary.LittleEndian.AppendUint64(nil, math.Float64bits(float64(f)))
			upper[id] = binary.LittleEndian.AppendUint64(nil, math.Float64bits(float64(f)+0.99))
		}
	}
	b, err := iceberg.NewDataFileBuilder(tbl.Spec(), iceberg.EntryContentData,
		fmt.Sprintf("%s/data/%08d-0-0f6c1c5e-7d4e-4b6c-9d9e-2f1f2b3c4d5e.parquet", tbl.Location(), f),
		iceberg.ParquetFile, nil, nil, nil, 100, 4096+int64(cols)*1000)
	if err != nil {
		t.Fatal(err)
	}
	return b.ColumnSizes(sizes).ValueCounts(values).NullValueCounts(nulls).NaNValueCounts(nans).
		LowerBoundValues(lower).UpperBoundValues(upper).SplitOffsets([]int64{4}).Build()
}

// retainedPerTask plans tbl under filter and returns the heap bytes the
// planned tasks alone hold, per task: the heap with the tasks alive less the
// heap once they are dropped, as the cache dropping them would free. With
// readStats, every task's statistics are read first, as the engine's
// MIN/MAX-from-metadata does on a kept plan, which builds iceberg-go's
// lazy maps.
func retainedPerTask(t testing.TB, tbl *table.Table, filter iceberg.BooleanExpression, readStats bool) (perTask float64, tasks int) {
	t.Helper()
	opts := []table.ScanOption{}
	if filter != nil {
		opts = append(opts, table.WithRowFilter(filter))
	}
	planned, err := tbl.Scan(opts...).PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if readStats {
		for _, task := range planned {
			_ = task.File.LowerBoundValues()
		}
	}
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	tasks = len(planned)
	runtime.KeepAlive(planned)
	planned = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	return float64(int64(with.HeapAlloc)-int64(without.HeapAlloc)) / float64(tasks), tasks
}

// TestPlanCacheEstimateCoversTasks measures what planned tasks hold on the
// heap for narrow and wide tables and checks that the cache's estimate
// (estimateTaskBytes) is not below it, so the cache's byte bound is a bound,
// nor more than 1.5 times it, so the bound does not waste the room it gives.
// The figures are logged (go test -v -run TestPlanCacheEstimate).
func TestPlanCacheEstimateCoversTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tables of 2000 files; skipped in -short")
	}
	const files = 2000
	for _, cols := range []int{1, 3, 20, 50} {
		tbl := statsTable(t, cols, files)
		c0 := iceberg.GreaterThanEqual(iceberg.Reference("c0"), int64(0))
		for _, tc := range []struct {
			name      string
			filter    iceberg.BooleanExpression
			readStats bool
		}{
			{"no filter", nil, false},
			{"filter", c0, false},
			{"filter, stats read", c0, true},
		} {
			got, n := retainedPerTask(t, tbl, tc.filter, tc.readStats)
			if n != files {
				t.Fatalf("%d columns, %s: planned %d tasks, want %d", cols, tc.name, n, files)
			}
			planned, err := tbl.Scan().PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			est := float64(estimateTaskBytes(planned)) / float64(len(planned))
			t.Logf("%2d columns, %-18s: %6.0f bytes/task retained, estimate %6.0f", cols, tc.name, got, est)
			if est < got || est > 1.5*got {
				t.Errorf("%d columns, %s: estimate %.0f bytes/task, measured %.0f: want the estimate within [1, 1.5] times the measure",
					cols, tc.name, est, got)
			}
		}
	}
}

// estimateTaskBytes is estimatePlanBytes of a plan of tasks without the
// plan's own overhead, for the measure to compare with.
func estimateTaskBytes(tasks []table.FileScanTask) int64 {
	return estimatePlanBytes(&cachedPlan{tasks: tasks}) - planBytes
}

package storage

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestAppendsMergeManifestsAsJava checks that single-file appends keep the
// manifest count bounded as Java's MergeAppend does (at most
// min-count-to-merge - 1 per bin: a bin reaching the count is merged), that nothing is lost or duplicated in the
// merge, that row ids stay unique on format 3, and that a table setting
// commit.manifest-merge.enabled=false keeps one manifest per append.
func TestAppendsMergeManifestsAsJava(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props iceberg.Properties
		max   int // most manifests after any commit; 0: one per commit
	}{
		{"v2 default", iceberg.Properties{"format-version": "2"}, 99},
		{"v3 default", iceberg.Properties{"format-version": "3"}, 99},
		{"v2 min count 7", iceberg.Properties{table.ManifestMinMergeCountKey: "7"}, 6},
		{"v2 merge off", iceberg.Properties{table.ManifestMergeEnabledKey: "false"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			w := openTestWarehouse(t, t.TempDir())
			mustCreateNamespace(t, w, "db")
			ident := table.Identifier{"db", "t"}
			tbl, err := w.CreateTable(ctx, ident, testSchema, catalog.WithProperties(tc.props))
			if err != nil {
				t.Fatal(err)
			}
			const commits = 230
			most := 0
			for i := range commits {
				tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, int64(i)), nil)
				if err != nil {
					t.Fatal(err)
				}
				most = max(most, manifestCount(t, tbl))
			}
			want := tc.max
			if want == 0 {
				want = commits
			}
			if most != want {
				t.Errorf("at most %d manifests over %d appends, want %d", most, commits, want)
			}
			if got := tbl.Properties()[table.ManifestMergeEnabledKey]; got != tc.props[table.ManifestMergeEnabledKey] {
				t.Errorf("the append changed %s to %q", table.ManifestMergeEnabledKey, got)
			}
			checkIDs(t, tbl, commits)
			if tbl.Metadata().Version() >= 3 {
				checkRowIDs(t, tbl)
			}
		})
	}
}

func manifestCount(t *testing.T, tbl *table.Table) int {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// checkIDs reads the table and checks it holds ids 0..n-1 once each.
func checkIDs(t *testing.T, tbl *table.Table, n int) {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var ids []int64
	rdr := array.NewTableReader(at, 0)
	defer rdr.Release()
	for rdr.Next() {
		ids = append(ids, rdr.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	slices.Sort(ids)
	if len(ids) != n {
		t.Fatalf("%d rows, want %d", len(ids), n)
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("row %d has id %d: a file was lost or duplicated", i, id)
		}
	}
	if total, _ := strconv.Atoi(tbl.CurrentSnapshot().Summary.Properties["total-records"]); total != n {
		t.Errorf("total-records = %d, want %d", total, n)
	}
}

// checkRowIDs checks that the data files' row-id ranges do not overlap and
// lie below the table's next-row-id.
func checkRowIDs(t *testing.T, tbl *table.Table) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ first, end int64 }
	var spans []span
	for _, task := range tasks {
		first := task.File.FirstRowID()
		if first == nil {
			t.Fatalf("%s has no first_row_id", task.File.FilePath())
		}
		spans = append(spans, span{*first, *first + task.File.Count()})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.first - b.first) })
	for i := 1; i < len(spans); i++ {
		if spans[i].first < spans[i-1].end {
			t.Fatalf("row ids overlap: %v and %v", spans[i-1], spans[i])
		}
	}
	if last := spans[len(spans)-1]; last.end > tbl.Metadata().NextRowID() {
		t.Errorf("row ids up to %d, next-row-id %d", last.end, tbl.Metadata().NextRowID())
	}
}

package pushdown

import (
	"context"
	"errors"
	"io"
	"iter"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
)

const splitRows = 3000 // in row groups of 100 rows: one file of 30 row groups

func splitSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
	)
}

// splitTable writes one data file of splitRows rows (ids 0..splitRows-1 in
// order) into a new table of the given format version whose deletes are
// merge-on-read.
func splitTable(t *testing.T, version string) (*hadoop.Catalog, table.Identifier) {
	t.Helper()
	ctx := context.Background()
	cat, err := hadoop.NewCatalog("test", "file://"+filepath.ToSlash(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"db", "t" + version}
	tbl, err := cat.CreateTable(ctx, ident, splitSchema(), catalog.WithProperties(iceberg.Properties{
		"format-version":              version,
		"write.delete.mode":           "merge-on-read",
		table.ParquetRowGroupLimitKey: "100",
	}))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range int64(splitRows) {
		b.Field(0).(*array.Int64Builder).Append(i)
		if i%3 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%26)))
		}
	}
	rec := b.NewRecordBatch()
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	tx := tbl.NewTransaction()
	if err := tx.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return cat, ident
}

func ids(vals ...int64) iceberg.BooleanExpression {
	return iceberg.IsIn(iceberg.Reference("id"), vals...)
}

// readIDs reads the tasks' id column in order.
func readIDs(t *testing.T, scan *table.Scan, tasks []table.FileScanTask) []int64 {
	t.Helper()
	_, seq, err := scan.ReadTasks(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for rec, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		col := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		out = append(out, col.Int64Values()...)
		rec.Release()
	}
	return out
}

// TestSplitReadsSameRows checks that a file read as pieces of row groups
// gives the rows of the whole file, in order, under position deletes (v2),
// deletion vectors (v3) and equality deletes, with and without a row filter
// that prunes row groups.
func TestSplitReadsSameRows(t *testing.T) {
	ctx := context.Background()
	for _, version := range []string{"2", "3"} {
		cat, ident := splitTable(t, version)
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		// Merge-on-read deletes: position delete files on v2, a deletion
		// vector on v3; rows in the first, a middle and the last row group,
		// and a run across row-group boundaries.
		del := iceberg.NewOr(ids(0, 5, 99, 100, 1500, 2999),
			iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(1190)),
				iceberg.LessThan(iceberg.Reference("id"), int64(1420))))
		if tbl, err = tbl.Delete(ctx, del, nil); err != nil {
			t.Fatalf("v%s delete: %v", version, err)
		}
		if version == "2" {
			tbl = equalityDelete(t, cat, ident, 7, 250, 2500, 2998)
		}
		for _, filter := range []iceberg.BooleanExpression{nil,
			iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(1700)),
			iceberg.NewOr(iceberg.LessThan(iceberg.Reference("id"), int64(150)), iceberg.EqualTo(iceberg.Reference("s"), "c")),
		} {
			opts := []table.ScanOption{table.WithSelectedFields("id", "s")}
			if filter != nil {
				opts = append(opts, table.WithRowFilter(filter))
			}
			scan := tbl.Scan(opts...)
			tasks, err := scan.PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) != 1 {
				t.Fatalf("v%s: %d tasks planned, want the one file", version, len(tasks))
			}
			if n := len(tasks[0].DeleteFiles) + len(tasks[0].EqualityDeleteFiles) + len(tasks[0].DeletionVectorFiles); n == 0 {
				t.Fatalf("v%s: the task carries no delete files", version)
			}
			whole := readIDs(t, scan, tasks)
			for _, pieces := range []int{2, 7, 30} {
				split := splitTasks(tasks, pieces, 0)
				if len(split) < 2 {
					t.Fatalf("v%s filter %v: %d pieces asked, %d made", version, FilterString(filter), pieces, len(split))
				}
				got := readIDs(t, scan, split)
				if !slices.Equal(got, whole) {
					t.Errorf("v%s filter %v, %d pieces: %d rows, whole file %d rows\n got %v\nwant %v",
						version, FilterString(filter), len(split), len(got), len(whole), head(got), head(whole))
				}
			}
			if filter == nil && len(whole) != splitRows-236-boolInt(version == "2")*4 {
				t.Errorf("v%s: whole file read %d rows after deletes", version, len(whole))
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func head(v []int64) []int64 { return v[:min(len(v), 20)] }

// equalityDelete commits an equality delete file on id for the given ids.
func equalityDelete(t *testing.T, cat *hadoop.Catalog, ident table.Identifier, vals ...int64) *table.Table {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(vals)))
	col.Release()
	records := iter.Seq2[arrow.RecordBatch, error](func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
	tx := tbl.NewTransaction()
	if err := tx.CommitEqualityDeletes(ctx, []int{1}, records, nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestSplitTasks checks the cutting itself: ranges that cover the file
// without gap or overlap, and tasks left whole when they should be.
func TestSplitTasks(t *testing.T) {
	cat, ident := splitTable(t, "2")
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	size := tasks[0].File.FileSizeBytes()
	if n := len(tasks[0].File.SplitOffsets()); n != splitRows/100 {
		t.Fatalf("the file records %d row-group offsets, want %d", n, splitRows/100)
	}
	split := splitTasks(tasks, 4, 0)
	if len(split) < 3 || len(split) > 5 {
		t.Errorf("4 pieces asked of 30 row groups: %d made", len(split))
	}
	end := int64(0)
	for _, p := range split {
		if p.Start != end || p.Length <= 0 {
			t.Fatalf("piece [%d, +%d) after %d: gap or overlap", p.Start, p.Length, end)
		}
		end = p.Start + p.Length
	}
	if end != size {
		t.Errorf("pieces end at %d, file size %d", end, size)
	}
	if got := splitTasks(tasks, 4, size); len(got) != 1 {
		t.Errorf("a file below the minimum size was cut into %d pieces", len(got))
	}
	if got := splitTasks(split, 4, 0); len(got) != len(split) {
		t.Errorf("pieces were cut again: %d from %d", len(got), len(split))
	}
	var n int
	b, err := Open(context.Background(), TableRead(context.Background(), tbl), tasks)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for {
		rec, err := b.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n += int(rec.NumRows())
	}
	if n != splitRows {
		t.Errorf("Open read %d rows, want %d", n, splitRows)
	}
}

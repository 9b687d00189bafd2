package metatables

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

func TestSplitAndLookup(t *testing.T) {
	tests := []struct {
		name, base string
		kind       Kind
		ok         bool
	}{
		{"orders$snapshots", "orders", Snapshots, true},
		{"orders$ALL_DATA_FILES", "orders", AllDataFiles, true},
		{"a$b$history", "a$b", History, true},
		{"orders$nope", "", "", false},
		{"$files", "", "", false},
		{"orders", "", "", false},
	}
	for _, tt := range tests {
		base, kind, ok := Split(tt.name)
		if ok != tt.ok || (ok && (base != tt.base || kind != tt.kind)) {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", tt.name, base, kind, ok, tt.base, tt.kind, tt.ok)
		}
	}
	if len(kinds) != 16 {
		t.Errorf("%d metadata tables, want Spark's 16", len(kinds))
	}
}

// partitionedTable makes a table partitioned by identity(region) and
// appends to it three times: regions a, then a and b, then c.
func partitionedTable(t *testing.T) (*table.Table, []int64) {
	t.Helper()
	ctx := context.Background()
	root, err := storage.LocalLocation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wh, err := storage.OpenWarehouse(ctx, root, storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl, err := wh.CreateTable(ctx, table.Identifier{"db", "t"}, sc, catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	arrowSchema, err := table.SchemaToArrowSchema(sc, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, regions := range [][]string{{"a"}, {"a", "b"}, {"c"}} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
		for i, r := range regions {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(r)
		}
		rec := b.NewRecordBatch()
		b.Release()
		at := array.NewTableFromRecords(arrowSchema, []arrow.RecordBatch{rec})
		if tbl, err = tbl.AppendTable(ctx, at, 100, nil); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		at.Release()
		ids = append(ids, tbl.CurrentSnapshot().SnapshotID)
	}
	return tbl, ids
}

func countRows(t *testing.T, k Kind, tbl *table.Table, snapshot *int64) int {
	t.Helper()
	rr, err := Open(context.Background(), k, tbl, snapshot)
	if err != nil {
		t.Fatalf("Open(%s): %v", k, err)
	}
	defer rr.Release()
	n := 0
	for rr.Next() {
		n += int(rr.RecordBatch().NumRows())
	}
	if err := rr.Err(); err != nil {
		t.Fatalf("read %s: %v", k, err)
	}
	return n
}

func TestAtSnapshot(t *testing.T) {
	tbl, ids := partitionedTable(t)
	tests := []struct {
		kind     Kind
		snapshot *int64
		want     int
	}{
		{Files, nil, 4}, // a; a, b; c
		{Files, &ids[0], 1},
		{Files, &ids[1], 3},
		{DataFiles, &ids[1], 3},
		{Manifests, nil, 3},
		{Manifests, &ids[0], 1},
		{Entries, &ids[1], 3},
		{Partitions, nil, 3}, // a, b, c
		{Partitions, &ids[0], 1},
		{Partitions, &ids[1], 2},
		{Snapshots, nil, 3},
		{AllFiles, nil, 4},
		{AllManifests, nil, 6}, // 1 + 2 + 3
	}
	for _, tt := range tests {
		at := "current"
		if tt.snapshot != nil {
			at = "older"
		}
		if got := countRows(t, tt.kind, tbl, tt.snapshot); got != tt.want {
			t.Errorf("%s at the %s snapshot: %d rows, want %d", tt.kind, at, got, tt.want)
		}
	}
	// Reading an older snapshot leaves the table as it was.
	if got := tbl.CurrentSnapshot().SnapshotID; got != ids[2] {
		t.Errorf("current snapshot changed to %d", got)
	}
	if _, err := Open(context.Background(), History, tbl, &ids[0]); !errors.Is(err, ErrNotAtSnapshot) {
		t.Errorf("history at a snapshot: %v, want ErrNotAtSnapshot", err)
	}
	missing := int64(42)
	if _, err := Open(context.Background(), Files, tbl, &missing); err == nil {
		t.Error("files at a snapshot that does not exist: no error")
	}
}

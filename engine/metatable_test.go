package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
)

// TestPartitionedMetadataTables reads the metadata tables of a table
// partitioned by region, written by iceberg-go itself (icesql cannot create
// partitioned tables yet): partition values read as JSON objects.
func TestPartitionedMetadataTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cat, err := hadoop.NewCatalog("peer", "file://"+filepath.ToSlash(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl, err := cat.CreateTable(ctx, table.Identifier{"db", "p"}, sc, catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	arrowSchema, err := table.SchemaToArrowSchema(sc, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
	for i, r := range []string{"a", "a", "b"} {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(r)
	}
	rec := b.NewRecordBatch()
	at := array.NewTableFromRecords(arrowSchema, []arrow.RecordBatch{rec})
	if _, err := tbl.AppendTable(ctx, at, 100, nil); err != nil {
		t.Fatal(err)
	}

	conn := openDB(t, dir)
	rows, err := conn.QueryContext(ctx, "SELECT `partition`, spec_id, record_count, file_count FROM icesql.db.p.partitions ORDER BY `partition`['region']")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var part, spec, records, files string
		if err := rows.Scan(&part, &spec, &records, &files); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{part, spec, records, files}, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := `{"region": "a"} 0 2 1|{"region": "b"} 0 1 1`
	if strings.Join(got, "|") != want {
		t.Errorf("partitions:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if n := queryString(t, conn, "SELECT COUNT(*) FROM db.p.files WHERE `partition`->>'$.region' = 'a'"); n != "1" {
		t.Errorf("files in partition a: %s, want 1", n)
	}
	if s := queryString(t, conn, "SELECT MIN(partition_summaries->>'$[0].lower_bound') FROM db.p.manifests"); s != "a" {
		t.Errorf("manifest partition summary lower bound: %s, want a", s)
	}
}

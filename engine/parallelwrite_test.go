package engine_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/icesql/icesql/engine"
)

// TestParallelWriteKeepsRunsTogether loads rows in key order into an
// unpartitioned table with row groups of 100 rows, through Import and
// through INSERT ... SELECT, and checks that the rows all arrive, that
// the writers worked in parallel (several files), and that every row group
// still holds consecutive keys, so row-group statistics stay as tight as
// one writer makes them.
func TestParallelWriteKeepsRunsTogether(t *testing.T) {
	// writeFiles runs one writer per GOMAXPROCS; make sure there are two
	// even on a one-core machine, so the parallel path is always checked.
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	ctx := context.Background()
	dir := t.TempDir()
	e := openEngine(t, engine.Config{Warehouse: dir})
	conn := openConnOn(t, e)
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id BIGINT, s STRING) TBLPROPERTIES ('write.parquet.row-group-limit'='100')",
		"CREATE TABLE c (id BIGINT, s STRING) TBLPROPERTIES ('write.parquet.row-group-limit'='100')")

	const rows = 1050
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range int64(rows) {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append("x")
		if i%64 == 63 || i == rows-1 { // batches that do not line up with row groups
			recs = append(recs, b.NewRecordBatch())
		}
	}
	rdr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.Import(ctx, "db", "t", rdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != rows {
		t.Fatalf("Import reported %d rows, want %d", n, rows)
	}
	mustExec(t, conn, "INSERT INTO c SELECT * FROM t ORDER BY id")
	for _, name := range []string{"t", "c"} {
		if got := queryString(t, conn, "SELECT CONCAT(COUNT(*), ' ', SUM(id), ' ', COUNT(DISTINCT id)) FROM "+name); got != "1050 550725 1050" {
			t.Errorf("%s: count, sum, distinct ids %s, want 1050 550725 1050", name, got)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "db", name, "data", "*.parquet"))
		if len(files) < 2 {
			t.Errorf("%s: %d data files: the load ran on one writer", name, len(files))
		}
		groups := 0
		for _, f := range files {
			groups += checkConsecutive(t, f)
		}
		if groups != 11 {
			t.Errorf("%s: %d row groups, want 11 (1050 rows by 100)", name, groups)
		}
	}
}

// checkConsecutive fails the test unless every row group of the Parquet
// file holds consecutive ids (first column), and returns the row groups.
func checkConsecutive(t *testing.T, path string) int {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	for i := range rdr.NumRowGroups() {
		rg := rdr.MetaData().RowGroup(i)
		chunk, err := rg.ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		st, err := chunk.Statistics()
		if err != nil || st == nil {
			t.Fatalf("%s row group %d: no statistics (%v)", path, i, err)
		}
		s := st.(*metadata.Int64Statistics)
		if s.Max()-s.Min()+1 != rg.NumRows() {
			t.Errorf("%s row group %d: ids %d..%d in %d rows, not consecutive", path, i, s.Min(), s.Max(), rg.NumRows())
		}
	}
	return rdr.NumRowGroups()
}

// openConnOn opens one pinned session on an open engine.
func openConnOn(t testing.TB, e *engine.Engine) *sql.Conn {
	t.Helper()
	db := sql.OpenDB(e.Connector())
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

package engine_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// TestParquetIntegersArePlain checks that the data files icesql writes store
// Iceberg int and long as plain INT32 and INT64, as Java Iceberg does: Spark
// 3.5's vectorized reader fails on an INT32 column annotated INT(32) once the
// column was widened to long. Dates and decimals keep their annotations, the
// recorded file size is the file's size, and the rows read back.
func TestParquetIntegersArePlain(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE t (i INT, l BIGINT, sm SMALLINT, d DATE, amount DECIMAL(9,2), s STRING)",
		"INSERT INTO t VALUES (1, 10000000000, 7, '2024-01-02', 1.25, 'a'), (NULL, NULL, NULL, NULL, NULL, NULL)",
		"ALTER TABLE t ALTER COLUMN i TYPE BIGINT",
		"INSERT INTO t VALUES (5000000000, -1, -7, '1900-01-01', -0.01, 'b')",
	)
	rows, err := conn.QueryContext(context.Background(), "SELECT file_path, file_size_in_bytes FROM db.t.data_files")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	files := 0
	for rows.Next() {
		var path string
		var size int64
		if err := rows.Scan(&path, &size); err != nil {
			t.Fatal(err)
		}
		files++
		path = strings.TrimPrefix(path, "file://")
		if st, err := os.Stat(path); err != nil || st.Size() != size {
			t.Fatalf("%s: recorded size %d, on disk %v, %v", path, size, st, err)
		}
		rdr, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		sc := rdr.MetaData().Schema
		for i := range sc.NumColumns() {
			col := sc.Column(i)
			lt := col.LogicalType()
			switch col.PhysicalType() {
			case parquet.Types.Int32, parquet.Types.Int64:
				if _, isInt := lt.(*schema.IntLogicalType); isInt || (col.ConvertedType() != schema.ConvertedTypes.None && col.Name() != "d" && col.Name() != "amount") {
					t.Errorf("%s: column %s is %s annotated %s (%s); Java writes it plain", path, col.Name(), col.PhysicalType(), lt, col.ConvertedType())
				}
			}
			if col.Name() == "d" && !lt.Equals(schema.DateLogicalType{}) {
				t.Errorf("%s: column d annotated %s, want Date", path, lt)
			}
		}
		rdr.Close()
	}
	if err := rows.Err(); err != nil || files != 2 {
		t.Fatalf("%d data files, %v; want 2", files, err)
	}
	got := queryString(t, conn, "SELECT GROUP_CONCAT(CONCAT_WS(',', i, l, sm, amount, s) ORDER BY i) FROM t WHERE i IS NOT NULL")
	if want := "1,10000000000,7,1.25,a,5000000000,-1,-7,-0.01,b"; got != want {
		t.Errorf("rows read back: %s, want %s", got, want)
	}
}

package engine_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// BenchmarkVectorAggTopN measures a GROUP BY of 1,000,000 rows into
// 100,000 groups that keeps the 10 largest sums (vecexec/vecaggtopn.go), and the
// same GROUP BY returning every group, for scale; then under a HAVING, by
// an AVG and by a computed key, on the vector path and on the row path.
//
//	go test ./engine -run '^$' -bench VectorAggTopN -benchtime 5x
func BenchmarkVectorAggTopN(b *testing.B) {
	e, conn, _ := openCounting(b)
	ctx := context.Background()
	for _, s := range []string{"CREATE DATABASE db", "USE db"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	ident := table.Identifier{"db", "big"}
	tbl, err := e.Catalog().CreateTable(ctx, ident, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "k", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "x", Type: iceberg.DecimalTypeOf(15, 2)}))
	if err != nil {
		b.Fatal(err)
	}
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var batches []arrow.RecordBatch
	for range 10 {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for range 100_000 {
			rb.Field(0).(*array.Int64Builder).Append(int64(rng.IntN(100_000)))
			rb.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(rng.IntN(10_000_000))))
		}
		batches = append(batches, rb.NewRecordBatch())
		rb.Release()
	}
	var files []iceberg.DataFile
	for f, err := range table.WriteRecords(ctx, tbl, schema, allOf(batches)) {
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
	}
	if _, err := storage.AppendFiles(ctx, e.Catalog(), ident, files, nil); err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct{ name, sql string }{
		{"top10", "SELECT k, SUM(x) AS s FROM big GROUP BY k ORDER BY s DESC LIMIT 10"},
		{"all_groups", "SELECT k, SUM(x) AS s FROM big GROUP BY k"},
		{"having_top10", "SELECT k, SUM(x) AS s FROM big GROUP BY k HAVING COUNT(*) > 12 ORDER BY s DESC LIMIT 10"},
		{"avg_top10", "SELECT k, AVG(x) AS a FROM big GROUP BY k ORDER BY a DESC LIMIT 10"},
		{"computed_top10", "SELECT k, SUM(x) AS s FROM big GROUP BY k ORDER BY SUM(x) - 100 * COUNT(*) DESC LIMIT 10"},
		{"row_path", "SET icesql_vectorize = OFF"},
		{"having_top10_row_path", "SELECT k, SUM(x) AS s FROM big GROUP BY k HAVING COUNT(*) > 12 ORDER BY s DESC LIMIT 10"},
		{"avg_top10_row_path", "SELECT k, AVG(x) AS a FROM big GROUP BY k ORDER BY a DESC LIMIT 10"},
		{"computed_top10_row_path", "SELECT k, SUM(x) AS s FROM big GROUP BY k ORDER BY SUM(x) - 100 * COUNT(*) DESC LIMIT 10"},
	} {
		if strings.HasPrefix(q.sql, "SET ") {
			// The queries after it run on the row path, for comparison.
			if _, err := conn.ExecContext(ctx, q.sql); err != nil {
				b.Fatal(err)
			}
			continue
		}
		b.Run(q.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := resultRows(conn, q.sql); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

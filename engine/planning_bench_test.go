package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// BenchmarkPlanning measures scan planning (manifest list, manifests,
// partition and column-bound pruning) through EXPLAIN, which plans but
// reads no data file, on tables of 1,000 and 100,000 data files. The files
// are metadata only: planning never opens them.
//
//	go test ./engine -run '^$' -bench Planning -benchtime 20x
func BenchmarkPlanning(b *testing.B) {
	for _, files := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			e, conn, _ := openCounting(b)
			for _, s := range []string{"CREATE DATABASE db", "USE db"} {
				if _, err := conn.ExecContext(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
			createSyntheticEvents(b, e, files)
			for _, q := range []struct{ name, where string }{
				{"all", ""},
				{"point", " WHERE id = 12345"},
				{"one_day", " WHERE ts >= '2024-01-04' AND ts < '2024-01-05'"},
			} {
				b.Run(q.name, func(b *testing.B) {
					for b.Loop() {
						explainLines(b, conn, "SELECT * FROM events"+q.where)
					}
				})
			}
		})
	}
}

// createSyntheticEvents registers files data files laid out as the events
// table's (100 per day, sorted ids, one commit per 1,000 files) without
// writing them.
func createSyntheticEvents(b *testing.B, e *engine.Engine, files int) {
	b.Helper()
	ctx := context.Background()
	ident := table.Identifier{"db", "events"}
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl, err := e.Catalog().CreateTable(ctx, ident, eventSchema(), catalog.WithPartitionSpec(&spec))
	if err != nil {
		b.Fatal(err)
	}
	bound := func(l iceberg.Literal) []byte {
		v, err := l.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	var batch []iceberg.DataFile
	for k := range files {
		d, j := k/eventFilesPerDay, k%eventFilesPerDay
		first := eventDay0.AddDate(0, 0, d).Add(time.Duration(j) * 10 * time.Minute)
		last := first.Add(time.Duration(eventRowsPerFile-1) * time.Second)
		lo, hi := int64(k*eventRowsPerFile), int64(k*eventRowsPerFile+eventRowsPerFile-1)
		path := fmt.Sprintf("%s/data/ts_day=%d/f%06d.parquet", tbl.Location(), d, k)
		bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, path, iceberg.ParquetFile,
			map[int]any{1000: int32(eventDay0.AddDate(0, 0, d).Unix() / 86400)}, nil, nil, eventRowsPerFile, 4096)
		if err != nil {
			b.Fatal(err)
		}
		bld.ValueCounts(map[int]int64{1: eventRowsPerFile, 2: eventRowsPerFile, 3: eventRowsPerFile, 4: eventRowsPerFile}).
			NullValueCounts(map[int]int64{1: 0, 2: 0, 3: 0, 4: 0}).
			LowerBoundValues(map[int][]byte{
				1: bound(iceberg.NewLiteral(lo)), 2: bound(iceberg.NewLiteral(iceberg.Timestamp(first.UnixMicro()))),
				3: bound(iceberg.NewLiteral(int32(j))), 4: bound(iceberg.NewLiteral(fmt.Sprintf("r%d", j%7))),
			}).
			UpperBoundValues(map[int][]byte{
				1: bound(iceberg.NewLiteral(hi)), 2: bound(iceberg.NewLiteral(iceberg.Timestamp(last.UnixMicro()))),
				3: bound(iceberg.NewLiteral(int32(j))), 4: bound(iceberg.NewLiteral(fmt.Sprintf("r%d", j%7))),
			})
		batch = append(batch, bld.Build())
		if len(batch) == 1000 || k == files-1 {
			if _, err := storage.AppendFiles(ctx, e.Catalog(), ident, batch, nil); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

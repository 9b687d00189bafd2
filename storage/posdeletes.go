package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Field ids of the position-delete file columns (Iceberg spec, reserved).
const (
	posDeleteFilePathID = 2147483546
	posDeletePosID      = 2147483545
)

// WritePositionDeletes writes a format-version 2 position-delete file that
// deletes the given row positions of data file df, in df's partition, and
// returns its manifest entry. iceberg-go v0.7.0 exports no such writer (its
// own is internal to Transaction.Delete, which deletes by filter).
//
// The file names the one data file it applies to, in referenced_data_file
// and in equal lower and upper bounds of file_path, so that readers (and
// conflict checks) need not open it to know where it applies.
func WritePositionDeletes(ctx context.Context, tbl *table.Table, df iceberg.DataFile, positions []int64) (iceberg.DataFile, error) {
	positions = slices.Clone(positions)
	slices.Sort(positions)
	positions = slices.Compact(positions)

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: fieldID(posDeleteFilePathID)},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldID(posDeletePosID)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	paths := b.Field(0).(*array.StringBuilder)
	pos := b.Field(1).(*array.Int64Builder)
	for _, p := range positions {
		paths.Append(df.FilePath())
		pos.Append(p)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	w, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("position deletes for %s: %w", df.FilePath(), err)
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, fmt.Errorf("position deletes for %s: %w", df.FilePath(), err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("position deletes for %s: %w", df.FilePath(), err)
	}

	locs, err := table.LoadLocationProvider(tbl.Location(), tbl.Properties())
	if err != nil {
		return nil, err
	}
	path := locs.NewDataLocation(fmt.Sprintf("%s-deletes.parquet", uuid.NewString()))
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("position deletes for %s: the table's file IO cannot write", df.FilePath())
	}
	if err := wfs.WriteFile(path, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("write position deletes %s: %w", path, err)
	}

	spec := tbl.Metadata().PartitionSpecByID(int(df.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s: unknown partition spec %d", df.FilePath(), df.SpecID())
	}
	bld, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile,
		df.Partition(), nil, nil, int64(len(positions)), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	lo, hi := positions[0], positions[len(positions)-1]
	bld.LowerBoundValues(map[int][]byte{posDeleteFilePathID: []byte(df.FilePath()), posDeletePosID: le64(lo)}).
		UpperBoundValues(map[int][]byte{posDeleteFilePathID: []byte(df.FilePath()), posDeletePosID: le64(hi)}).
		ValueCounts(map[int]int64{posDeleteFilePathID: int64(len(positions)), posDeletePosID: int64(len(positions))}).
		NullValueCounts(map[int]int64{posDeleteFilePathID: 0, posDeletePosID: 0}).
		ReferencedDataFile(df.FilePath())
	return bld.Build(), nil
}

func fieldID(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{table.ArrowParquetFieldIDKey}, []string{strconv.Itoa(id)})
}

func le64(v int64) []byte {
	out := make([]byte, 8)
	binary.LittleEndian.PutUint64(out, uint64(v))
	return out
}

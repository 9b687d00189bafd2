package storage

import (
	"context"
	"encoding/binary"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
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
	rows := make([]PositionDelete, len(positions))
	for i, p := range positions {
		rows[i] = PositionDelete{Path: df.FilePath(), Pos: p}
	}
	return WritePositionDeleteRows(ctx, tbl, df.SpecID(), df.Partition(), rows)
}

func fieldID(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{table.ArrowParquetFieldIDKey}, []string{strconv.Itoa(id)})
}

func le64(v int64) []byte {
	out := make([]byte, 8)
	binary.LittleEndian.PutUint64(out, uint64(v))
	return out
}

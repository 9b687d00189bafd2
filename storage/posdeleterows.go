package storage

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// PositionDelete is one row of a position-delete file: row Pos of the data
// file at Path is deleted.
type PositionDelete struct {
	Path string
	Pos  int64
}

// ComparePositionDeletes orders rows as the Iceberg spec asks position
// delete files to be sorted: by file_path, then pos.
func ComparePositionDeletes(a, b PositionDelete) int {
	if c := cmp.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(a.Pos, b.Pos)
}

// WritePositionDeleteRows writes rows, sorted and without duplicates, as one
// format-version 2 position-delete file of partition spec specID and the
// given partition tuple, and returns its manifest entry. The file_path
// bounds are the first and last paths; when they are equal the file also
// names that data file in referenced_data_file, so that readers (and
// conflict checks) need not open it to know where it applies.
func WritePositionDeleteRows(ctx context.Context, tbl *table.Table, specID int32, partition map[int]any, rows []PositionDelete) (iceberg.DataFile, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("position deletes: no rows to write")
	}
	rows = slices.Clone(rows)
	slices.SortFunc(rows, ComparePositionDeletes)
	rows = slices.Compact(rows)
	first, last := rows[0], rows[len(rows)-1]

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: fieldID(posDeleteFilePathID)},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldID(posDeletePosID)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	paths := b.Field(0).(*array.StringBuilder)
	pos := b.Field(1).(*array.Int64Builder)
	for _, r := range rows {
		paths.Append(r.Path)
		pos.Append(r.Pos)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	w, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("position deletes for %s: %w", first.Path, err)
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, fmt.Errorf("position deletes for %s: %w", first.Path, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("position deletes for %s: %w", first.Path, err)
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
		return nil, fmt.Errorf("position deletes for %s: the table's file IO cannot write", first.Path)
	}
	if err := wfs.WriteFile(path, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("write position deletes %s: %w", path, err)
	}

	spec := tbl.Metadata().PartitionSpecByID(int(specID))
	if spec == nil {
		return nil, fmt.Errorf("position deletes for %s: unknown partition spec %d", first.Path, specID)
	}
	bld, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile,
		partition, nil, nil, int64(len(rows)), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	lo, hi := first.Pos, last.Pos
	if first.Path != last.Path {
		// The pos bounds span files: the smallest and largest of any.
		lo, hi = rows[0].Pos, rows[0].Pos
		for _, r := range rows {
			lo, hi = min(lo, r.Pos), max(hi, r.Pos)
		}
	}
	bld.LowerBoundValues(map[int][]byte{posDeleteFilePathID: []byte(first.Path), posDeletePosID: le64(lo)}).
		UpperBoundValues(map[int][]byte{posDeleteFilePathID: []byte(last.Path), posDeletePosID: le64(hi)}).
		ValueCounts(map[int]int64{posDeleteFilePathID: int64(len(rows)), posDeletePosID: int64(len(rows))}).
		NullValueCounts(map[int]int64{posDeleteFilePathID: 0, posDeletePosID: 0})
	if first.Path == last.Path {
		bld.ReferencedDataFile(first.Path)
	}
	return bld.Build(), nil
}

// ReadPositionDeletes reads the rows of the position-delete file at
// location.
func ReadPositionDeletes(ctx context.Context, fsys icebergio.IO, location string) ([]PositionDelete, error) {
	t, err := readPositionDeleteColumns(ctx, fsys, location, "file_path", "pos")
	if err != nil {
		return nil, err
	}
	defer t.Release()
	var out []PositionDelete
	paths, positions := t.Column(0).Data().Chunks(), t.Column(1).Data().Chunks()
	for c := range paths {
		p, ok1 := paths[c].(*array.String)
		n, ok2 := positions[c].(*array.Int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("position delete file %s: file_path is %s and pos is %s, want string and int64", location, paths[c].DataType(), positions[c].DataType())
		}
		for i := 0; i < p.Len(); i++ {
			if p.IsNull(i) || n.IsNull(i) {
				return nil, fmt.Errorf("position delete file %s: row with a null file_path or pos", location)
			}
			out = append(out, PositionDelete{Path: p.Value(i), Pos: n.Value(i)})
		}
	}
	return out, nil
}

// PositionDeleteFilePaths reads the distinct file_path values of the
// position-delete file at location: the data files it deletes rows of.
func PositionDeleteFilePaths(ctx context.Context, fsys icebergio.IO, location string) (map[string]bool, error) {
	t, err := readPositionDeleteColumns(ctx, fsys, location, "file_path")
	if err != nil {
		return nil, err
	}
	defer t.Release()
	names := map[string]bool{}
	for _, chunk := range t.Column(0).Data().Chunks() {
		for i := 0; i < chunk.Len(); i++ {
			if !chunk.IsNull(i) {
				names[chunk.ValueStr(i)] = true
			}
		}
	}
	return names, nil
}

func readPositionDeleteColumns(ctx context.Context, fsys icebergio.IO, location string, columns ...string) (arrow.Table, error) {
	f, err := fsys.Open(location)
	if err != nil {
		return nil, fmt.Errorf("open position delete file %s: %w", location, err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("read position delete file %s: %w", location, err)
	}
	defer pr.Close()
	var idx []int
	for _, c := range columns {
		i := pr.MetaData().Schema.ColumnIndexByName(c)
		if i < 0 {
			return nil, fmt.Errorf("position delete file %s has no %s column", location, c)
		}
		idx = append(idx, i)
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read position delete file %s: %w", location, err)
	}
	groups := make([]int, pr.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	t, err := fr.ReadRowGroups(ctx, idx, groups)
	if err != nil {
		return nil, fmt.Errorf("read position delete file %s: %w", location, err)
	}
	return t, nil
}

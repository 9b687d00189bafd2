package importer

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Parquet files carry their schema: the columns are the first file's, with
// the SQL type of each Arrow type; batches are cast to the table's types.

func (s *Source) openParquet(ctx context.Context, fi FileInfo) (*pqarrow.FileReader, File, error) {
	f, err := s.fsys.Open(ctx, fi.Location)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", fi.Location, err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", fi.Location, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{Parallel: true, BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, nil, fmt.Errorf("%s: %w", fi.Location, err)
	}
	return fr, f, nil
}

func (s *Source) inferParquet(ctx context.Context) error {
	fr, f, err := s.openParquet(ctx, s.files[0])
	if err != nil {
		return err
	}
	defer f.Close()
	sc, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("%s: %w", s.files[0].Location, err)
	}
	s.pq = sc
	for _, fld := range sc.Fields() {
		typ, err := sqlTypeOf(fld.Type)
		if err != nil {
			return fmt.Errorf("%s, column %s: %w", s.files[0].Location, fld.Name, err)
		}
		s.columns = append(s.columns, Column{Name: fld.Name, SQLType: typ})
	}
	return nil
}

// sqlTypeOf is the SQL type of a column of Arrow type dt.
func sqlTypeOf(dt arrow.DataType) (string, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return "BOOLEAN", nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Uint8Type, *arrow.Uint16Type:
		return "INT", nil
	case *arrow.Int64Type, *arrow.Uint32Type:
		return "BIGINT", nil
	case *arrow.Uint64Type:
		return "DECIMAL(20,0)", nil
	case *arrow.Float16Type, *arrow.Float32Type:
		return "FLOAT", nil
	case *arrow.Float64Type:
		return "DOUBLE", nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return "STRING", nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return "BLOB", nil
	case *arrow.Date32Type, *arrow.Date64Type:
		return "DATE", nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "TIMESTAMP_LTZ", nil
		}
		return "DATETIME(6)", nil
	case *arrow.Time32Type, *arrow.Time64Type:
		return "TIME(6)", nil
	}
	return "", fmt.Errorf("import cannot make a column of Arrow type %s", dt)
}

// parquetPlan checks that every target column can be had from the first
// file (each file's columns are matched by name again as it is read).
func (s *Source) parquetPlan(target *arrow.Schema) error {
	for _, f := range target.Fields() {
		at := indexFoldFields(s.pq, f.Name)
		if at < 0 && !f.Nullable {
			return fmt.Errorf("the files have no column %s, which the table requires (NOT NULL)", f.Name)
		}
		if at >= 0 && !arrow.TypeEqual(s.pq.Field(at).Type, f.Type) && !compute.CanCast(s.pq.Field(at).Type, f.Type) {
			return fmt.Errorf("column %s: the files' %s cannot become the table's %s", f.Name, s.pq.Field(at).Type, f.Type)
		}
	}
	for _, f := range s.pq.Fields() {
		if indexFoldFields(target, f.Name) < 0 {
			return fmt.Errorf("the files have a column %s, which the table has not", f.Name)
		}
	}
	return nil
}

// readParquet reads every Parquet file's batches, cast to the target.
func (s *Source) readParquet(ctx context.Context, r *Reader) {
	for _, fi := range s.files {
		if err := s.readParquetFile(ctx, fi, r); err != nil {
			c := &chunk{fatal: err, done: make(chan struct{})}
			close(c.done)
			r.emit(ctx, c, nil)
			return
		}
	}
}

func (s *Source) readParquetFile(ctx context.Context, fi FileInfo, r *Reader) error {
	fr, f, err := s.openParquet(ctx, fi)
	if err != nil {
		return err
	}
	defer f.Close()
	sc, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("%s: %w", fi.Location, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", fi.Location, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		out, err := castBatch(ctx, rec, sc, r.target)
		if err != nil {
			return fmt.Errorf("%s: %w", fi.Location, err)
		}
		r.bytes.Add(fi.Size * rec.NumRows() / max(fr.ParquetReader().NumRows(), 1))
		c := &chunk{batch: out, done: make(chan struct{})}
		close(c.done)
		if !r.emit(ctx, c, nil) {
			out.Release()
			return ctx.Err()
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("%s: %w", fi.Location, err)
	}
	return nil
}

// castBatch is rec (of schema sc) as a batch of target: columns matched by
// name and cast, missing ones NULL.
func castBatch(ctx context.Context, rec arrow.RecordBatch, sc, target *arrow.Schema) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	cols := make([]arrow.Array, target.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j, f := range target.Fields() {
		at := indexFoldFields(sc, f.Name)
		if at < 0 {
			cols[j] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(n))
			continue
		}
		col := rec.Column(at)
		if arrow.TypeEqual(col.DataType(), f.Type) {
			col.Retain()
			cols[j] = col
		} else {
			cast, err := compute.CastArray(ctx, col, compute.SafeCastOptions(f.Type))
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", f.Name, err)
			}
			cols[j] = cast
		}
		if !f.Nullable && cols[j].NullN() > 0 {
			return nil, fmt.Errorf("column %s: NULL in a NOT NULL column", f.Name)
		}
	}
	return array.NewRecordBatch(target, cols, n), nil
}

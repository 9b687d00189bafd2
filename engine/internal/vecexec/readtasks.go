package vecexec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/pushdown"
)

// CheckFormats refuses a scan that would read a data file in a format
// icesql cannot decode, naming the file and its format. iceberg-go reads
// Parquet only and would fail with "only parquet format is implemented",
// without saying which file.
func CheckFormats(name string, tasks []table.FileScanTask) error {
	for _, t := range tasks {
		if f := t.File.FileFormat(); f != iceberg.ParquetFile {
			return mysqlerr.NotSupported("table %s: data file %s is in %s format; icesql reads Parquet data files only (rewrite the table's data as Parquet, for example with Spark's rewrite_data_files)",
				name, t.File.FilePath(), f)
		}
	}
	return nil
}

// identityFill is a projected column whose value a data file may not hold
// because its identity partition value stands for it: Hive-style tables
// (and DuckDB's partition tests) write partition columns only in the
// partition tuple. The Iceberg spec gives identity-partitioned columns the
// partition value for every row of the file, and iceberg-go v0.7.0 reads a
// column absent from the file as NULL instead, so icesql sets it.
type identityFill struct {
	column  string // the projected column's name
	fieldID int    // its Iceberg field id
}

// OpenTasks reads tasks as Arrow batches. When the statement reads an
// identity-partitioned column, files of a spec that partitions by it are
// read one by one with the column set from their partition value (column
// statistics cannot tell whether a file stores the column: DuckDB's
// partition fixtures record them for columns the files lack); the rest are
// read together, in parallel.
func OpenTasks(ctx context.Context, tbl *table.Table, r pushdown.Read, tasks []table.FileScanTask, columns []string) (BatchSource, error) {
	fills := identityColumns(tbl, r.Scan, columns)
	if len(fills) == 0 {
		if src, ok, err := OpenNative(ctx, r, tasks); ok {
			return src, err
		}
		return pushdown.Open(ctx, r, tasks)
	}
	var bulk, single []table.FileScanTask
	for _, t := range tasks {
		if partitionedBy(tbl, t.File, fills) {
			single = append(single, t)
		} else {
			bulk = append(bulk, t)
		}
	}
	if len(single) == 0 {
		return pushdown.Open(ctx, r, tasks)
	}
	p := &patchedBatches{ctx: ctx, tbl: tbl, read: r, bulk: bulk, fills: fills}
	// The files the decoded-file cache serves are read together, each
	// batch set as it is handed out (pushdown/decodedread.go).
	decoded, rest, err := pushdown.OpenDecoded(ctx, r, single, func(rec arrow.RecordBatch, t table.FileScanTask) (arrow.RecordBatch, error) {
		return p.patch(rec, &t)
	})
	if err != nil {
		return nil, err
	}
	p.decoded, p.single = decoded, rest
	return p, nil
}

// identityColumns lists the projected columns that some partition spec of
// the table partitions by identity.
func identityColumns(tbl *table.Table, scan *table.Scan, columns []string) []identityFill {
	sc, err := scan.Projection()
	if err != nil {
		return nil
	}
	identity := map[int]bool{}
	for _, spec := range tbl.Metadata().PartitionSpecs() {
		for _, f := range spec.Fields() {
			if _, ok := f.Transform.(iceberg.IdentityTransform); ok && len(f.SourceIDs) == 1 {
				identity[f.SourceIDs[0]] = true
			}
		}
	}
	var out []identityFill
	for _, c := range columns {
		if f, ok := sc.FindFieldByNameCaseInsensitive(c); ok && identity[f.ID] {
			out = append(out, identityFill{column: c, fieldID: f.ID})
		}
	}
	return out
}

// partitionedBy reports whether the file's partition spec partitions by
// identity on one of the columns.
func partitionedBy(tbl *table.Table, f iceberg.DataFile, fills []identityFill) bool {
	spec := tbl.Metadata().PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return false
	}
	for _, fl := range fills {
		for _, pf := range spec.FieldsBySourceID(fl.fieldID) {
			if _, ok := pf.Transform.(iceberg.IdentityTransform); ok {
				return true
			}
		}
	}
	return false
}

// patchedBatches reads the single tasks the decoded-file cache serves
// (set as they are handed out), the bulk tasks, then each other single
// task on its own with its identity columns set from its partition value.
type patchedBatches struct {
	ctx     context.Context
	tbl     *table.Table
	read    pushdown.Read
	bulk    []table.FileScanTask
	single  []table.FileScanTask
	decoded *pushdown.Batches // single tasks from the decoded-file cache, already set
	fills   []identityFill

	cur     *pushdown.Batches
	curTask *table.FileScanTask
	prev    arrow.RecordBatch
	started bool
}

func (p *patchedBatches) Next() (arrow.RecordBatch, error) {
	p.release()
	for {
		if p.cur == nil {
			if err := p.openNext(); err != nil {
				return nil, err
			}
		}
		rec, err := p.cur.Next()
		if errors.Is(err, io.EOF) {
			p.cur.Close()
			p.cur = nil
			continue
		}
		if err != nil || p.curTask == nil {
			return rec, err
		}
		patched, err := p.patch(rec, p.curTask)
		if err != nil {
			return nil, err
		}
		p.prev = patched
		return patched, nil
	}
}

// openNext opens the bulk tasks first, then the single ones; io.EOF when done.
func (p *patchedBatches) openNext() error {
	if p.decoded != nil {
		p.cur, p.curTask, p.decoded = p.decoded, nil, nil
		return nil
	}
	var tasks []table.FileScanTask
	switch {
	case !p.started:
		p.started = true
		if len(p.bulk) == 0 {
			return p.openNext()
		}
		tasks, p.curTask = p.bulk, nil
	case len(p.single) > 0:
		t := p.single[0]
		p.single = p.single[1:]
		tasks, p.curTask = []table.FileScanTask{t}, &t
	default:
		return io.EOF
	}
	b, err := pushdown.Open(p.ctx, p.read, tasks)
	if err != nil {
		return err
	}
	p.cur = b
	return nil
}

func (p *patchedBatches) release() {
	if p.prev != nil {
		p.prev.Release()
		p.prev = nil
	}
}

func (p *patchedBatches) Close() {
	p.release()
	if p.cur != nil {
		p.cur.Close()
		p.cur = nil
	}
	if p.decoded != nil {
		p.decoded.Close()
		p.decoded = nil
	}
}

// patch replaces the identity columns of rec with the file's partition values.
func (p *patchedBatches) patch(rec arrow.RecordBatch, task *table.FileScanTask) (arrow.RecordBatch, error) {
	spec := p.tbl.Metadata().PartitionSpecByID(int(task.File.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s: unknown partition spec %d", task.File.FilePath(), task.File.SpecID())
	}
	part := task.File.Partition()
	cols := rec.Columns()
	out := make([]arrow.Array, len(cols))
	copy(out, cols)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, fl := range p.fills {
		idx := rec.Schema().FieldIndices(fl.column)
		if len(idx) == 0 {
			continue
		}
		var value any
		found := false
		for _, pf := range spec.FieldsBySourceID(fl.fieldID) {
			if _, ok := pf.Transform.(iceberg.IdentityTransform); ok {
				value, found = part[pf.FieldID], true
			}
		}
		if !found {
			continue // this file's spec does not partition by the column
		}
		arr, err := constantArray(rec.Schema().Field(idx[0]).Type, value, int(rec.NumRows()))
		if err != nil {
			return nil, fmt.Errorf("data file %s: partition value of %s: %w", task.File.FilePath(), fl.column, err)
		}
		made = append(made, arr)
		out[idx[0]] = arr
	}
	return array.NewRecordBatch(rec.Schema(), out, rec.NumRows()), nil
}

// constantArray is n copies of v (nil: n nulls) as an Arrow array of type dt.
func constantArray(dt arrow.DataType, v any, n int) (arrow.Array, error) {
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	appendOne, err := constantAppender(b, v)
	if err != nil {
		return nil, err
	}
	for range n {
		appendOne()
	}
	return b.NewArray(), nil
}

func constantAppender(b array.Builder, v any) (func(), error) {
	if v == nil {
		return b.AppendNull, nil
	}
	bad := func() (func(), error) { return nil, fmt.Errorf("cannot store %v (%T) in a %s column", v, v, b.Type()) }
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		return func() { bb.Append(x) }, nil
	case *array.Int32Builder:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		return func() { bb.Append(x) }, nil
	case *array.Int64Builder:
		switch x := v.(type) {
		case int64:
			return func() { bb.Append(x) }, nil
		case int32:
			return func() { bb.Append(int64(x)) }, nil
		}
		return bad()
	case *array.Float32Builder:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		return func() { bb.Append(x) }, nil
	case *array.Float64Builder:
		switch x := v.(type) {
		case float64:
			return func() { bb.Append(x) }, nil
		case float32:
			return func() { bb.Append(float64(x)) }, nil
		}
		return bad()
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		return func() { bb.Append(x) }, nil
	case *array.LargeStringBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		return func() { bb.Append(x) }, nil
	case *array.BinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return func() { bb.Append(x) }, nil
	case *array.FixedSizeBinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return func() { bb.Append(x) }, nil
	case *array.Date32Builder:
		x, ok := v.(iceberg.Date)
		if !ok {
			return bad()
		}
		return func() { bb.Append(arrow.Date32(x)) }, nil
	case *array.TimestampBuilder:
		switch x := v.(type) {
		case iceberg.Timestamp:
			return func() { bb.Append(arrow.Timestamp(x)) }, nil
		case iceberg.TimestampNano:
			return func() { bb.Append(arrow.Timestamp(x)) }, nil
		}
		return bad()
	case *array.Time64Builder:
		x, ok := v.(iceberg.Time)
		if !ok {
			return bad()
		}
		return func() { bb.Append(arrow.Time64(x)) }, nil
	case *array.Decimal128Builder:
		var x iceberg.Decimal
		switch d := v.(type) {
		case iceberg.Decimal:
			x = d
		case iceberg.DecimalLiteral:
			x = iceberg.Decimal(d)
		default:
			return bad()
		}
		n := decimal128.Num(x.Val)
		if scale := int(bb.Type().(*arrow.Decimal128Type).Scale); scale != x.Scale {
			var err error
			if n, err = n.Rescale(int32(x.Scale), int32(scale)); err != nil {
				return nil, err
			}
		}
		return func() { bb.Append(n) }, nil
	}
	return bad()
}

package pushdown

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
)

// nativeKind is how a column's values are decoded and handed on.
type nativeKind int

const (
	nativeInt32   nativeKind = iota // Iceberg int: Arrow Int32
	nativeInt64                     // Iceberg long: Arrow Int64
	nativeDate                      // Iceberg date: Arrow Date32
	nativeDecimal                   // Iceberg decimal(p ≤ 18, s): Arrow Int64 of the unscaled value
	nativeString                    // Iceberg string: Arrow dictionary of int32 indices into strings
)

// nativeMaxPrecision is the largest decimal precision whose values fit an
// int64.
const nativeMaxPrecision = 18

type nativeColumn struct {
	name  string
	id    int
	kind  nativeKind
	scale int
}

var nativeDictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

func (c nativeColumn) arrowType() arrow.DataType {
	switch c.kind {
	case nativeInt32:
		return arrow.PrimitiveTypes.Int32
	case nativeDate:
		return arrow.FixedWidthTypes.Date32
	case nativeString:
		return nativeDictType
	}
	return arrow.PrimitiveTypes.Int64
}

// nativeColumns maps the projected schema's columns, or says one has a
// type the native reader does not decode.
func nativeColumns(sc *iceberg.Schema) ([]nativeColumn, bool) {
	var out []nativeColumn
	for _, f := range sc.Fields() {
		c := nativeColumn{name: f.Name, id: f.ID}
		switch t := f.Type.(type) {
		case iceberg.Int32Type:
			c.kind = nativeInt32
		case iceberg.Int64Type:
			c.kind = nativeInt64
		case iceberg.DateType:
			c.kind = nativeDate
		case iceberg.DecimalType:
			if t.Precision() > nativeMaxPrecision {
				return nil, false
			}
			c.kind, c.scale = nativeDecimal, t.Scale()
		case iceberg.StringType:
			c.kind = nativeString
		default:
			return nil, false
		}
		out = append(out, c)
	}
	return out, len(out) > 0
}

// matchColumns finds the file's leaf column of every projected column by
// field id, or says the file needs iceberg-go's reader: a column missing,
// nested or repeated, or stored in a physical type that is not the plain
// one of its Iceberg type.
func matchColumns(meta *metadata.FileMetaData, cols []nativeColumn) (leaves []int, ok bool) {
	byID := map[int]int{}
	for i := range meta.Schema.NumColumns() {
		if id := meta.Schema.Column(i).SchemaNode().FieldID(); id >= 0 {
			byID[int(id)] = i
		}
	}
	out := make([]int, len(cols))
	for i, c := range cols {
		leaf, found := byID[c.id]
		if !found {
			return nil, false
		}
		col := meta.Schema.Column(leaf)
		if len(col.ColumnPath()) != 1 || col.MaxRepetitionLevel() != 0 || col.MaxDefinitionLevel() > 1 || !storedAs(col, c) {
			return nil, false
		}
		out[i] = leaf
	}
	return out, true
}

func storedAs(col *schema.Column, c nativeColumn) bool {
	phys, lt := col.PhysicalType(), col.LogicalType()
	signedInt := func(width int8) bool {
		switch l := lt.(type) {
		case nil, schema.NoLogicalType:
			return true
		case schema.IntLogicalType:
			return l.IsSigned() && l.BitWidth() <= width
		}
		return false
	}
	switch c.kind {
	case nativeInt32:
		return phys == parquet.Types.Int32 && signedInt(32)
	case nativeInt64:
		// An int column promoted to long keeps its INT32 files.
		return (phys == parquet.Types.Int64 && signedInt(64)) || (phys == parquet.Types.Int32 && signedInt(32))
	case nativeDate:
		_, ok := lt.(schema.DateLogicalType)
		return phys == parquet.Types.Int32 && ok
	case nativeDecimal:
		d, ok := lt.(schema.DecimalLogicalType)
		if !ok || int(d.Scale()) != c.scale || d.Precision() > nativeMaxPrecision {
			return false
		}
		switch phys {
		case parquet.Types.Int32, parquet.Types.Int64:
			return true
		case parquet.Types.FixedLenByteArray:
			return col.TypeLength() >= 1 && col.TypeLength() <= 8
		}
		return false
	case nativeString:
		if phys != parquet.Types.ByteArray {
			return false
		}
		switch lt.(type) {
		case schema.StringLogicalType, nil, schema.NoLogicalType:
			return true
		}
	}
	return false
}

// firstPageOffset is where a row group's first column chunk starts, as
// iceberg-go computes the split offsets it writes and selects row groups by.
func firstPageOffset(rg *metadata.RowGroupMetaData) int64 {
	if rg.NumColumns() > 0 {
		if cc, err := rg.ColumnChunk(0); err == nil {
			data := cc.DataPageOffset()
			if cc.HasDictionaryPage() {
				if dict := cc.DictionaryPageOffset(); dict >= 0 && (data < 0 || dict < data) {
					return dict
				}
			}
			if data >= 0 {
				return data
			}
		}
	}
	return rg.FileOffset()
}

// columnReader reads one column chunk: a string column's through a record
// reader, any other's through its typed column reader.
type columnReader struct {
	chunk   file.ColumnChunkReader
	records file.BinaryRecordReader
	flba    *flbaPages
	str     *strPages
}

// readBatch reads the next n rows of every column.
func (r *nativeReader) readBatch(readers []columnReader, n int) (arrow.RecordBatch, error) {
	arrs := make([]arrow.Array, len(r.cols))
	fields := make([]arrow.Field, len(r.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, c := range r.cols {
		a, err := r.readColumn(readers[i], c, n)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		arrs[i] = a
		fields[i] = arrow.Field{Name: c.name, Type: a.DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(n)), nil
}

// columnBuffers is a worker's scratch space, reused from batch to batch.
type columnBuffers struct {
	defs []int16
	i32  []int32
	flba []parquet.FixedLenByteArray
	i64  []int64
}

func (r *nativeReader) readColumn(col columnReader, c nativeColumn, n int) (arrow.Array, error) {
	if col.str != nil {
		return col.str.readArray(n, &r.bufs)
	}
	if c.kind == nativeString {
		return readDictionary(col.records, n)
	}
	var defs []int16
	if col.flba != nil && col.flba.little {
		return r.readLittle(col.flba, c, n) // nativeselect.go
	}
	if col.flba != nil {
		if col.flba.maxDef > 0 {
			r.bufs.defs = grown(r.bufs.defs, n)
			defs = r.bufs.defs
		}
		vals := allocValues[int64](n)
		packed, err := col.flba.read(vals.v, defs)
		if err != nil {
			vals.buf.Release()
			return nil, err
		}
		return vals.array(arrow.PrimitiveTypes.Int64, defs, packed), nil
	}
	cr := col.chunk
	if cr.Descriptor().MaxDefinitionLevel() > 0 {
		r.bufs.defs = grown(r.bufs.defs, n)
		defs = r.bufs.defs
	}
	switch c.kind {
	case nativeInt32, nativeDate:
		rd, ok := cr.(*file.Int32ColumnChunkReader)
		if !ok {
			return nil, errNativeType
		}
		vals := allocValues[int32](n)
		packed, err := readFixed(rd.ReadBatch, vals, defs)
		if err != nil {
			vals.buf.Release()
			return nil, err
		}
		return vals.array(c.arrowType(), defs, packed), nil
	case nativeInt64, nativeDecimal:
		vals := allocValues[int64](n)
		packed, err := r.readInt64(cr, vals, defs)
		if err != nil {
			vals.buf.Release()
			return nil, err
		}
		return vals.array(arrow.PrimitiveTypes.Int64, defs, packed), nil
	}
	return nil, errNativeType
}

// readDictionary reads n rows of a string column as a dictionary array:
// arrow-go's record reader appends the pages' dictionary indices as they
// are, and a row group's pages share one dictionary, so a batch (which
// never spans row groups) is one chunk.
func readDictionary(rr file.BinaryRecordReader, n int) (arrow.Array, error) {
	rr.Reset()
	if err := rr.Reserve(int64(n)); err != nil {
		return nil, err
	}
	for left := int64(n); left > 0; {
		if !rr.HasMore() {
			return nil, fmt.Errorf("column chunk ended %d rows early", left)
		}
		got, err := rr.ReadRecords(left)
		if err != nil {
			return nil, err
		}
		if got == 0 {
			return nil, fmt.Errorf("column chunk ended %d rows early", left)
		}
		left -= got
	}
	chunks := rr.GetBuilderChunks()
	if len(chunks) == 1 && chunks[0].Len() == n {
		return chunks[0], nil
	}
	for _, c := range chunks {
		c.Release()
	}
	return nil, fmt.Errorf("%d rows decoded as %d dictionary chunks", n, len(chunks))
}

// readInt64 reads int64 values: longs and decimals stored as INT64, ints
// and decimals stored as INT32 (widened), decimals as big-endian bytes.
func (r *nativeReader) readInt64(cr file.ColumnChunkReader, vals values[int64], defs []int16) (packed int, err error) {
	switch rd := cr.(type) {
	case *file.Int64ColumnChunkReader:
		return readFixed(rd.ReadBatch, vals, defs)
	case *file.Int32ColumnChunkReader:
		r.bufs.i32 = grown(r.bufs.i32, len(vals.v))
		tmp := values[int32]{v: r.bufs.i32}
		packed, err := readFixed(rd.ReadBatch, tmp, defs)
		if err != nil {
			return 0, err
		}
		for i, x := range tmp.v {
			vals.v[i] = int64(x)
		}
		return packed, nil
	case *file.FixedLenByteArrayColumnChunkReader:
		n := len(vals.v)
		r.bufs.flba = grown(r.bufs.flba, n)
		scratch := r.bufs.flba
		got, vgot := 0, 0
		// Values alias the page buffer: convert each page's before the next
		// is read.
		for got < n {
			var d []int16
			if defs != nil {
				d = defs[got:]
			}
			t, v, err := rd.ReadBatchInPage(int64(n-got), scratch[:n-got], d, nil)
			if err != nil {
				return 0, err
			}
			if t == 0 {
				return 0, fmt.Errorf("column chunk ended %d rows early", n-got)
			}
			for i, b := range scratch[:v] {
				vals.v[vgot+i] = bigEndianInt64(b)
			}
			got += int(t)
			vgot += v
		}
		spread(vals.v, defs, vgot)
		return vgot, nil
	}
	return 0, errNativeType
}

// bigEndianInt64 is a two's-complement big-endian integer of at most 8 bytes.
func bigEndianInt64(b []byte) int64 {
	if n := len(b); n > 0 && cap(b) >= 8 {
		// One load where the buffer goes on (every value of a page but
		// its last): the bytes past the value shift out, the arithmetic
		// shift extends the sign.
		return int64(binary.BigEndian.Uint64(b[:8])) >> (64 - 8*n)
	}
	var v int64
	if len(b) > 0 && b[0]&0x80 != 0 {
		v = -1
	}
	for _, x := range b {
		v = v<<8 | int64(x)
	}
	return v
}

// values is a column's values in a pooled buffer.
type values[T int32 | int64] struct {
	buf *memory.Buffer
	v   []T
}

func allocValues[T int32 | int64](n int) values[T] {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	data := pool.Allocate(size)
	buf := memory.NewBufferWithAllocator(data, pool)
	return values[T]{buf: buf, v: unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(data))), n)}
}

// array wraps the values, with the validity defs give when fewer than all
// rows had a value (packed).
func (v values[T]) array(dt arrow.DataType, defs []int16, packed int) arrow.Array {
	var validity *memory.Buffer
	nulls := 0
	if packed < len(v.v) {
		validity, nulls = validityOf(defs, len(v.v))
	}
	data := array.NewData(dt, len(v.v), []*memory.Buffer{validity, v.buf}, nil, nulls, 0)
	v.buf.Release()
	if validity != nil {
		validity.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// validityOf builds the validity bitmap of definition levels (1: a value),
// nil when every row has one.
func validityOf(defs []int16, n int) (*memory.Buffer, int) {
	if defs == nil {
		return nil, 0
	}
	nulls := 0
	for _, d := range defs[:n] {
		if d == 0 {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	data := pool.Allocate(int(bitutil.BytesForBits(int64(n))))
	clear(data)
	for i, d := range defs[:n] {
		if d != 0 {
			bitutil.SetBit(data, i)
		}
	}
	return memory.NewBufferWithAllocator(data, pool), nulls
}

// readFixed fills vals with n rows of a fixed-width column: ReadBatch packs
// the non-NULL values first, spread moves them to their rows.
func readFixed[T int32 | int64](read func(int64, []T, []int16, []int16) (int64, int, error), vals values[T], defs []int16) (packed int, err error) {
	n := len(vals.v)
	got, vgot := 0, 0
	for got < n {
		var d []int16
		if defs != nil {
			d = defs[got:]
		}
		t, v, err := read(int64(n-got), vals.v[vgot:], d, nil)
		if err != nil {
			return 0, err
		}
		if t == 0 {
			return 0, fmt.Errorf("column chunk ended %d rows early", n-got)
		}
		got += int(t)
		vgot += v
	}
	spread(vals.v, defs, vgot)
	return vgot, nil
}

// spread moves the first packed values to the rows whose definition level
// says they hold one, zeroing the NULL rows.
func spread[T int32 | int64](v []T, defs []int16, packed int) {
	if defs == nil || packed == len(v) {
		return
	}
	k := packed - 1
	for i := len(v) - 1; i >= 0; i-- {
		if defs[i] != 0 {
			v[i] = v[k]
			k--
		} else {
			v[i] = 0
		}
	}
}

func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// pool recycles the value buffers of native batches: a scan allocates the
// same few sizes over and over, and the garbage collector would otherwise
// sweep hundreds of megabytes per second of them.
var pool = &bufferPool{}

type bufferPool struct{ classes [40]sync.Pool }

func sizeClass(n int) int { return bits.Len(uint(max(n, 64) - 1)) }

func (p *bufferPool) Allocate(size int) []byte {
	c := sizeClass(size)
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		return (*b)[:size]
	}
	return make([]byte, size, 1<<c)
}

func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *bufferPool) Free(b []byte) {
	c := sizeClass(cap(b))
	if cap(b) != 1<<c {
		return
	}
	b = b[:cap(b)]
	p.classes[c].Put(&b)
}

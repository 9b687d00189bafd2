package pushdown

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// Late materialisation in native scans. A selective WHERE clause (a 1% date
// range) used to have every projected column of every row decoded into
// Arrow arrays, only for the vector kernels to drop 99% of the rows. When
// the consumer gives the scan its predicate (Native.Select), each batch is
// read in two steps: the columns the predicate reads first, then, for the
// rows it keeps, the other columns; the batch handed on holds the kept rows
// only. The consumer evaluates its WHERE clause again on those rows, which
// keeps them all: the predicate is the same, so the results are too.
//
// A predicate on a single column stored in dictionary pages (dates,
// decimals, small integers) is evaluated once per dictionary value rather
// than once per row: a row then costs one lookup of its index
// (nativesparse.go). The other columns' values are converted only for kept
// rows, and a batch without kept rows reads nothing else at all.

// RowSelector evaluates a predicate on batches, for one goroutine: Columns
// names the batch columns it reads, Select returns the offsets of the rows
// where it is TRUE, in increasing order. vector.Selector is one.
type RowSelector interface {
	Columns() []string
	Select(rec arrow.RecordBatch) ([]int32, error)
}

// prefilter is one cursor's predicate and scratch space.
type prefilter struct {
	sel    RowSelector
	filter []bool // per projected column: the predicate reads it
	single int    // the one column the predicate reads, else -1
	keep   dictKeep
	offs   []int32
	vals   []int64
	defs   []int16
	sparse []int64

	batches    int
	read, kept int64 // rows read with the predicate, and kept
	off        bool  // reading without the predicate from now on

	dictVals []int64
	dictDefs []int16
}

// newPrefilter compiles the scan's predicate for one cursor, or returns nil
// when there is none or it would not spare any work: a column it reads
// that the scan does not project, or several columns and no other.
func newPrefilter(n Native, cols []nativeColumn) *prefilter {
	if n.Select == nil {
		return nil
	}
	s, err := n.Select()
	if err != nil || s == nil {
		return nil // the consumer compiles the same predicate and reports it
	}
	p := &prefilter{sel: s, filter: make([]bool, len(cols)), single: -1}
	names := s.Columns()
	for _, name := range names {
		i := slices.IndexFunc(cols, func(c nativeColumn) bool { return c.name == name })
		if i < 0 {
			return nil
		}
		p.filter[i] = true
		p.single = i
	}
	if len(names) != 1 {
		p.single = -1
	}
	if len(names) == 0 || (p.single < 0 && !slices.Contains(p.filter, false)) {
		return nil
	}
	return p
}

// read reads the next n rows: all of them, or without a prefilter only the
// rows its predicate keeps (nil when it keeps none).
func (r *nativeReader) read(readers []columnReader, n int) (arrow.RecordBatch, error) {
	if p := r.pre; p != nil && !p.off {
		if p.batches >= prefilterTrial && p.kept*2 > p.read {
			// The predicate keeps most rows (TPC-H Q1's keeps 98%):
			// reading them in two steps and copying them costs more than
			// it spares.
			p.off = true
		} else {
			p.batches++
			p.read += int64(n)
			return r.readSelected(readers, n)
		}
	}
	return r.readBatch(readers, n)
}

// prefilterTrial is how many batches a cursor reads with its predicate
// before it judges whether the predicate keeps few enough rows to go on.
const prefilterTrial = 4

// readLittle reads n rows of an integer column opened through flbaPages.
func (r *nativeReader) readLittle(f *flbaPages, c nativeColumn, n int) (arrow.Array, error) {
	var defs []int16
	if f.maxDef > 0 {
		r.bufs.defs = grown(r.bufs.defs, n)
		defs = r.bufs.defs
	}
	r.pre.sparse = grown(r.pre.sparse, n)
	packed, err := f.read(r.pre.sparse, defs)
	if err != nil {
		return nil, err
	}
	if packed == n {
		defs = nil
	}
	return arrayOf(c, r.pre.sparse, defs), nil
}

func (r *nativeReader) readSelected(readers []columnReader, n int) (arrow.RecordBatch, error) {
	p := r.pre
	arrs := make([]arrow.Array, len(r.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	sel, err := r.selectRows(readers, n, arrs)
	if err != nil {
		return nil, err
	}
	p.kept += int64(len(sel))
	r.stats.add(&r.stats.SelectedOf, int64(n))
	r.stats.add(&r.stats.Selected, int64(len(sel)))
	for i, c := range r.cols {
		if p.filter[i] {
			continue
		}
		switch {
		case len(sel) == 0:
			err = skipRows(readers[i], n)
		case len(sel) == n:
			arrs[i], err = r.readColumn(readers[i], c, n)
		default:
			arrs[i], err = r.readSparse(readers[i], c, n, sel)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
	}
	if len(sel) == 0 {
		return nil, nil
	}
	fields := make([]arrow.Field, len(r.cols))
	for i, c := range r.cols {
		fields[i] = arrow.Field{Name: c.name, Type: arrs[i].DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(len(sel))), nil
}

// selectRows reads the predicate's columns of the next n rows, keeping in
// arrs their values for the rows it keeps, whose offsets it returns.
func (r *nativeReader) selectRows(readers []columnReader, n int, arrs []arrow.Array) ([]int32, error) {
	p := r.pre
	if p.single >= 0 && readers[p.single].flba != nil {
		c, f := r.cols[p.single], readers[p.single].flba
		rf := rowFilter{
			keepFor: func(f *flbaPages) (*dictKeep, error) { return p.keepFor(f, c) },
			pick: func(vals []int64, defs []int16) ([]int32, error) {
				return p.pick(c, vals, defs)
			},
		}
		var defs []int16
		if f.maxDef > 0 {
			defs = p.defs[:0]
		}
		sel, vals, defs, err := f.selectRows(n, rf, p.offs[:0], p.vals[:0], defs)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		p.offs, p.vals = sel, vals
		if defs != nil {
			p.defs = defs
		}
		arrs[p.single] = arrayOf(c, vals, defs)
		return sel, nil
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for i, c := range r.cols {
		if !p.filter[i] {
			continue
		}
		a, err := r.readColumn(readers[i], c, n)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		arrs[i] = a
		fields = append(fields, arrow.Field{Name: c.name, Type: a.DataType(), Nullable: true})
		cols = append(cols, a)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
	sel, err := p.sel.Select(rec)
	rec.Release()
	if err != nil || len(sel) == n {
		return sel, err
	}
	for i, a := range arrs {
		if a != nil {
			arrs[i] = takeRows(a, sel)
			a.Release()
		}
	}
	return sel, nil
}

// keepFor evaluates the predicate once per value of f's current
// dictionary, and on NULL.
func (p *prefilter) keepFor(f *flbaPages, c nativeColumn) (*dictKeep, error) {
	if p.keep.keep != nil && p.keep.gen == f.dictGen {
		return &p.keep, nil
	}
	n := len(f.dict)
	p.dictVals = append(append(p.dictVals[:0], f.dict...), 0)
	p.dictDefs = grown(p.dictDefs, n+1)
	for i := range n {
		p.dictDefs[i] = 1
	}
	p.dictDefs[n] = 0
	picked, err := p.pick(c, p.dictVals, p.dictDefs)
	if err != nil {
		return nil, err
	}
	p.keep.keep = grown(p.keep.keep, n)
	clear(p.keep.keep)
	p.keep.keepNull = false
	for _, o := range picked {
		if int(o) == n {
			p.keep.keepNull = true
		} else {
			p.keep.keep[o] = 1
		}
	}
	p.keep.gen = f.dictGen
	return &p.keep, nil
}

// pick evaluates the predicate on values of its one column (definition
// levels nil: none is NULL).
func (p *prefilter) pick(c nativeColumn, vals []int64, defs []int16) ([]int32, error) {
	a := arrayOf(c, vals, defs)
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: c.name, Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, int64(len(vals)))
	a.Release()
	defer rec.Release()
	return p.sel.Select(rec)
}

// arrayOf builds column c's array of vals, NULL where defs (when given)
// is 0.
func arrayOf(c nativeColumn, vals []int64, defs []int16) arrow.Array {
	packed := len(vals)
	if defs != nil {
		packed = 0
		for _, d := range defs {
			if d != 0 {
				packed++
			}
		}
	}
	if c.kind == nativeInt32 || c.kind == nativeDate {
		out := allocValues[int32](len(vals))
		for i, v := range vals {
			out.v[i] = int32(v)
		}
		return out.array(c.arrowType(), defs, packed)
	}
	out := allocValues[int64](len(vals))
	copy(out.v, vals)
	return out.array(arrow.PrimitiveTypes.Int64, defs, packed)
}

// readSparse reads the next n rows of a column that is not the
// predicate's, building only the rows at the offsets sel.
func (r *nativeReader) readSparse(col columnReader, c nativeColumn, n int, sel []int32) (arrow.Array, error) {
	if f := col.flba; f != nil {
		var defs []int16
		if f.maxDef > 0 {
			r.bufs.defs = grown(r.bufs.defs, len(sel))
			defs = r.bufs.defs
		}
		r.pre.sparse = grown(r.pre.sparse, len(sel))
		packed, err := f.gather(n, sel, r.pre.sparse, defs)
		if err != nil {
			return nil, err
		}
		if packed == len(sel) {
			defs = nil
		}
		return arrayOf(c, r.pre.sparse, defs), nil
	}
	a, err := r.readColumn(col, c, n)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return takeRows(a, sel), nil
}

// skipRows passes over the next n rows of a column the predicate rejected
// all of.
func skipRows(col columnReader, n int) error {
	switch {
	case col.flba != nil:
		col.flba.skip(n)
		return nil
	case col.str != nil:
		col.str.pages.skip(n)
		return nil
	case col.chunk != nil:
		return skipChunk(col.chunk, n)
	}
	a, err := readDictionary(col.records, n)
	if err != nil {
		return err
	}
	a.Release()
	return nil
}

type skipper interface {
	Skip(int64) (int64, error)
}

func skipChunk(cr interface{}, n int) error {
	s, ok := cr.(skipper)
	if !ok {
		return errNativeType
	}
	for left := int64(n); left > 0; {
		got, err := s.Skip(left)
		if err != nil {
			return err
		}
		if got == 0 {
			return fmt.Errorf("column chunk ended %d rows early", left)
		}
		left -= got
	}
	return nil
}

// takeRows is a's rows at the offsets sel, as the native reader builds its
// arrays: int32 or int64 values, or a dictionary of int32 indices.
func takeRows(a arrow.Array, sel []int32) arrow.Array {
	if d, ok := a.(*array.Dictionary); ok {
		idx := takeRows(d.Indices(), sel)
		defer idx.Release()
		return array.NewDictionaryArray(d.DataType(), idx, d.Dictionary())
	}
	valid := takeValidity(a, sel)
	nulls := 0
	if valid != nil {
		nulls = len(sel) - bitutil.CountSetBits(valid.Bytes(), 0, len(sel))
	}
	var buf *memory.Buffer
	switch a := a.(type) {
	case *array.Int32:
		out := allocValues[int32](len(sel))
		for i, s := range sel {
			out.v[i] = a.Value(int(s))
		}
		buf = out.buf
	case *array.Date32:
		out := allocValues[int32](len(sel))
		for i, s := range sel {
			out.v[i] = int32(a.Value(int(s)))
		}
		buf = out.buf
	case *array.Int64:
		out := allocValues[int64](len(sel))
		for i, s := range sel {
			out.v[i] = a.Value(int(s))
		}
		buf = out.buf
	default:
		panic(fmt.Sprintf("native scan: take of %s", a.DataType()))
	}
	data := array.NewData(a.DataType(), len(sel), []*memory.Buffer{valid, buf}, nil, nulls, 0)
	buf.Release()
	if valid != nil {
		valid.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// takeValidity is the validity bitmap of a's rows at sel, nil when a has
// no NULL.
func takeValidity(a arrow.Array, sel []int32) *memory.Buffer {
	if a.NullN() == 0 {
		return nil
	}
	data := pool.Allocate(int(bitutil.BytesForBits(int64(len(sel)))))
	clear(data)
	for i, s := range sel {
		if a.IsValid(int(s)) {
			bitutil.SetBit(data, i)
		}
	}
	return memory.NewBufferWithAllocator(data, pool)
}

// filterColumnReader opens the predicate's one column through flbaPages
// when its chunk is dictionary-encoded INT32 or INT64, for selectRows to
// evaluate the predicate on its dictionary; ok is false otherwise.
func (c *nativeCursor) filterColumnReader(rgr *file.RowGroupReader, i, leaf int) (cr columnReader, ok bool, err error) {
	p := c.r.pre
	if p == nil || p.single != i {
		return columnReader{}, false, nil
	}
	descr := c.pf.MetaData().Schema.Column(leaf)
	width := 0
	switch descr.PhysicalType() {
	case parquet.Types.Int32:
		width = 4
	case parquet.Types.Int64:
		width = 8
	default:
		return columnReader{}, false, nil
	}
	cc, err := rgr.MetaData().ColumnChunk(leaf)
	if err != nil {
		return columnReader{}, false, err
	}
	if !cc.HasDictionaryPage() || !flbaPagesFit(cc) {
		return columnReader{}, false, nil
	}
	pages, err := rgr.GetColumnPageReader(leaf)
	if err != nil {
		return columnReader{}, false, err
	}
	return columnReader{flba: &flbaPages{pages: pages, width: width, little: true, maxDef: descr.MaxDefinitionLevel()}}, true, nil
}

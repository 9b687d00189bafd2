package pushdown

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// PruneRowGroups narrows tasks to the Parquet row groups whose column
// statistics say a row might match filter, so that a reader which evaluates
// the whole filter itself (the vector path) can read without iceberg-go's
// row filter. iceberg-go skips row groups only with the filter it also
// applies to every batch, copying the surviving rows of each (a sixth of
// TPC-H Q1's time), and it misreads NULL counts, so the filter it is given
// is weakened (ReadFilter) and prunes less: nothing on a column with NULLs
// or on a decimal. Pruning here uses the row group's row count and NULL
// count, which are right, and judges decimals.
//
// A task whose file has one row group, whose split offsets do not match its
// row groups one for one, or of which every row group might match, is kept
// whole. Otherwise it becomes one task per surviving row group, each the
// byte range from that row group's split offset to the next one's:
// iceberg-go reads a ranged task as the row groups whose split offset falls
// in it, counting row positions from the file's start, so deletes apply to
// the pieces as to the whole file (split.go). A task none of whose row
// groups might match is dropped. skipped counts the row groups ruled out.
//
// fsys opens the data files to read their footers, which caches keep (nil:
// none kept); schema is the one the filter binds to (the scan's), and
// columns are matched to Parquet columns by field ID. Whatever cannot be
// judged (a column the file lacks, a type below, a nested column,
// statistics a writer is known to get wrong) might match.
func PruneRowGroups(ctx context.Context, caches *Caches, fsys icebergio.IO, schema *iceberg.Schema, filter iceberg.BooleanExpression, tasks []table.FileScanTask) (out []table.FileScanTask, skipped int64, err error) {
	bound, err := bindForRowGroups(schema, filter)
	if err != nil {
		return nil, 0, err
	}
	keeps := make([][]bool, len(tasks))
	errs := make([]error, len(tasks))
	sem := make(chan struct{}, footerReads)
	var wg sync.WaitGroup
	for i, t := range tasks {
		offsets := t.File.SplitOffsets()
		if t.File.FileFormat() != iceberg.ParquetFile || len(offsets) < 2 {
			continue
		}
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return nil, 0, err
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			keeps[i], errs[i] = survivingRowGroups(caches.footerCache(), fsys, t.File.FilePath(), t.File.FileSizeBytes(), bound, len(offsets))
		}()
	}
	wg.Wait()
	out = make([]table.FileScanTask, 0, len(tasks))
	for i, t := range tasks {
		if errs[i] != nil {
			return nil, 0, fmt.Errorf("prune row groups of %s: %w", t.File.FilePath(), errs[i])
		}
		pieces, n := rowGroupPieces(t, t.File.SplitOffsets(), keeps[i])
		out = append(out, pieces...)
		skipped += n
	}
	return out, skipped, nil
}

// footerReads is how many data file footers PruneRowGroups reads at once:
// on an object store each is a round trip or two, which a scan of many
// files should not pay one after another.
const footerReads = 16

// survivingRowGroups returns which row groups of the file might hold a row
// the bound filter accepts, or nil when the file's row groups are not the
// wanted count (its split offsets do not describe them).
func survivingRowGroups(footers *footerCache, fsys icebergio.IO, path string, size int64, bound iceberg.BooleanExpression, wanted int) ([]bool, error) {
	meta, err := footerOf(footers, fsys, path, size) // footers.go
	if err != nil {
		return nil, err
	}
	if meta.NumRowGroups() != wanted {
		return nil, nil
	}
	columns := topLevelColumns(meta)
	keep := make([]bool, wanted)
	for i := range keep {
		keep[i], err = rowGroupMightMatch(bound, meta.RowGroup(i), columns)
		if err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// bindForRowGroups binds filter, without NOT, to schema for
// rowGroupMightMatch.
func bindForRowGroups(schema *iceberg.Schema, filter iceberg.BooleanExpression) (iceberg.BooleanExpression, error) {
	noNot, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil, err
	}
	return iceberg.BindExpr(schema, noNot, false)
}

// topLevelColumns maps the Iceberg field ID of each top-level,
// non-repeated column of a Parquet file to its leaf column, the columns
// whose statistics rowGroupMightMatch trusts. A file written without field
// IDs (read through a name mapping) has none.
func topLevelColumns(meta *metadata.FileMetaData) map[int]int {
	columns, seen := map[int]int{}, map[int]bool{}
	root := pqschema.Node(meta.Schema.Root())
	for i := range meta.Schema.NumColumns() {
		col := meta.Schema.Column(i)
		id := int(col.SchemaNode().FieldID())
		if id < 0 || col.MaxRepetitionLevel() != 0 || col.SchemaNode().Parent() != root {
			continue
		}
		if seen[id] {
			delete(columns, id)
			continue
		}
		seen[id], columns[id] = true, i
	}
	return columns
}

// rowGroupMightMatch says whether row group rg might hold a row the filter
// (from bindForRowGroups) accepts, judging by the statistics of columns
// (from topLevelColumns).
func rowGroupMightMatch(bound iceberg.BooleanExpression, rg *metadata.RowGroupMetaData, columns map[int]int) (bool, error) {
	return iceberg.VisitExpr(bound, &rowGroupEval{rg: rg, columns: columns})
}

// rowGroupPieces turns task t into tasks of its surviving row groups and
// counts the others; keep nil or all true keeps t whole.
func rowGroupPieces(t table.FileScanTask, offsets []int64, keep []bool) ([]table.FileScanTask, int64) {
	if keep == nil || t.Start != 0 || (t.Length != 0 && t.Length != t.File.FileSizeBytes()) {
		return []table.FileScanTask{t}, 0
	}
	for i, o := range offsets {
		if o < 0 || o >= t.File.FileSizeBytes() || (i > 0 && o <= offsets[i-1]) {
			return []table.FileScanTask{t}, 0
		}
	}
	var out []table.FileScanTask
	var skipped int64
	for i, k := range keep {
		if !k {
			skipped++
			continue
		}
		end := t.File.FileSizeBytes()
		if i+1 < len(offsets) {
			end = offsets[i+1]
		}
		start := offsets[i]
		if i == 0 {
			start = 0
		}
		out = append(out, piece(t, start, end))
	}
	if skipped == 0 {
		return []table.FileScanTask{t}, 0
	}
	return out, skipped
}

// rowGroupEval decides whether a row group might hold a row a bound filter
// without NOT accepts.
type rowGroupEval struct {
	rg      *metadata.RowGroupMetaData
	columns map[int]int
}

func (rowGroupEval) VisitTrue() bool                            { return true }
func (rowGroupEval) VisitFalse() bool                           { return false }
func (rowGroupEval) VisitNot(bool) bool                         { return true } // RewriteNotExpr removed NOT; unknown
func (rowGroupEval) VisitAnd(l, r bool) bool                    { return l && r }
func (rowGroupEval) VisitOr(l, r bool) bool                     { return l || r }
func (rowGroupEval) VisitUnbound(iceberg.UnboundPredicate) bool { return true }

func (e *rowGroupEval) VisitBound(p iceberg.BoundPredicate) bool {
	if _, ok := p.Term().(iceberg.BoundReference); !ok {
		return true // a transform of a column: no statistics
	}
	field := p.Ref().Field()
	idx, ok := e.columns[field.ID]
	if !ok {
		return true
	}
	cc, err := e.rg.ColumnChunk(idx)
	if err != nil {
		return true
	}
	stats, err := cc.Statistics()
	if err != nil || stats == nil {
		return true
	}
	nulls, rows := int64(-1), e.rg.NumRows()
	if stats.HasNullCount() {
		nulls = stats.NullCount()
	}
	switch p.Op() {
	case iceberg.OpIsNull:
		return nulls != 0
	case iceberg.OpNotNull:
		return nulls < 0 || nulls < rows
	case iceberg.OpIsNan, iceberg.OpNotNan, iceberg.OpNEQ, iceberg.OpNotIn, iceberg.OpNotStartsWith:
		return true
	}
	if nulls == rows {
		return false // only NULLs: no comparison holds
	}
	lo, hi, ok := bounds(field.Type, stats)
	if !ok {
		return true
	}
	switch p := p.(type) {
	case iceberg.BoundLiteralPredicate:
		v, ok := value(p.Literal())
		if !ok {
			return true
		}
		return mightMatch(p.Op(), lo, hi, v)
	case iceberg.BoundSetPredicate:
		if p.Op() != iceberg.OpIn {
			return true
		}
		for _, lit := range p.Literals().Members() {
			v, ok := value(lit)
			if !ok || mightMatch(iceberg.OpEQ, lo, hi, v) {
				return true
			}
		}
		return false
	}
	return true
}

// A bound is a column's minimum or maximum, or a literal, in one of three
// comparable forms: int64 (integers, dates, int-backed decimals of the
// column's scale), string (bytes) or decimal128.Num (unscaled, at the
// column's scale: a bound literal has the column's type).
type bound any

func mightMatch(op iceberg.Operation, lo, hi, v bound) bool {
	switch op {
	case iceberg.OpLT:
		return compare(lo, v) < 0
	case iceberg.OpLTEQ:
		return compare(lo, v) <= 0
	case iceberg.OpGT:
		return compare(hi, v) > 0
	case iceberg.OpGTEQ:
		return compare(hi, v) >= 0
	case iceberg.OpEQ:
		return compare(lo, v) <= 0 && compare(hi, v) >= 0
	case iceberg.OpStartsWith:
		p, ok := v.(string)
		l, lok := lo.(string)
		h, hok := hi.(string)
		if !ok || !lok || !hok {
			return true
		}
		// Every value with prefix p lies in [p, p's upper neighbour); the
		// row group might hold one unless its range ends before p or
		// starts past every string with that prefix.
		return strings.Compare(trunc(l, len(p)), p) <= 0 && strings.Compare(trunc(h, len(p)), p) >= 0
	}
	return true
}

func trunc(s string, n int) string { return s[:min(n, len(s))] }

// compare orders two bounds of the same form; a mismatch (which bounds
// and value prevent) orders as equal, which keeps the row group.
func compare(a, b bound) int {
	switch a := a.(type) {
	case int64:
		if b, ok := b.(int64); ok {
			switch {
			case a < b:
				return -1
			case a > b:
				return 1
			}
		}
	case string:
		if b, ok := b.(string); ok {
			return strings.Compare(a, b)
		}
	case decimal128.Num:
		if b, ok := b.(decimal128.Num); ok {
			return a.Cmp(b)
		}
	}
	return 0
}

// value is a literal as a bound, for the types bounds reads.
func value(lit iceberg.Literal) (bound, bool) {
	switch l := lit.(type) {
	case iceberg.Int32Literal:
		return int64(l), true
	case iceberg.Int64Literal:
		return int64(l), true
	case iceberg.DateLiteral:
		return int64(l), true
	case iceberg.TimestampLiteral: // microseconds; row group bounds never read timestamps
		return int64(l), true
	case iceberg.StringLiteral:
		return string(l), true
	case iceberg.DecimalLiteral:
		return l.Val, true
	}
	return nil, false
}

// bounds reads a column chunk's minimum and maximum for the Iceberg types
// whose Parquet statistics order as the values do: integers, dates,
// strings (UTF-8 bytes order as code points) and decimals. Floats (NaN),
// timestamps (units), binary and the rest are not judged.
func bounds(t iceberg.Type, stats metadata.TypedStatistics) (lo, hi bound, ok bool) {
	if !stats.HasMinMax() {
		return nil, nil, false
	}
	// The statistics must order as the type's values: signed for numbers
	// (not a foreign file's unsigned integers), bytewise for strings.
	order := stats.Descr().SortOrder()
	if _, str := t.(iceberg.StringType); str != (order == pqschema.SortUNSIGNED) || (!str && order != pqschema.SortSIGNED) {
		return nil, nil, false
	}
	switch t := t.(type) {
	case iceberg.Int32Type, iceberg.DateType:
		if s, ok := stats.(*metadata.Int32Statistics); ok {
			return int64(s.Min()), int64(s.Max()), true
		}
	case iceberg.Int64Type:
		switch s := stats.(type) {
		case *metadata.Int64Statistics:
			return s.Min(), s.Max(), true
		case *metadata.Int32Statistics: // written before the column was widened from int
			return int64(s.Min()), int64(s.Max()), true
		}
	case iceberg.StringType:
		if s, ok := stats.(*metadata.ByteArrayStatistics); ok && utf8Column(stats.Descr()) {
			return string(s.Min()), string(s.Max()), true
		}
	case iceberg.DecimalType:
		if d, ok := stats.Descr().LogicalType().(interface{ Scale() int32 }); !ok || int(d.Scale()) != t.Scale() {
			return nil, nil, false
		}
		return decimalBounds(stats)
	}
	return nil, nil, false
}

func utf8Column(c *pqschema.Column) bool {
	_, ok := c.LogicalType().(pqschema.StringLogicalType)
	return ok || c.ConvertedType() == pqschema.ConvertedTypes.UTF8
}

// decimalBounds reads a decimal column's bounds as unscaled decimal128
// values: Parquet stores a decimal as INT32, INT64 or big-endian two's
// complement bytes, all of the column's scale.
func decimalBounds(stats metadata.TypedStatistics) (lo, hi bound, ok bool) {
	switch s := stats.(type) {
	case *metadata.Int32Statistics:
		return decimal128.FromI64(int64(s.Min())), decimal128.FromI64(int64(s.Max())), true
	case *metadata.Int64Statistics:
		return decimal128.FromI64(s.Min()), decimal128.FromI64(s.Max()), true
	case *metadata.FixedLenByteArrayStatistics:
		l, lok := bigEndianDecimal(s.Min())
		h, hok := bigEndianDecimal(s.Max())
		return l, h, lok && hok
	case *metadata.ByteArrayStatistics:
		l, lok := bigEndianDecimal(s.Min())
		h, hok := bigEndianDecimal(s.Max())
		return l, h, lok && hok
	}
	return nil, nil, false
}

// bigEndianDecimal decodes big-endian two's complement of at most 16 bytes.
func bigEndianDecimal(b []byte) (decimal128.Num, bool) {
	if len(b) == 0 || len(b) > 16 {
		return decimal128.Num{}, false
	}
	var buf [16]byte
	if b[0]&0x80 != 0 {
		copy(buf[:], bytes.Repeat([]byte{0xff}, 16))
	}
	copy(buf[16-len(b):], b)
	var hi, lo uint64
	for i := range 8 {
		hi = hi<<8 | uint64(buf[i])
		lo = lo<<8 | uint64(buf[8+i])
	}
	return decimal128.New(int64(hi), lo), true
}

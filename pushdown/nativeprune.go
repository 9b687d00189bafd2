package pushdown

import (
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
)

// rowGroupPruner skips the row groups of a native scan whose column
// statistics rule the row filter out, as iceberg-go's reader does for the
// tasks it reads. It judges comparisons of integer, date and decimal
// columns with a literal, and IS [NOT] NULL; anything else might match.
type rowGroupPruner struct {
	filter iceberg.BooleanExpression // bound to the table schema; nil: none
}

func newRowGroupPruner(sc *iceberg.Schema, filter iceberg.BooleanExpression) *rowGroupPruner {
	if sc == nil || filter == nil {
		return &rowGroupPruner{}
	}
	noNot, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return &rowGroupPruner{}
	}
	bound, err := iceberg.BindExpr(sc, noNot, false)
	if err != nil {
		// Binding failed: read every row group; the vector path filters
		// rows itself.
		return &rowGroupPruner{}
	}
	return &rowGroupPruner{filter: bound}
}

// mightMatch says whether a row group may hold rows the filter keeps;
// leaves maps field ids to the file's leaf columns.
func (p *rowGroupPruner) mightMatch(rg *metadata.RowGroupMetaData, leaves map[int]int) bool {
	if p.filter == nil {
		return true
	}
	ok, err := iceberg.VisitExpr(p.filter, statsVisitor{rg: rg, leaves: leaves})
	return err != nil || ok
}

type statsVisitor struct {
	rg     *metadata.RowGroupMetaData
	leaves map[int]int
}

func (statsVisitor) VisitTrue() bool                            { return true }
func (statsVisitor) VisitFalse() bool                           { return false }
func (statsVisitor) VisitNot(bool) bool                         { return true }
func (statsVisitor) VisitAnd(l, r bool) bool                    { return l && r }
func (statsVisitor) VisitOr(l, r bool) bool                     { return l || r }
func (statsVisitor) VisitUnbound(iceberg.UnboundPredicate) bool { return true }

func (v statsVisitor) VisitBound(pred iceberg.BoundPredicate) bool {
	f := pred.Ref().Field()
	leaf, ok := v.leaves[f.ID]
	if !ok {
		return true
	}
	cc, err := v.rg.ColumnChunk(leaf)
	if err != nil {
		return true
	}
	if set, err := cc.StatsSet(); err != nil || !set {
		return true
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		return true
	}
	rows := v.rg.NumRows()
	switch pred.Op() {
	case iceberg.OpIsNull:
		return !st.HasNullCount() || st.NullCount() > 0
	case iceberg.OpNotNull:
		return !st.HasNullCount() || st.NullCount() < rows
	}
	lp, ok := pred.(iceberg.BoundLiteralPredicate)
	if !ok {
		return true
	}
	if st.HasNullCount() && st.NullCount() == rows {
		return false // only NULLs: no comparison holds
	}
	lit, ok := literalInt64(lp.Literal(), f.Type)
	if !ok {
		return true
	}
	lo, hi, ok := statsInt64(st, f.Type)
	if !ok {
		return true
	}
	switch pred.Op() {
	case iceberg.OpLT:
		return lo < lit
	case iceberg.OpLTEQ:
		return lo <= lit
	case iceberg.OpGT:
		return hi > lit
	case iceberg.OpGTEQ:
		return hi >= lit
	case iceberg.OpEQ:
		return lo <= lit && lit <= hi
	}
	return true
}

// literalInt64 is a bound literal as the int64 the column's statistics
// compare with: the value, the day number, or the unscaled decimal.
func literalInt64(l iceberg.Literal, t iceberg.Type) (int64, bool) {
	switch l := l.(type) {
	case iceberg.Int32Literal:
		return int64(l), true
	case iceberg.Int64Literal:
		return int64(l), true
	case iceberg.DateLiteral:
		return int64(l), true
	case iceberg.DecimalLiteral:
		dt, ok := t.(iceberg.DecimalType)
		if !ok || l.Scale != dt.Scale() {
			return 0, false
		}
		v := l.Val
		lo := int64(v.LowBits())
		if v.HighBits() != lo>>63 {
			return 0, false
		}
		return lo, true
	}
	return 0, false
}

// statsInt64 is a column chunk's minimum and maximum as int64s, for the
// physical types the native reader decodes to int64.
func statsInt64(st metadata.TypedStatistics, t iceberg.Type) (lo, hi int64, ok bool) {
	if !st.HasMinMax() {
		return 0, 0, false
	}
	switch t := t.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType:
	case iceberg.DecimalType:
		if t.Precision() > nativeMaxPrecision {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		return int64(s.Min()), int64(s.Max()), true
	case *metadata.Int64Statistics:
		return s.Min(), s.Max(), true
	case *metadata.FixedLenByteArrayStatistics:
		if _, dec := t.(iceberg.DecimalType); !dec || s.Type() != parquet.Types.FixedLenByteArray || len(s.Min()) > 8 || len(s.Max()) > 8 {
			return 0, 0, false
		}
		return bigEndianInt64(s.Min()), bigEndianInt64(s.Max()), true
	}
	return 0, 0, false
}

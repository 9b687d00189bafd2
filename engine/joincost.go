package engine

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/memo"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/stats"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/icesql/icesql/engine/internal/planrules"
)

// go-mysql-server's join planner (memo) estimates every equality join as
// if one side's column were a key of the other's: the join of A and B has
// |A|·|B| / (0.8·max(|A|, |B|)) rows. A join on a column with few values
// then looks as small as a key join, and the planner chose plans that
// multiply: TPC-H Q5 joined customer to supplier on their nation first
// (15,000 × 1,000 / 25 = 600,000 rows, then 72 million through lineitem),
// and ran for minutes where DuckDB takes 80 ms.
//
// joinCoster gives the planner estimates from Iceberg's metadata instead:
// a table's rows from its snapshot summary, and for integer and date
// columns the number of distinct values the data files' bounds allow
// (upper - lower + 1, at most the rows). An equality join keeps
// 1/max(distinct left, distinct right) of the pairs; a filter keeps
// 1/distinct for an equality with a constant, the part of the column's
// range a comparison keeps when the bounds are known, and fixed fractions
// otherwise. Each estimate of a memo group (its rows, and the distinct
// values of the columns its joins and filters narrowed) is kept on the
// group, replacing go-mysql-server's, so that its own costing of lookup
// and merge joins reads the same sizes. Hash and nested-loop joins are
// costed here: build and probe rows for a hash join (its right side is
// built), the product of the sides for a nested loop.
type joinCoster struct {
	base   memo.Coster
	ranges *columnRangeCache
}

func newJoinCoster() *joinCoster {
	return &joinCoster{base: memo.NewDefaultCoster(), ranges: &columnRangeCache{m: map[string]*columnRanges{}}}
}

// EstimateCost implements memo.Coster.
func (c *joinCoster) EstimateCost(ctx *sql.Context, n memo.RelExpr, s sql.StatsProvider) (float64, error) {
	out := c.estimate(ctx, n.Group())
	j, ok := n.(memo.JoinRel)
	if !ok {
		return c.base.EstimateCost(ctx, n, s)
	}
	jp := j.JoinPrivate()
	l := math.Max(1, c.estimate(ctx, jp.Left).rows)
	r := math.Max(1, c.estimate(ctx, jp.Right).rows)
	op := jp.Op
	switch {
	case op.IsHash(), hashedAfterPlanning(ctx, op, jp.Filter, c.estimate(ctx, jp.Left), c.estimate(ctx, jp.Right)):
		return l + 1.5*r + 0.1*out.rows, nil
	case op.IsCross():
		return 2*l*r + 0.1*out.rows, nil
	case op.IsLookup(), op.IsMerge(), op.IsRange(), op.IsLateral(), op.IsFullOuter():
		return c.base.EstimateCost(ctx, n, s)
	}
	// A nested loop reads the right side for each left row; with one row on
	// each side it still costs more than the hash join it could be.
	return l*r + l + r + 0.1*out.rows, nil
}

// hashedAfterPlanning says planrules hashes the nested-loop join op of left
// and right on conds once the planner has chosen it
// (planrules/semijoins.go's hashPartialJoins): a semi join, a NOT EXISTS
// anti join or a left join whose condition holds an equality of the two
// sides beside other conditions. Costed as the nested loop it is planned
// as, NOT EXISTS lost to go-mysql-server's other plan for it, a left join
// keeping the rows whose right side is NULL, which joins every match
// where the anti join stops at the first: `NOT EXISTS (SELECT 1 FROM t1 q
// WHERE q.b = l.b)` over 3,000 rows joined 4.5 million pairs, > 10 s
// (MariaDB: 39 ms).
func hashedAfterPlanning(ctx *sql.Context, op plan.JoinType, conds []sql.Expression, left, right *rowEstimate) bool {
	switch op {
	case plan.JoinTypeSemi, plan.JoinTypeAntiIncludeNulls, plan.JoinTypeLeftOuter:
	default:
		return false
	}
	for _, c := range conds {
		eq, ok := c.(*expression.Equals)
		if !ok {
			continue
		}
		l, r := eq.Left(), eq.Right()
		if left.reads(ctx, r) && right.reads(ctx, l) {
			l, r = r, l
		}
		if left.reads(ctx, l) && right.reads(ctx, r) && planrules.HashableEquality(ctx, l, r) {
			return true
		}
	}
	return false
}

// reads says x reads at least one column, only columns of e's tables, and
// no subquery.
func (e *rowEstimate) reads(ctx *sql.Context, x sql.Expression) bool {
	seen, only := false, true
	transform.InspectExpr(ctx, x, func(ctx *sql.Context, x sql.Expression) bool {
		switch x := x.(type) {
		case *expression.GetField:
			_, in := e.tables[x.TableId()]
			seen, only = true, only && in
		case *plan.Subquery:
			only = false
		}
		return !only
	})
	return seen && only
}

// rowEstimate is what joinCoster knows of a memo group's rows. It stands
// in for go-mysql-server's statistic on the group.
type rowEstimate struct {
	*stats.Statistic
	rows float64
	// distinct holds the columns whose distinct values are known to be
	// fewer than rows: from the files' bounds, or narrowed by a join or a
	// filter.
	distinct map[sql.ColumnId]float64
	// tables are the Iceberg column ranges of the group's tables.
	tables map[sql.TableId]*columnRanges
}

func newRowEstimate(rows float64) *rowEstimate {
	rows = math.Max(rows, 1)
	return &rowEstimate{Statistic: &stats.Statistic{RowCnt: uint64(rows)}, rows: rows,
		distinct: map[sql.ColumnId]float64{}, tables: map[sql.TableId]*columnRanges{}}
}

// ndv is the estimated number of distinct values of column gf.
func (e *rowEstimate) ndv(gf *expression.GetField) float64 {
	d, ok := e.distinct[gf.Id()]
	if !ok {
		d = e.rows
		if r := e.tables[gf.TableId()].of(gf.Name()); r != nil {
			d = r.distinct
		}
	}
	return math.Max(1, math.Min(d, e.rows))
}

// estimate returns g's estimate, computing it (and its children's) once.
func (c *joinCoster) estimate(ctx *sql.Context, g *memo.ExprGroup) *rowEstimate {
	if e, ok := g.RelProps.GetStats().(*rowEstimate); ok {
		return e
	}
	e := c.compute(ctx, g)
	g.RelProps.SetStats(e)
	return e
}

func (c *joinCoster) compute(ctx *sql.Context, g *memo.ExprGroup) *rowEstimate {
	theirs := 100.0
	if s := g.RelProps.GetStats(); s != nil {
		theirs = float64(s.RowCount())
	}
	switch n := g.First.(type) {
	case memo.SourceRel:
		t := icebergTableOf(n.TableIdNode())
		if t == nil {
			e := newRowEstimate(theirs)
			e.tables[n.TableIdNode().Id()] = nil // known to be this group's, without ranges
			return e
		}
		rows, _, _ := t.RowCount(ctx)
		e := newRowEstimate(float64(rows))
		e.tables[n.TableIdNode().Id()] = c.ranges.of(ctx, t)
		return e
	case *memo.Filter:
		child := c.estimate(ctx, n.Child)
		e := child.copyScaled(1)
		for _, f := range n.Filters {
			e.filter(f)
		}
		return e
	case *memo.Project:
		return c.estimate(ctx, n.Child)
	case *memo.Distinct:
		return c.estimate(ctx, n.Child)
	case *memo.Max1Row:
		return newRowEstimate(1)
	case memo.JoinRel:
		jp := n.JoinPrivate()
		return joinEstimate(jp.Op, jp.Filter, c.estimate(ctx, jp.Left), c.estimate(ctx, jp.Right))
	}
	return newRowEstimate(theirs)
}

// icebergTableOf is the Iceberg table a table or its alias reads.
func icebergTableOf(n plan.TableIdNode) *Table {
	if ta, ok := n.(*plan.TableAlias); ok {
		inner, ok := ta.Child.(plan.TableIdNode)
		if !ok {
			return nil
		}
		n = inner
	}
	rt, ok := n.(*plan.ResolvedTable)
	if !ok {
		return nil
	}
	t, _ := unwrapTable(rt.Table)
	return t
}

// copyScaled is a copy of e with rows multiplied by f.
func (e *rowEstimate) copyScaled(f float64) *rowEstimate {
	out := newRowEstimate(e.rows * f)
	for k, v := range e.distinct {
		out.distinct[k] = v
	}
	for k, v := range e.tables {
		out.tables[k] = v
	}
	return out
}

// setRows changes the estimate's rows, keeping the distinct counts at most
// the rows.
func (e *rowEstimate) setRows(rows float64) {
	e.rows = math.Max(rows, 1)
	e.Statistic = &stats.Statistic{RowCnt: uint64(e.rows)}
}

// filter narrows e by the conjunct f.
func (e *rowEstimate) filter(f sql.Expression) {
	sel := e.selectivity(f)
	if eq, ok := f.(*expression.Equals); ok {
		if gf, _, ok := columnAndConstant(eq); ok {
			e.distinct[gf.Id()] = 1
		}
	}
	e.setRows(e.rows * sel)
}

// selectivity is the estimated fraction of e's rows f keeps.
func (e *rowEstimate) selectivity(f sql.Expression) float64 {
	switch f := f.(type) {
	case *expression.And:
		return e.selectivity(f.LeftChild) * e.selectivity(f.RightChild)
	case *expression.Or:
		a, b := e.selectivity(f.LeftChild), e.selectivity(f.RightChild)
		return a + b - a*b
	case *expression.Not:
		return 1 - e.selectivity(f.Child)
	case *expression.Equals:
		if gf, _, ok := columnAndConstant(f); ok {
			if d, ok := e.knownDistinct(gf); ok {
				return 1 / d
			}
			return math.Max(0.1, 1/e.rows)
		}
		if l, r, ok := twoColumns(f); ok {
			return 1 / math.Max(e.ndv(l), e.ndv(r))
		}
	case *expression.InTuple, *expression.HashInTuple:
		b := f.(expression.BinaryExpression)
		gf, ok := b.Left().(*expression.GetField)
		tuple, isTuple := b.Right().(expression.Tuple)
		if ok && isTuple {
			if d, ok := e.knownDistinct(gf); ok {
				return math.Min(1, float64(len(tuple))/d)
			}
			return math.Min(1, 0.1*float64(len(tuple)))
		}
	case *expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.LessThan, *expression.LessThanOrEqual:
		return e.rangeSelectivity(f.(expression.Comparer))
	case *expression.Between:
		lo := e.rangeSelectivity(expression.NewGreaterThanOrEqual(f.Val, f.Lower))
		hi := e.rangeSelectivity(expression.NewLessThanOrEqual(f.Val, f.Upper))
		return math.Max(0.01, lo+hi-1)
	case *expression.Like:
		return 0.1
	case *expression.IsNull:
		return 0.1
	}
	return 0.5
}

// knownDistinct is the distinct values of gf when the bounds or a join
// say, rather than the rows.
func (e *rowEstimate) knownDistinct(gf *expression.GetField) (float64, bool) {
	if _, ok := e.distinct[gf.Id()]; ok {
		return e.ndv(gf), true
	}
	if e.tables[gf.TableId()].of(gf.Name()) != nil {
		return e.ndv(gf), true
	}
	return 0, false
}

// rangeSelectivity is the part of the column's range a comparison with a
// constant keeps, from the files' bounds; a third without them.
func (e *rowEstimate) rangeSelectivity(c expression.Comparer) float64 {
	const unknown = 1.0 / 3
	gf, lit, flipped := columnAndLiteral(c.Left(), c.Right())
	if gf == nil {
		return unknown
	}
	r := e.tables[gf.TableId()].of(gf.Name())
	if r == nil || r.hi <= r.lo {
		return unknown
	}
	v, ok := r.value(lit)
	if !ok {
		return unknown
	}
	below := math.Min(1, math.Max(0, (v-r.lo)/(r.hi-r.lo)))
	keepsBelow := false
	switch c.(type) {
	case *expression.LessThan, *expression.LessThanOrEqual:
		keepsBelow = true
	}
	if flipped {
		keepsBelow = !keepsBelow
	}
	if keepsBelow {
		return math.Max(0.01, below)
	}
	return math.Max(0.01, 1-below)
}

// columnAndConstant says eq compares a column with a constant.
func columnAndConstant(eq *expression.Equals) (*expression.GetField, sql.Expression, bool) {
	gf, lit, _ := columnAndLiteral(eq.Left(), eq.Right())
	return gf, lit, gf != nil
}

// columnAndLiteral finds a column on one side and a literal (or a
// conversion of one) on the other; flipped says the column is on the right.
func columnAndLiteral(l, r sql.Expression) (*expression.GetField, *expression.Literal, bool) {
	if gf, ok := l.(*expression.GetField); ok {
		if lit := constantOf(r); lit != nil {
			return gf, lit, false
		}
	}
	if gf, ok := r.(*expression.GetField); ok {
		if lit := constantOf(l); lit != nil {
			return gf, lit, true
		}
	}
	return nil, nil, false
}

func constantOf(e sql.Expression) *expression.Literal {
	for {
		switch x := e.(type) {
		case *expression.Literal:
			return x
		case *expression.Convert:
			e = x.Child
		default:
			return nil
		}
	}
}

// twoColumns says eq compares two columns.
func twoColumns(eq *expression.Equals) (*expression.GetField, *expression.GetField, bool) {
	l, ok1 := eq.Left().(*expression.GetField)
	r, ok2 := eq.Right().(*expression.GetField)
	return l, r, ok1 && ok2
}

// joinEstimate is the estimate of joining left and right by op on conds.
func joinEstimate(op plan.JoinType, conds []sql.Expression, left, right *rowEstimate) *rowEstimate {
	both := left.copyScaled(1)
	for k, v := range right.distinct {
		both.distinct[k] = v
	}
	for k, v := range right.tables {
		both.tables[k] = v
	}
	both.setRows(left.rows * right.rows)
	// matched is the fraction of left's rows that find a partner, for
	// semi and anti joins.
	matched := 1.0
	for _, c := range conds {
		if l, r, ok := joinedColumns(c, left); ok {
			dl, dr := left.ndv(l), right.ndv(r)
			both.rows *= 1 / math.Max(dl, dr)
			matched *= math.Min(1, dr/dl)
			d := math.Min(dl, dr)
			both.distinct[l.Id()], both.distinct[r.Id()] = d, d
			continue
		}
		if !op.IsPartial() {
			both.rows *= both.selectivity(c)
		}
	}
	both.setRows(both.rows)
	switch {
	case op.IsSemi():
		out := left.copyScaled(matched)
		return out
	case op.IsAnti():
		return left.copyScaled(math.Max(0.1, 1-matched))
	case op.IsLeftOuter():
		if both.rows < left.rows {
			both.setRows(left.rows)
		}
	case op.IsFullOuter():
		both.setRows(math.Max(both.rows, math.Max(left.rows, right.rows)))
	}
	return both
}

// joinedColumns says c is an equality of a column of left with a column
// of the other side, and returns them in that order.
func joinedColumns(c sql.Expression, left *rowEstimate) (*expression.GetField, *expression.GetField, bool) {
	eq, ok := c.(*expression.Equals)
	if !ok {
		return nil, nil, false
	}
	l, r, ok := twoColumns(eq)
	if !ok {
		return nil, nil, false
	}
	_, lIn := left.tables[l.TableId()]
	_, rIn := left.tables[r.TableId()]
	switch {
	case lIn && !rIn:
		return l, r, true
	case rIn && !lIn:
		return r, l, true
	}
	return nil, nil, false
}

// columnRange is what the data files' bounds say of a column.
type columnRange struct {
	lo, hi   float64 // days for dates
	isDate   bool
	distinct float64
}

// value is lit on the range's scale.
func (r *columnRange) value(lit *expression.Literal) (float64, bool) {
	switch v := lit.Value().(type) {
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64:
		if r.isDate {
			return 0, false
		}
		f, _ := toFloat(v)
		return f, true
	case string:
		if !r.isDate {
			return 0, false
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return 0, false
		}
		return float64(t.Unix() / 86400), true
	case time.Time:
		if !r.isDate {
			return 0, false
		}
		return float64(v.Unix() / 86400), true
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	}
	return 0, false
}

// columnRanges are a table snapshot's integer and date column ranges, by
// lower-case column name.
type columnRanges struct {
	cols map[string]*columnRange
}

func (cr *columnRanges) of(name string) *columnRange {
	if cr == nil {
		return nil
	}
	return cr.cols[strings.ToLower(name)]
}

// columnRangeCache keeps the ranges by table snapshot; a snapshot's files
// never change.
type columnRangeCache struct {
	mu sync.Mutex
	m  map[string]*columnRanges
}

const columnRangeCacheSize = 512

func (c *columnRangeCache) of(ctx *sql.Context, t *Table) *columnRanges {
	snap := t.Snapshot()
	if snap == nil {
		return nil
	}
	// A transaction's own files are left out of the cache (the estimate
	// of a table a transaction changed is read again each time).
	cacheable := len(t.staged) == 0 && len(t.changes.removed) == 0 && len(t.changes.deletes) == 0
	key := t.tbl.MetadataLocation() + "#" + strconv.FormatInt(snap.SnapshotID, 10)
	if cacheable {
		c.mu.Lock()
		cr, ok := c.m[key]
		c.mu.Unlock()
		if ok {
			return cr
		}
	}
	cr := readColumnRanges(ctx, t)
	if cacheable {
		c.mu.Lock()
		if len(c.m) >= columnRangeCacheSize {
			clear(c.m)
		}
		c.m[key] = cr
		c.mu.Unlock()
	}
	return cr
}

// readColumnRanges reads the ranges from the manifests of t's scan; nil
// when they cannot say (delete files, or an error).
func readColumnRanges(ctx *sql.Context, t *Table) *columnRanges {
	fb, err := t.FileBounds(ctx)
	if err != nil || fb == nil || len(fb.Files) == 0 {
		return nil
	}
	rows, _, _ := t.RowCount(ctx)
	cr := &columnRanges{cols: map[string]*columnRange{}}
	for _, f := range t.tbl.Schema().Fields() {
		isDate := false
		switch f.Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type:
		case iceberg.DateType:
			isDate = true
		default:
			continue
		}
		lo, okLo := fb.Extreme(t, f.Name, false)
		hi, okHi := fb.Extreme(t, f.Name, true)
		if !okLo || !okHi || lo == nil || hi == nil {
			continue
		}
		l, okL := rangeValue(lo)
		h, okH := rangeValue(hi)
		if !okL || !okH {
			continue
		}
		cr.cols[strings.ToLower(f.Name)] = &columnRange{lo: l, hi: h, isDate: isDate, distinct: math.Min(h-l+1, float64(max(rows, 1)))}
	}
	return cr
}

func rangeValue(v any) (float64, bool) {
	if t, ok := v.(time.Time); ok {
		return float64(t.Unix() / 86400), true
	}
	return toFloat(v)
}

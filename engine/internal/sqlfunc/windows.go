package sqlfunc

import (
	"cmp"
	"io"
	"sort"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// go-mysql-server's window functions that read a frame (the aggregates
// SUM, AVG, COUNT, MIN, MAX ... OVER, FIRST_VALUE and LAST_VALUE) give
// wrong rows in two ways that fixWindows repairs until go-mysql-server does
// (upstream: expression/function/aggregation, window_framer.go
// rangeFramerBase and window_functions.go SumAgg/AvgAgg/LastAgg):
//   - RANGE frames (and the default frame of a window without a frame
//     clause, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) are framed
//     by rangeFramer. go-mysql-server's range framer looks at the first
//     ORDER BY key only, assumes it ascends and takes a NULL key as greater
//     than every value, so SUM(k) OVER (ORDER BY x) over x NULL, NULL, 1.5,
//     1.5, 3 gave the partition's total on every row (MySQL: 45, 45, 75,
//     75, 82), and RANGE BETWEEN 2 PRECEDING AND CURRENT ROW framed the
//     whole partition once a NULL came first; LAST_VALUE without a frame
//     clause ended its frame at the current row, not its last peer;
//   - SUM and AVG over a frame without a non-NULL value are NULL; the
//     window SUM gave 0 (prefix sums count NULL as 0) and AVG NaN.
//
// ROWS frames are go-mysql-server's own, which count rows correctly.
func FixWindows(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		w, ok := n.(*plan.Window)
		if !ok {
			return n, transform.SameTree, nil
		}
		exprs := make([]sql.Expression, len(w.SelectExprs))
		changed := false
		for i, e := range w.SelectExprs {
			exprs[i] = e
			inner, alias := e, (*expression.Alias)(nil)
			if a, ok := e.(*expression.Alias); ok {
				inner, alias = a.Child, a
			}
			fn, ok := inner.(sql.WindowAdaptableExpression)
			if !ok || fn.Window() == nil {
				continue
			}
			var nullWhenEmpty bool
			switch fn.(type) {
			case *aggregation.Sum, *aggregation.Avg:
				nullWhenEmpty = true
			case *sqlval.ExactAgg: // sqlval/exactagg.go: NULL over NULLs already
			case sql.Aggregation, *window.FirstValue, *window.LastValue, *nthValue: // windowvalues.go
			default:
				continue // ranking and offset functions read no frame
			}
			var fixed sql.Expression = windowAggregate{WindowAdaptableExpression: fn, nullWhenEmpty: nullWhenEmpty}
			if alias != nil {
				// A copy keeps the alias's column id, which NewAlias drops.
				renamed := *alias
				renamed.Child = fixed
				fixed = &renamed
			}
			exprs[i], changed = fixed, true
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		out, err := w.WithExpressions(ctx, exprs...)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return out, transform.NewTree, nil
	})
}

// windowAggregate is a window function whose frames and empty results
// follow MySQL (see fixWindows).
type windowAggregate struct {
	sql.WindowAdaptableExpression
	// nullWhenEmpty: the result over a frame holding no non-NULL
	// argument is NULL (SUM, AVG).
	nullWhenEmpty bool
}

var _ sql.WindowAdaptableExpression = windowAggregate{}

func (a windowAggregate) rewrap(e any) windowAggregate {
	return windowAggregate{WindowAdaptableExpression: e.(sql.WindowAdaptableExpression), nullWhenEmpty: a.nullWhenEmpty}
}

func (a windowAggregate) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	e, err := a.WindowAdaptableExpression.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	return a.rewrap(e), nil
}

func (a windowAggregate) WithWindow(ctx *sql.Context, w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return a.rewrap(a.WindowAdaptableExpression.WithWindow(ctx, w))
}

func (a windowAggregate) WithId(id sql.ColumnId) sql.IdExpression {
	return a.rewrap(a.WindowAdaptableExpression.WithId(id))
}

func (a windowAggregate) NewWindowFunction(ctx *sql.Context) (sql.WindowFunction, error) {
	out := &windowFunction{}
	w := a.Window()
	var err error
	if start, end, ok := rangeBounds(w.Frame); ok {
		// Before go-mysql-server's, whose range framers fail with 1105.
		if out.framer, err = newRangeFramer(ctx, w, start, end); err != nil {
			return nil, err
		}
	}
	if out.WindowFunction, err = a.WindowAdaptableExpression.NewWindowFunction(ctx); err != nil {
		return nil, err
	}
	if a.nullWhenEmpty {
		if out.arg, err = transform.Clone(ctx, a.Children()[0]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// windowFunction is go-mysql-server's window function with the frame of
// peersFramer, and NULL over a frame of NULLs when arg is set.
type windowFunction struct {
	sql.WindowFunction
	framer sql.WindowFramer
	arg    sql.Expression
	// start is the partition's first row; nonNull[i] counts the rows
	// start..start+i whose argument is not NULL.
	start   int
	nonNull []int
}

func (f *windowFunction) DefaultFramer() sql.WindowFramer {
	if f.framer != nil {
		return f.framer
	}
	return f.WindowFunction.DefaultFramer()
}

func (f *windowFunction) StartPartition(ctx *sql.Context, interval sql.WindowInterval, buf sql.WindowBuffer) error {
	if f.arg != nil {
		f.start = interval.Start
		f.nonNull = f.nonNull[:0]
		count := 0
		for i := interval.Start; i < interval.End; i++ {
			v, err := f.arg.Eval(ctx, buf[i])
			if err != nil {
				return err
			}
			if v != nil {
				count++
			}
			f.nonNull = append(f.nonNull, count)
		}
	}
	return f.WindowFunction.StartPartition(ctx, interval, buf)
}

func (f *windowFunction) Compute(ctx *sql.Context, interval sql.WindowInterval, buf sql.WindowBuffer) (any, error) {
	if f.arg != nil && f.nonNullIn(interval) == 0 {
		return nil, nil
	}
	return f.WindowFunction.Compute(ctx, interval, buf)
}

// nonNullIn counts the rows of interval whose argument is not NULL.
func (f *windowFunction) nonNullIn(interval sql.WindowInterval) int {
	if interval.End <= interval.Start {
		return 0
	}
	n := f.nonNull[interval.End-f.start-1]
	if interval.Start > f.start {
		n -= f.nonNull[interval.Start-f.start-1]
	}
	return n
}

// boundKind is where a frame bound lies relative to the current row.
type boundKind int

const (
	unboundedPreceding boundKind = iota
	offsetPreceding
	currentRow
	offsetFollowing
	unboundedFollowing
)

// rangeBound is one bound of a RANGE frame; offset is N of N PRECEDING or
// N FOLLOWING (a number, or an INTERVAL over a temporal ORDER BY).
type rangeBound struct {
	kind   boundKind
	offset sql.Expression
}

// rangeBounds reads a RANGE frame's bounds; ok is false for a ROWS frame.
// A window without a frame clause has the frame RANGE BETWEEN UNBOUNDED
// PRECEDING AND CURRENT ROW.
func rangeBounds(frame sql.WindowFrame) (start, end rangeBound, ok bool) {
	if frame == nil {
		return rangeBound{kind: unboundedPreceding}, rangeBound{kind: currentRow}, true
	}
	if !strings.HasPrefix(frame.String(), "RANGE") {
		return rangeBound{}, rangeBound{}, false
	}
	switch {
	case frame.UnboundedPreceding():
		start.kind = unboundedPreceding
	case frame.StartNPreceding() != nil:
		start = rangeBound{kind: offsetPreceding, offset: frame.StartNPreceding()}
	case frame.StartNFollowing() != nil:
		start = rangeBound{kind: offsetFollowing, offset: frame.StartNFollowing()}
	default:
		start.kind = currentRow
	}
	switch {
	case frame.UnboundedFollowing():
		end.kind = unboundedFollowing
	case frame.EndNPreceding() != nil:
		end = rangeBound{kind: offsetPreceding, offset: frame.EndNPreceding()}
	case frame.EndNFollowing() != nil:
		end = rangeBound{kind: offsetFollowing, offset: frame.EndNFollowing()}
	default:
		// RANGE CURRENT ROW, RANGE UNBOUNDED PRECEDING and RANGE N
		// PRECEDING without BETWEEN end with the current row.
		end.kind = currentRow
	}
	return start, end, true
}

// rangeFramer frames a RANGE frame as MySQL does. CURRENT ROW is the
// current row's peers: the rows equal to it on every ORDER BY key (NULLs
// are peers of each other; without ORDER BY every row is). N PRECEDING and
// N FOLLOWING are the rows whose ORDER BY value lies within N of the
// current row's, towards the start or the end of the sort order (so for
// ORDER BY x DESC, 2 PRECEDING reaches up to x + 2); a NULL value lies
// within N of no value, and for a row whose value is NULL such a bound is
// its first or last NULL peer. Rows come sorted by the window's ORDER BY.
type rangeFramer struct {
	orderBy    sql.SortConditions
	start, end rangeBound

	set                bool // a partition's framer, not the prototype
	partStart, partEnd int
	idx                int
	ready              bool
	peerStart, peerEnd []int // per row of the partition, its peer group
	keys               []any // per row, the first ORDER BY value, for offsets
	nonNullStart       int   // the rows whose key is not NULL, when offsets are used
	nonNullEnd         int
	frame              sql.WindowInterval
}

func newRangeFramer(ctx *sql.Context, w *sql.WindowDefinition, start, end rangeBound) (*rangeFramer, error) {
	for _, b := range []rangeBound{start, end} {
		if b.offset == nil {
			continue
		}
		if len(w.OrderBy) != 1 {
			return nil, rangeOrderError()
		}
		if err := checkOffset(w.OrderBy[0].Expr.Type(ctx), b.offset); err != nil {
			return nil, err
		}
	}
	return &rangeFramer{orderBy: w.OrderBy, start: start, end: end}, nil
}

func (f *rangeFramer) NewFramer(interval sql.WindowInterval) (sql.WindowFramer, error) {
	return &rangeFramer{orderBy: f.orderBy, start: f.start, end: f.end, set: true,
		partStart: interval.Start, partEnd: interval.End, idx: interval.Start,
		frame: sql.WindowInterval{Start: interval.Start, End: interval.Start}}, nil
}

func (f *rangeFramer) Next(ctx *sql.Context, buf sql.WindowBuffer) (sql.WindowInterval, error) {
	if !f.set || f.idx >= f.partEnd {
		return sql.WindowInterval{}, io.EOF
	}
	if !f.ready {
		if err := f.prepare(ctx, buf); err != nil {
			return sql.WindowInterval{}, err
		}
		f.ready = true
	}
	start, err := f.bound(ctx, f.start, true)
	if err != nil {
		return sql.WindowInterval{}, err
	}
	end, err := f.bound(ctx, f.end, false)
	if err != nil {
		return sql.WindowInterval{}, err
	}
	if end < start {
		end = start // an empty frame
	}
	f.frame = sql.WindowInterval{Start: start, End: end}
	f.idx++
	return f.frame, nil
}

// prepare finds the peer groups of the partition and, for offset bounds,
// its ORDER BY values.
func (f *rangeFramer) prepare(ctx *sql.Context, buf sql.WindowBuffer) error {
	n := f.partEnd - f.partStart
	f.peerStart, f.peerEnd = make([]int, n), make([]int, n)
	vals := make([][]any, n)
	for i := range n {
		row := make([]any, len(f.orderBy))
		for k, sf := range f.orderBy {
			v, err := sf.Expr.Eval(ctx, buf[f.partStart+i])
			if err != nil {
				return err
			}
			row[k] = v
		}
		vals[i] = row
	}
	groupStart := 0
	for i := range n {
		if i > 0 {
			same, err := f.peers(ctx, vals[i-1], vals[i])
			if err != nil {
				return err
			}
			if !same {
				for j := groupStart; j < i; j++ {
					f.peerEnd[j] = f.partStart + i
				}
				groupStart = i
			}
		}
		f.peerStart[i] = f.partStart + groupStart
	}
	for j := groupStart; j < n; j++ {
		f.peerEnd[j] = f.partEnd
	}
	if f.start.offset == nil && f.end.offset == nil {
		return nil
	}
	f.keys = make([]any, n)
	f.nonNullStart, f.nonNullEnd = f.partEnd, f.partStart
	for i := range n {
		f.keys[i] = vals[i][0]
		if f.keys[i] != nil {
			f.nonNullStart = min(f.nonNullStart, f.partStart+i)
			f.nonNullEnd = f.partStart + i + 1
		}
	}
	return nil
}

// peers says two rows' ORDER BY values are equal on every key.
func (f *rangeFramer) peers(ctx *sql.Context, a, b []any) (bool, error) {
	for k, sf := range f.orderBy {
		if a[k] == nil || b[k] == nil {
			if (a[k] == nil) != (b[k] == nil) {
				return false, nil
			}
			continue
		}
		c, err := sf.Expr.Type(ctx).Compare(ctx, a[k], b[k])
		if err != nil {
			return false, err
		}
		if c != 0 {
			return false, nil
		}
	}
	return true, nil
}

// bound is the frame's first row (isStart) or the row after its last.
func (f *rangeFramer) bound(ctx *sql.Context, b rangeBound, isStart bool) (int, error) {
	i := f.idx - f.partStart
	switch b.kind {
	case unboundedPreceding:
		return f.partStart, nil
	case unboundedFollowing:
		return f.partEnd, nil
	case currentRow:
		if isStart {
			return f.peerStart[i], nil
		}
		return f.peerEnd[i], nil
	}
	if f.keys[i] == nil {
		if isStart {
			return f.peerStart[i], nil
		}
		return f.peerEnd[i], nil
	}
	asc := f.orderBy[0].Order != sql.Descending
	// The target value: towards the start of the sort order (PRECEDING)
	// is smaller when ascending, larger when descending.
	add := (b.kind == offsetFollowing) == asc
	target, err := offsetValue(ctx, f.orderBy[0].Expr.Type(ctx), f.keys[i], b.offset, add)
	if err != nil {
		return 0, err
	}
	// cmpAt orders the key of row j against target in the sort order:
	// negative when it comes before target.
	var cmpErr error
	cmpAt := func(j int) int {
		c, err := compareOffset(ctx, f.orderBy[0].Expr.Type(ctx), f.keys[j-f.partStart], target)
		if err != nil && cmpErr == nil {
			cmpErr = err
		}
		if !asc {
			c = -c
		}
		return c
	}
	lo, hi := f.nonNullStart, f.nonNullEnd
	var at int
	if isStart {
		// the first row not before target
		at = lo + sort.Search(hi-lo, func(k int) bool { return cmpAt(lo+k) >= 0 })
	} else {
		// the first row after target
		at = lo + sort.Search(hi-lo, func(k int) bool { return cmpAt(lo+k) > 0 })
	}
	return at, cmpErr
}

func (f *rangeFramer) FirstIdx() int { return f.frame.Start }

func (f *rangeFramer) LastIdx() int { return f.frame.End }

func (f *rangeFramer) Interval() (sql.WindowInterval, error) {
	if !f.set {
		return sql.WindowInterval{}, aggregation.ErrPartitionNotSet
	}
	return f.frame, nil
}

func rangeOrderError() error {
	return mysqlerr.New(mysqlerr.ErWindowRangeFrameOrderType,
		"Window with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type")
}

// checkOffset refuses a RANGE offset that cannot measure an ORDER BY of
// type t, as MySQL does.
func checkOffset(t sql.Type, offset sql.Expression) error {
	_, interval := offset.(*expression.Interval)
	switch {
	case types.IsTime(t) && !interval:
		return mysqlerr.New(mysqlerr.ErWindowRangeFrameTemporalType,
			"Window with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed.")
	case types.IsNumber(t) && interval:
		return mysqlerr.New(mysqlerr.ErWindowRangeFrameNumericType,
			"Window with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed.")
	case !types.IsTime(t) && !types.IsNumber(t):
		return rangeOrderError()
	}
	return nil
}

// offsetValue is v plus (add) or minus the offset of a RANGE bound that
// checkOffset accepted: integers and decimals as decimals, exactly (a
// bound beyond the BIGINT range neither wraps nor fails: README, "Where
// MySQL and Iceberg semantics differ"), floats as doubles, temporal values
// by their INTERVAL.
func offsetValue(ctx *sql.Context, t sql.Type, v any, offset sql.Expression, add bool) (any, error) {
	if types.IsTime(t) {
		op := "-"
		if add {
			op = "+"
		}
		return expression.NewArithmetic(expression.NewLiteral(v, t), offset, op).Eval(ctx, nil)
	}
	n, err := offset.Eval(ctx, nil)
	if err != nil {
		return nil, err
	}
	if types.IsFloat(t) {
		fv, _, err := types.Float64.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		fn, _, err := types.Float64.Convert(ctx, n)
		if err != nil {
			return nil, err
		}
		if add {
			return fv.(float64) + fn.(float64), nil
		}
		return fv.(float64) - fn.(float64), nil
	}
	dv, err := sqlval.ToDecimal(v)
	if err != nil {
		return nil, err
	}
	dn, err := sqlval.ToDecimal(n)
	if err != nil {
		return nil, err
	}
	out := new(apd.Decimal)
	if add {
		_, err = sqlval.ExactCtx.Add(out, dv, dn)
	} else {
		_, err = sqlval.ExactCtx.Sub(out, dv, dn)
	}
	return out, err
}

// compareOffset compares an ORDER BY value of type t with a target
// offsetValue computed.
func compareOffset(ctx *sql.Context, t sql.Type, v, target any) (int, error) {
	switch target := target.(type) {
	case *apd.Decimal:
		dv, err := sqlval.ToDecimal(v)
		if err != nil {
			return 0, err
		}
		return dv.Cmp(target), nil
	case float64:
		fv, _, err := types.Float64.Convert(ctx, v)
		if err != nil {
			return 0, err
		}
		return cmp.Compare(fv.(float64), target), nil
	}
	return t.Compare(ctx, v, target)
}

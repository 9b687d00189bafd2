package engine

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// go-mysql-server's aggregate window functions (SUM, AVG, COUNT, MIN, MAX
// ... OVER) give wrong rows in two ways that fixWindows repairs until
// go-mysql-server does (upstream: expression/function/aggregation,
// window_framer.go rangeFramerBase and window_functions.go SumAgg/AvgAgg):
//   - the frame of a window with ORDER BY and no frame clause, and of an
//     explicit RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, must end
//     with the current row's last peer (rows equal on every ORDER BY key).
//     go-mysql-server's range framer looks at the first key only, assumes
//     it ascends, and takes a NULL key as greater than every value, so
//     SUM(k) OVER (ORDER BY x) over x NULL, NULL, 1.5, 1.5, 3 gave the
//     partition's total on every row (MySQL: 45, 45, 75, 75, 82);
//   - SUM and AVG over a frame without a non-NULL value are NULL; the
//     window SUM gave 0 (prefix sums count NULL as 0) and AVG NaN.
func fixWindows(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
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
			agg, ok := inner.(sql.Aggregation)
			if !ok || agg.Window() == nil {
				continue
			}
			var nullWhenEmpty bool
			switch agg.(type) {
			case *aggregation.Sum, *aggregation.Avg:
				nullWhenEmpty = true
			case *aggregation.Count, *aggregation.Min, *aggregation.Max:
			case *exactAgg: // exactagg.go: NULL over NULLs already
			default:
				continue
			}
			var fixed sql.Expression = windowAggregate{Aggregation: agg, nullWhenEmpty: nullWhenEmpty}
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

// windowAggregate is an aggregate window function whose frames and empty
// results follow MySQL (see fixWindows).
type windowAggregate struct {
	sql.Aggregation
	// nullWhenEmpty: the result over a frame holding no non-NULL
	// argument is NULL (SUM, AVG).
	nullWhenEmpty bool
}

var _ sql.Aggregation = windowAggregate{}

func (a windowAggregate) rewrap(e any) windowAggregate {
	return windowAggregate{Aggregation: e.(sql.Aggregation), nullWhenEmpty: a.nullWhenEmpty}
}

func (a windowAggregate) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	e, err := a.Aggregation.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	return a.rewrap(e), nil
}

func (a windowAggregate) WithWindow(ctx *sql.Context, w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return a.rewrap(a.Aggregation.WithWindow(ctx, w))
}

func (a windowAggregate) WithId(id sql.ColumnId) sql.IdExpression {
	return a.rewrap(a.Aggregation.WithId(id))
}

func (a windowAggregate) NewWindowFunction(ctx *sql.Context) (sql.WindowFunction, error) {
	fn, err := a.Aggregation.NewWindowFunction(ctx)
	if err != nil {
		return nil, err
	}
	out := &windowFunction{WindowFunction: fn}
	if w := a.Window(); len(w.OrderBy) > 0 {
		switch w.Frame.(type) {
		case nil, *plan.RangeUnboundedPrecedingToCurrentRowFrame:
			out.framer = &peersFramer{orderBy: w.OrderBy.ToExpressions()}
		}
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

// peersFramer frames RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW:
// from the partition's first row to the current row's last peer, the rows
// equal to it on every ORDER BY key (NULLs are peers of each other), in
// the order the window sorted them.
type peersFramer struct {
	orderBy []sql.Expression
	peers   sql.WindowFramer
	start   int
}

func (f *peersFramer) NewFramer(interval sql.WindowInterval) (sql.WindowFramer, error) {
	peers, err := aggregation.NewPeerGroupFramer(f.orderBy).NewFramer(interval)
	if err != nil {
		return nil, err
	}
	return &peersFramer{orderBy: f.orderBy, peers: peers, start: interval.Start}, nil
}

func (f *peersFramer) Next(ctx *sql.Context, buf sql.WindowBuffer) (sql.WindowInterval, error) {
	if f.peers == nil { // the prototype: no partition yet
		return sql.WindowInterval{}, io.EOF
	}
	group, err := f.peers.Next(ctx, buf)
	if err != nil {
		return sql.WindowInterval{}, err
	}
	return sql.WindowInterval{Start: f.start, End: group.End}, nil
}

func (f *peersFramer) FirstIdx() int { return f.start }

func (f *peersFramer) LastIdx() int {
	if f.peers == nil {
		return f.start
	}
	return f.peers.LastIdx()
}

func (f *peersFramer) Interval() (sql.WindowInterval, error) {
	if f.peers == nil {
		return sql.WindowInterval{}, aggregation.ErrPartitionNotSet
	}
	group, err := f.peers.Interval()
	if err != nil {
		return sql.WindowInterval{}, err
	}
	return sql.WindowInterval{Start: f.start, End: group.End}, nil
}

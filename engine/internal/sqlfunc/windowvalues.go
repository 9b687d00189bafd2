package sqlfunc

import (
	"fmt"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// NTH_VALUE(expr, N) and CUME_DIST(), MySQL window functions go-mysql-server
// lacks (ERROR 1105 "function not found").
//
//   - NTH_VALUE is expr on the Nth row of the frame, NULL when the frame has
//     fewer rows. Its frame is MySQL's: the frame clause, or without one
//     the rows up to the current row's last peer (the whole partition
//     without ORDER BY); fixWindows (windows.go) frames RANGE frames. N
//     must be a positive integer constant, else ERROR 1210. (FROM FIRST is
//     the default and only form: the parser takes neither FROM LAST nor
//     IGNORE NULLS.)
//   - CUME_DIST is the share of the partition's rows that come before the
//     current row or are its peers; it ignores the frame.
//
// go-mysql-server decides by name which functions take OVER
// (planbuilder.IsWindowFunc, a package variable), so the two names are
// added to it once per process.

var addWindowValueFuncs sync.Once

// RegisterWindowValueFuncs makes the planner build nth_value and cume_dist
// with their OVER clause.
func RegisterWindowValueFuncs() {
	addWindowValueFuncs.Do(func() {
		builtin := planbuilder.IsWindowFunc
		planbuilder.IsWindowFunc = func(ctx *sql.Context, name string) (bool, error) {
			if name == "nth_value" || name == "cume_dist" {
				return true, nil
			}
			return builtin(ctx, name)
		}
	})
}

var (
	NthValueFunc = sql.Function2{Name: "nth_value", Fn: func(_ *sql.Context, e, n sql.Expression) sql.Expression {
		return &nthValue{arg: e, n: n}
	}}
	CumeDistFunc = sql.Function0{Name: "cume_dist", Fn: func(*sql.Context) sql.Expression { return &cumeDist{} }}
)

// windowValue is what NTH_VALUE and CUME_DIST share as expressions: a
// window and a column id, and evaluation only by a Window node.
type windowValue struct {
	window *sql.WindowDefinition
	id     sql.ColumnId
}

func (w *windowValue) Window() *sql.WindowDefinition { return w.window }
func (w *windowValue) Id() sql.ColumnId              { return w.id }

func (w *windowValue) Resolved() bool {
	if w.window == nil {
		return true
	}
	return expression.ExpressionsResolved(w.window.ToExpressions()...)
}

func (w *windowValue) describe(call string) string {
	if w.window == nil {
		return call
	}
	return call + " " + w.window.String()
}

// nthValue is NTH_VALUE(arg, n) OVER (window).
type nthValue struct {
	windowValue
	arg, n sql.Expression
}

var _ sql.WindowAdaptableExpression = (*nthValue)(nil)
var _ sql.FunctionExpression = (*nthValue)(nil)

func (v *nthValue) FunctionName() string { return "nth_value" }
func (v *nthValue) Description() string {
	return "returns the value of the argument on the Nth row of the window frame."
}
func (v *nthValue) String() string {
	return v.describe(fmt.Sprintf("nth_value(%s, %s)", v.arg, v.n))
}
func (v *nthValue) Type(ctx *sql.Context) sql.Type { return v.arg.Type(ctx) }
func (v *nthValue) IsNullable(*sql.Context) bool   { return true }
func (v *nthValue) Resolved() bool {
	return v.arg.Resolved() && v.n.Resolved() && v.windowValue.Resolved()
}
func (v *nthValue) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, sql.ErrWindowUnsupported.New(v.FunctionName())
}

func (v *nthValue) Children() []sql.Expression {
	var out []sql.Expression
	if v.window != nil {
		out = v.window.ToExpressions()
	}
	return append(out, v.arg, v.n)
}

func (v *nthValue) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(v.Children()) {
		return nil, sql.ErrInvalidChildrenNumber.New(v, len(children), len(v.Children()))
	}
	nv := *v
	k := len(children) - 2
	nv.arg, nv.n = children[k], children[k+1]
	if v.window != nil {
		w, err := v.window.FromExpressions(ctx, children[:k])
		if err != nil {
			return nil, err
		}
		nv.window = w
	}
	return &nv, nil
}

func (v *nthValue) WithWindow(_ *sql.Context, w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	nv := *v
	nv.window = w
	return &nv
}

func (v *nthValue) WithId(id sql.ColumnId) sql.IdExpression {
	nv := *v
	nv.id = id
	return &nv
}

func (v *nthValue) NewWindowFunction(ctx *sql.Context) (sql.WindowFunction, error) {
	n, err := v.position(ctx)
	if err != nil {
		return nil, err
	}
	f := &nthValueFrames{arg: v.arg, n: n}
	if v.window != nil && v.window.Frame != nil {
		if f.framer, err = v.window.Frame.NewFramer(v.window); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// position is N: a positive integer constant.
func (v *nthValue) position(ctx *sql.Context) (int, error) {
	bad := mysqlerr.New(mysqlerr.ErWrongArguments, "Incorrect arguments to nth_value")
	if !isConstant(v.n) || !types.IsInteger(v.n.Type(ctx)) {
		return 0, bad
	}
	n, err := v.n.Eval(ctx, nil)
	if err != nil || n == nil {
		return 0, bad
	}
	i, _, err := types.Int64.Convert(ctx, n)
	if err != nil || i.(int64) < 1 {
		return 0, bad
	}
	return int(i.(int64)), nil
}

// nthValueFunction computes NTH_VALUE over each frame.
type nthValueFrames struct {
	arg    sql.Expression
	n      int
	framer sql.WindowFramer
}

func (f *nthValueFrames) Dispose(ctx *sql.Context) { expression.Dispose(ctx, f.arg) }

// DefaultFramer is the frame clause's, or (replaced by fixWindows' range
// framer when the window has no frame clause) the rows up to the current
// one.
func (f *nthValueFrames) DefaultFramer() sql.WindowFramer {
	if f.framer != nil {
		return f.framer
	}
	return aggregation.NewUnboundedPrecedingToCurrentRowFramer()
}

func (f *nthValueFrames) StartPartition(*sql.Context, sql.WindowInterval, sql.WindowBuffer) error {
	return nil
}

func (f *nthValueFrames) Compute(ctx *sql.Context, interval sql.WindowInterval, buf sql.WindowBuffer) (any, error) {
	i := interval.Start + f.n - 1
	if i >= interval.End {
		return nil, nil
	}
	return f.arg.Eval(ctx, buf[i])
}

// cumeDist is CUME_DIST() OVER (window).
type cumeDist struct {
	windowValue
}

var _ sql.WindowAdaptableExpression = (*cumeDist)(nil)
var _ sql.FunctionExpression = (*cumeDist)(nil)

func (c *cumeDist) FunctionName() string { return "cume_dist" }
func (c *cumeDist) Description() string {
	return "returns the cumulative distribution of a value in its partition."
}
func (c *cumeDist) String() string               { return c.describe("cume_dist()") }
func (c *cumeDist) Type(*sql.Context) sql.Type   { return types.Float64 }
func (c *cumeDist) IsNullable(*sql.Context) bool { return false }
func (c *cumeDist) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, sql.ErrWindowUnsupported.New(c.FunctionName())
}

func (c *cumeDist) Children() []sql.Expression {
	if c.window == nil {
		return nil
	}
	return c.window.ToExpressions()
}

func (c *cumeDist) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if c.window == nil {
		if len(children) != 0 {
			return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 0)
		}
		return c, nil
	}
	w, err := c.window.FromExpressions(ctx, children)
	if err != nil {
		return nil, err
	}
	nc := *c
	nc.window = w
	return &nc, nil
}

func (c *cumeDist) WithWindow(_ *sql.Context, w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	nc := *c
	nc.window = w
	return &nc
}

func (c *cumeDist) WithId(id sql.ColumnId) sql.IdExpression {
	nc := *c
	nc.id = id
	return &nc
}

func (c *cumeDist) NewWindowFunction(*sql.Context) (sql.WindowFunction, error) {
	var orderBy []sql.Expression
	if c.window != nil {
		orderBy = c.window.OrderBy.ToExpressions()
	}
	return &cumeDistFrames{orderBy: orderBy}, nil
}

// cumeDistFunction computes CUME_DIST over each row's peers.
type cumeDistFrames struct {
	orderBy          []sql.Expression
	partStart, count int
}

func (f *cumeDistFrames) Dispose(*sql.Context) {}

// DefaultFramer frames each row's peers, whatever the frame clause.
func (f *cumeDistFrames) DefaultFramer() sql.WindowFramer {
	return aggregation.NewPeerGroupFramer(f.orderBy)
}

func (f *cumeDistFrames) StartPartition(_ *sql.Context, interval sql.WindowInterval, _ sql.WindowBuffer) error {
	f.partStart, f.count = interval.Start, interval.End-interval.Start
	return nil
}

func (f *cumeDistFrames) Compute(_ *sql.Context, peers sql.WindowInterval, _ sql.WindowBuffer) (any, error) {
	if f.count == 0 {
		return nil, nil
	}
	return float64(peers.End-f.partStart) / float64(f.count), nil
}

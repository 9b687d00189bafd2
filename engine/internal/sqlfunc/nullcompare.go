package sqlfunc

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// go-mysql-server's comparisons (=, <, >, <=, >=) report a NULL operand as
// an error, built with a stack trace, which Eval then turns into NULL: in a
// correlated range subquery over tables with NULLs that was most of the
// CPU time. On the row path, the comparisons of a WHERE clause, a HAVING
// clause and a join condition check for NULL first: both sides are
// evaluated once, in go-mysql-server's order (so an error of either side
// still wins), a NULL answers NULL, and otherwise go-mysql-server's own
// comparison runs on the two values, so conversions, collations and tuples
// are unchanged. <=> never errs on NULL and is left alone, as are merge
// joins and range-heap joins, which take their comparisons apart.

// NullFirstBuilder is the last of icesql's exec builders: it builds
// Filters, Havings and joins whose conditions compare, with each
// comparison checking for NULL first, and leaves every other node to
// go-mysql-server.
type NullFirstBuilder struct {
	Base sql.NodeExecBuilder // go-mysql-server's builder
}

func (b NullFirstBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	// A Filter is built here even with nothing to change: the builders
	// before this one hand on Filters of their own making (vecexec/vecfilter.go).
	switch n := n.(type) {
	case *plan.Filter:
		return b.filter(ctx, n.Expression, n.Child, row)
	case *plan.Having:
		return b.filter(ctx, n.Cond, n.Child, row)
	case *plan.JoinNode:
		if n.Filter == nil || n.Op.IsMerge() || n.Op.IsRange() {
			return nil, nil
		}
		cond, ok, err := NullFirstCondition(ctx, n.Filter)
		if !ok || err != nil {
			return nil, err
		}
		// go-mysql-server builds the join; its condition comes back here
		// with nothing left to change.
		return b.Base.Build(ctx, n.WithFilter(cond), row)
	}
	return nil, nil
}

func (b NullFirstBuilder) filter(ctx *sql.Context, cond sql.Expression, child sql.Node, row sql.Row) (sql.RowIter, error) {
	if c, ok, err := NullFirstCondition(ctx, cond); err != nil {
		return nil, err
	} else if ok {
		cond = c
	}
	iter, err := b.Base.Build(ctx, child, row)
	if err != nil {
		return nil, err
	}
	return plan.NewFilterIter(cond, iter), nil
}

// NullFirstCondition is cond with each comparison checking for NULL first;
// ok is false when cond has none left to change.
func NullFirstCondition(ctx *sql.Context, cond sql.Expression) (sql.Expression, bool, error) {
	out, same, err := transform.Expr(ctx, cond, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Equals, *expression.LessThan, *expression.GreaterThan,
			*expression.LessThanOrEqual, *expression.GreaterThanOrEqual:
			n, err := NewNullFirst(ctx, e.(expression.Comparer))
			if err != nil {
				return nil, transform.SameTree, err
			}
			return n, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
	if err != nil || same == transform.SameTree {
		return nil, false, err
	}
	return out, true, nil
}

// nullFirst is a comparison that answers NULL for a NULL operand without
// asking go-mysql-server. One is made for each iterator built, and holds
// the pair of values it compares: an iterator evaluates its condition on
// one goroutine, one row at a time.
type nullFirst struct {
	cmp   expression.Comparer // the comparison as planned
	inner sql.Expression      // the same comparison of the two operands
	pair  *[2]any             // the operands' values, during inner's Eval
}

var (
	_ sql.Expression         = (*nullFirst)(nil)
	_ sql.CollationCoercible = (*nullFirst)(nil)
)

func NewNullFirst(ctx *sql.Context, cmp expression.Comparer) (*nullFirst, error) {
	// WithChildren makes the comparison anew, of the same kind, over the
	// operands; it leaves cmp's own children as they are.
	inner, err := cmp.WithChildren(ctx, &operand{side: cmp.Left(), i: 0}, &operand{side: cmp.Right(), i: 1})
	if err != nil {
		return nil, err
	}
	return &nullFirst{cmp: cmp, inner: inner, pair: new([2]any)}, nil
}

func (n *nullFirst) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, err := n.cmp.Left().Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	r, err := n.cmp.Right().Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if l == nil || r == nil {
		return nil, nil
	}
	n.pair[0], n.pair[1] = l, r
	v, err := n.inner.Eval(ctx, n.pair[:])
	n.pair[0], n.pair[1] = nil, nil
	return v, err
}

func (n *nullFirst) Resolved() bool                      { return n.cmp.Resolved() }
func (n *nullFirst) String() string                      { return n.cmp.String() }
func (n *nullFirst) Type(ctx *sql.Context) sql.Type      { return n.cmp.Type(ctx) }
func (n *nullFirst) IsNullable(ctx *sql.Context) bool    { return n.cmp.IsNullable(ctx) }
func (n *nullFirst) Children() []sql.Expression          { return n.cmp.Children() }
func (n *nullFirst) DebugString(ctx *sql.Context) string { return sql.DebugString(ctx, n.cmp) }

func (n *nullFirst) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, n.cmp)
}

func (n *nullFirst) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	c, err := n.cmp.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	return NewNullFirst(ctx, c.(expression.Comparer))
}

// operand is one side of a nullFirst comparison: its value is the pair's
// i-th, and it answers its type and collation as the side does, which is
// what go-mysql-server's comparison asks of it.
type operand struct {
	side sql.Expression
	i    int
}

var (
	_ sql.Expression         = (*operand)(nil)
	_ sql.CollationCoercible = (*operand)(nil)
)

func (o *operand) Eval(_ *sql.Context, row sql.Row) (any, error) { return row[o.i], nil }
func (o *operand) Resolved() bool                                { return true }
func (o *operand) String() string                                { return o.side.String() }
func (o *operand) Type(ctx *sql.Context) sql.Type                { return o.side.Type(ctx) }
func (o *operand) IsNullable(ctx *sql.Context) bool              { return o.side.IsNullable(ctx) }
func (o *operand) Children() []sql.Expression                    { return nil }

func (o *operand) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, o.side)
}

func (o *operand) WithChildren(_ *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(o, len(children), 0)
	}
	return o, nil
}

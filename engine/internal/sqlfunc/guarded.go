package sqlfunc

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
)

// guardCheck looks at a function's evaluated arguments before the function
// runs: it answers NULL (null), fails (err), or lets it run.
type guardCheck func(ctx *sql.Context, vals []any) (null bool, err error)

// guarded is a go-mysql-server function that runs only once check allowed
// its arguments. It evaluates the arguments once, checks them, and hands
// the values to the function as a row of its own (packetlimit.go bounds
// result sizes this way, regexguard.go search times).
type guarded struct {
	args  []sql.Expression // the function's own arguments
	inner sql.Expression   // the function over argRefs
	check guardCheck
}

var _ sql.FunctionExpression = (*guarded)(nil)
var _ sql.CollationCoercible = (*guarded)(nil)

// newGuarded wraps f, a function over its arguments, with check.
// Literal arguments stay as they are, so that the function can still
// prepare once what depends only on them (a regular expression's
// compilation, for one).
func newGuarded(ctx *sql.Context, f sql.Expression, check guardCheck) (sql.Expression, error) {
	args := f.Children()
	refs := make([]sql.Expression, len(args))
	for i, a := range args {
		if _, ok := a.(*expression.Literal); ok {
			refs[i] = a
		} else {
			// A field of the row of evaluated arguments: go-mysql-server's
			// functions take what is no field reference for a constant,
			// and keep its first result (REGEXP_LIKE does).
			refs[i] = expression.NewGetField(i, a.Type(ctx), a.String(), a.IsNullable(ctx))
		}
	}
	inner, err := f.WithChildren(ctx, refs...)
	if err != nil {
		return nil, err
	}
	return &guarded{args: args, inner: inner, check: check}, nil
}

func (g *guarded) FunctionName() string {
	if f, ok := g.inner.(sql.FunctionExpression); ok {
		return f.FunctionName()
	}
	return g.inner.String()
}
func (g *guarded) Description() string {
	if f, ok := g.inner.(sql.FunctionExpression); ok {
		return f.Description()
	}
	return g.FunctionName()
}
func (g *guarded) Resolved() bool {
	for _, a := range g.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (g *guarded) String() string                   { return g.inner.String() }
func (g *guarded) Type(ctx *sql.Context) sql.Type   { return g.inner.Type(ctx) }
func (g *guarded) IsNullable(ctx *sql.Context) bool { return true }
func (g *guarded) Children() []sql.Expression       { return g.args }
func (g *guarded) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(g.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(g, len(children), len(g.args))
	}
	f, err := g.inner.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	return newGuarded(ctx, f, g.check)
}
func (g *guarded) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, g.inner)
}

func (g *guarded) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	vals := make(sql.Row, len(g.args))
	for i, a := range g.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	null, err := g.check(ctx, vals)
	if null || err != nil {
		return nil, err
	}
	return g.inner.Eval(ctx, vals)
}

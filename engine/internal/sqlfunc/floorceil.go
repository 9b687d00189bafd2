package sqlfunc

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// go-mysql-server's FLOOR and CEIL of a DECIMAL write their result into the
// argument's own value (sql.DecimalCtx.Floor(num, num)), which is the row's
// when the argument is a column: `SELECT FLOOR(m), CAST(m AS CHAR)` showed
// '1' for 1.50, and `WHERE FLOOR(m) = 1 OR CAST(m AS CHAR) = '3.00'` lost
// the row of 3.00. DecimalArgCopiedFunction hands them a copy.

// DecimalArgCopiedFunction is go-mysql-server's built-in one-argument
// function name, given a copy of a DECIMAL argument's value.
func DecimalArgCopiedFunction(name string) sql.Function {
	builtin := builtinFunction(name)
	return sql.Function1{Name: name, Fn: func(ctx *sql.Context, e sql.Expression) sql.Expression {
		if !types.IsDecimal(e.Type(ctx)) {
			f, err := builtin.NewInstance(ctx, []sql.Expression{e})
			if err != nil {
				panic(err) // a function of one argument, given one
			}
			return f
		}
		f, err := builtin.NewInstance(ctx, []sql.Expression{&decimalCopy{UnaryExpressionStub: expression.UnaryExpressionStub{Child: e}}})
		if err != nil {
			panic(err) // a function of one argument, given one
		}
		return f
	}}
}

// decimalCopy is its child, a DECIMAL value copied.
type decimalCopy struct {
	expression.UnaryExpressionStub
}

func (d *decimalCopy) Type(ctx *sql.Context) sql.Type { return d.Child.Type(ctx) }
func (d *decimalCopy) String() string                 { return d.Child.String() }

func (d *decimalCopy) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if dec, ok := v.(*apd.Decimal); ok && dec != nil {
		return new(apd.Decimal).Set(dec), err
	}
	return v, err
}

func (d *decimalCopy) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &decimalCopy{UnaryExpressionStub: expression.UnaryExpressionStub{Child: children[0]}}, nil
}

// CollationCoercibility implements sql.CollationCoercible: the child's.
func (d *decimalCopy) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, d.Child)
}

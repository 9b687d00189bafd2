package sqlval

import (
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// go-mysql-server keeps DATE '1995-03-15' as the string '1995-03-15', and a
// comparison of a date column with a string converts both sides to
// DATETIME(6) for every row: parsing the same literal again each time was a
// third of TPC-H Q3's time. foldDateLiterals converts such a literal once,
// exactly as the comparison would (comparison.go castLeftAndRight), and
// leaves any literal whose conversion fails or warns as it was, so that
// the row path still reports it per row.

// FoldDateLiterals returns e with the string literals compared with a
// date or time value replaced by their DATETIME value.
func FoldDateLiterals(ctx *sql.Context, e sql.Expression) (sql.Expression, bool, error) {
	out, same, err := transform.Expr(ctx, e, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		switch c := e.(type) {
		case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual:
			kids := c.Children()
			// Not l == kids[0]: a row tuple is a slice, which == panics on.
			l, lf := foldAgainst(ctx, kids[0], kids[1])
			r, rf := foldAgainst(ctx, kids[1], kids[0])
			if !lf && !rf {
				return e, transform.SameTree, nil
			}
			ne, err := c.WithChildren(ctx, l, r)
			return ne, transform.NewTree, err
		case *expression.Between:
			lo, lf := foldAgainst(ctx, c.Lower, c.Val)
			hi, hf := foldAgainst(ctx, c.Upper, c.Val)
			if !lf && !hf {
				return e, transform.SameTree, nil
			}
			return expression.NewBetween(c.Val, lo, hi), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
	return out, same == transform.NewTree, err
}

// datetime6 is the type comparisons convert date and time values to.
var datetime6 = types.MustCreateDatetimeType(sqltypes.Datetime, types.MaxDatetimePrecision)

// foldAgainst is e, a string literal, as the DATETIME value a comparison
// with other (a date or time value) makes of it, and true; else e itself.
func foldAgainst(ctx *sql.Context, e, other sql.Expression) (sql.Expression, bool) {
	lit, ok := e.(*expression.Literal)
	if !ok || !types.IsTime(other.Type(ctx)) || !types.IsText(lit.Type(ctx)) {
		return e, false
	}
	s, ok := lit.Val.(string)
	if !ok {
		return e, false
	}
	v, _, err := datetime6.Convert(ctx, s)
	if err != nil {
		return e, false
	}
	t, ok := v.(time.Time)
	if !ok {
		return e, false
	}
	// Against a DATE, a midnight literal as a DATE compares as the same
	// type does, without converting the column's value for each row.
	if types.IsDateType(other.Type(ctx)) && t.Equal(t.Truncate(24*time.Hour)) {
		return expression.NewLiteral(t, types.Date), true
	}
	return expression.NewLiteral(t, datetime6), true
}

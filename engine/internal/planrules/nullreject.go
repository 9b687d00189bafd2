package planrules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// rejectsNulls says a WHERE conjunct is never true for a row whose columns
// of the tables ids are all NULL (the row an outer join pads): then the
// join may as well be an inner one. It holds for what is NULL on such a
// row (nullOnPadding), for an AND one of whose sides rejects, an OR both of
// whose sides reject, an IN subquery whose compared operand is NULL
// (NULL IN an empty subquery is FALSE, still not true), IS NOT NULL and
// <=> a constant that is not NULL of what is NULL. Anything it does not
// know (IS NULL, <=> NULL, COALESCE, IF, CASE, other functions) may hold
// for NULLs and is not trusted.
func rejectsNulls(ctx *sql.Context, e sql.Expression, ids map[sql.TableId]bool) bool {
	switch e := e.(type) {
	case *expression.And:
		return rejectsNulls(ctx, e.LeftChild, ids) || rejectsNulls(ctx, e.RightChild, ids)
	case *expression.Or:
		return rejectsNulls(ctx, e.LeftChild, ids) && rejectsNulls(ctx, e.RightChild, ids)
	case *plan.InSubquery:
		return nullOnPadding(ctx, e.Left(), ids)
	case *expression.Not:
		// IS NOT NULL: FALSE for a NULL.
		if isNull, ok := e.Child.(*expression.IsNull); ok {
			return nullOnPadding(ctx, isNull.Child, ids)
		}
	case *expression.NullSafeEquals:
		// <=> a constant that is not NULL: FALSE for a NULL.
		l, r := e.Left(), e.Right()
		return nullOnPadding(ctx, l, ids) && notNullConstant(ctx, r) || nullOnPadding(ctx, r, ids) && notNullConstant(ctx, l)
	}
	return nullOnPadding(ctx, e, ids)
}

// notNullConstant says e is a literal, perhaps converted, whose value is
// not NULL (a conversion may make one NULL: an invalid date).
func notNullConstant(ctx *sql.Context, e sql.Expression) bool {
	for x := e; ; {
		switch c := x.(type) {
		case *expression.Convert:
			x = c.Child
			continue
		case *expression.Literal:
		default:
			return false
		}
		break
	}
	v, err := e.Eval(ctx, nil)
	return err == nil && v != nil
}

// nullOnPadding says e is NULL whenever every column of the tables ids is
// NULL: such a column, or an operator that is NULL when one operand it
// compares or computes with is (comparisons but <=>, LIKE, arithmetic,
// NOT, an IN list's left side, BETWEEN's value, CAST, and the functions
// listed below, which MySQL makes NULL when an argument is: UPPER(NULL),
// MONTH(NULL), SUBSTRING(NULL, 1)), or an AND/OR both of whose sides are.
func nullOnPadding(ctx *sql.Context, e sql.Expression, ids map[sql.TableId]bool) bool {
	switch e := e.(type) {
	case *expression.GetField:
		return ids[e.TableId()]
	case *expression.Equals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.Arithmetic:
		for _, c := range e.Children() {
			if nullOnPadding(ctx, c, ids) {
				return true
			}
		}
		return false
	case *expression.Like: // its ESCAPE is not an operand
		return nullOnPadding(ctx, e.Left(), ids) || nullOnPadding(ctx, e.Right(), ids)
	case *expression.Not:
		return nullOnPadding(ctx, e.Child, ids)
	case *expression.UnaryMinus:
		return nullOnPadding(ctx, e.Child, ids)
	case *expression.Convert:
		return nullOnPadding(ctx, e.Child, ids)
	case *expression.And:
		return nullOnPadding(ctx, e.LeftChild, ids) && nullOnPadding(ctx, e.RightChild, ids)
	case *expression.Or:
		return nullOnPadding(ctx, e.LeftChild, ids) && nullOnPadding(ctx, e.RightChild, ids)
	case *expression.InTuple:
		return nullOnPadding(ctx, e.Left(), ids)
	case *expression.HashInTuple:
		return nullOnPadding(ctx, e.Left(), ids)
	case *expression.Between:
		return nullOnPadding(ctx, e.Val, ids)
	case *expression.Mod, *function.Upper, *function.Lower, *function.Length, *function.Substring,
		*function.Left, *function.Right, *function.Trim, *function.Reverse, *function.Concat,
		*function.Year, *function.Quarter, *function.Month, *function.Day, *function.DayOfWeek,
		*function.DayOfYear, *function.Hour, *function.Minute, *function.Second, *function.Date,
		*function.Floor, *function.Ceil, *function.Round, *function.Sqrt, *function.Sign:
		for _, c := range e.Children() {
			if nullOnPadding(ctx, c, ids) {
				return true
			}
		}
		return false
	}
	return false
}

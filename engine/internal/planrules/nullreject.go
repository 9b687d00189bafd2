package planrules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// rejectsNulls says a WHERE conjunct is never true for a row whose columns
// of the tables ids are all NULL (the row an outer join pads): then the
// join may as well be an inner one. It holds for what is NULL on such a
// row (nullOnPadding), for an AND one of whose sides rejects, an OR both of
// whose sides reject, and an IN subquery whose compared operand is NULL
// (NULL IN an empty subquery is FALSE, still not true). Anything it does
// not know (IS NULL, <=>, COALESCE, IF, CASE, functions) may hold for
// NULLs and is not trusted.
func rejectsNulls(ctx *sql.Context, e sql.Expression, ids map[sql.TableId]bool) bool {
	switch e := e.(type) {
	case *expression.And:
		return rejectsNulls(ctx, e.LeftChild, ids) || rejectsNulls(ctx, e.RightChild, ids)
	case *expression.Or:
		return rejectsNulls(ctx, e.LeftChild, ids) && rejectsNulls(ctx, e.RightChild, ids)
	case *plan.InSubquery:
		return nullOnPadding(ctx, e.Left(), ids)
	}
	return nullOnPadding(ctx, e, ids)
}

// nullOnPadding says e is NULL whenever every column of the tables ids is
// NULL: such a column, or an operator that is NULL when one operand it
// compares or computes with is (comparisons but <=>, LIKE, arithmetic,
// NOT, an IN list's left side, BETWEEN's value, CAST), or an AND/OR both of
// whose sides are.
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
	}
	return false
}

package sqlfunc

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// A comparison with a scalar subquery, x = (SELECT ...), is MySQL's
// ER_SUBQUERY_NO_1_ROW (1242) when the subquery returns more than one row,
// and NULL when it returns none. go-mysql-server's unnestInSubqueries
// turned an uncorrelated one into a semi join (an anti join under NOT or
// <>), which does neither: WHERE id = (SELECT id FROM t) returned every
// row, and WHERE id <> (SELECT id FROM t WHERE false) too (MySQL: no
// row). Such a subquery is evaluated once per statement anyway (its result
// is cached), so scalarSubqueriesStay hides the subqueries of comparisons
// from the rule and leaves them scalar.

// ScalarSubqueriesStay wraps go-mysql-server's unnestInSubqueries.
func ScalarSubqueriesStay(unnest analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		hidden, same, err := transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
			f, ok := n.(*plan.Filter)
			if !ok {
				return n, transform.SameTree, nil
			}
			e, same, err := transform.Expr(ctx, f.Expression, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				op, l, r, ok := comparisonOf(e)
				if !ok {
					return e, transform.SameTree, nil
				}
				sq, ok := r.(*plan.Subquery)
				if !ok {
					return e, transform.SameTree, nil
				}
				return newComparison(op, l, &heldSubquery{Subquery: sq}), transform.NewTree, nil
			})
			if err != nil || same {
				return n, transform.SameTree, err
			}
			return plan.NewFilter(ctx, e, f.Child), transform.NewTree, nil
		})
		if err != nil || same {
			return unnest(ctx, a, n, scope, sel, qFlags)
		}
		out, _, err := unnest(ctx, a, hidden, scope, sel, qFlags)
		if err != nil {
			return nil, transform.SameTree, err
		}
		revealed, _, err := transform.Node(ctx, out, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
			return transform.OneNodeExpressions(ctx, n, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				if h, ok := e.(*heldSubquery); ok {
					return h.Subquery, transform.NewTree, nil
				}
				return e, transform.SameTree, nil
			})
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		return revealed, transform.NewTree, nil
	}
}

// heldSubquery is a subquery the unnesting rule does not recognize; it
// stands for it in every other respect.
type heldSubquery struct {
	*plan.Subquery
}

func (h *heldSubquery) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(h, len(children), 1)
	}
	sq, ok := children[0].(*plan.Subquery)
	if !ok {
		return children[0], nil
	}
	return &heldSubquery{Subquery: sq}, nil
}

func (h *heldSubquery) Children() []sql.Expression { return []sql.Expression{h.Subquery} }

package engine

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// groupedJoinSides runs before go-mysql-server's join planner
// (optimizeJoins). An IN (SELECT ... GROUP BY ... HAVING ...) becomes a
// semi join whose right side is a GroupBy, a node the planner cannot
// reorder (memo.ErrUnsupportedReorderNode): it then kept the whole join
// tree as written, every join a nested loop (TPC-H Q18: customer, orders
// and lineitem joined row by row, over a minute at SF 0.01). Wrapped in a
// derived table, the grouped side is a leaf the planner can place and hash.
// Only an uncorrelated side whose columns come from one table is wrapped,
// named as that table, so that the conditions above still name its
// columns as they did.
func groupedJoinSides(next analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		wrapped, same, err := wrapGroupedJoinSides(ctx, n)
		if err != nil {
			return n, transform.SameTree, err
		}
		out, same2, err := next(ctx, a, wrapped, scope, sel, qFlags)
		if err != nil {
			return out, same && same2, err
		}
		hashed, same3, err := hashPartialJoins(ctx, out)
		return hashed, same && same2 && same3, err
	}
}

// hashPartialJoins gives the nested-loop semi join of EXISTS and the anti
// join of NOT EXISTS a hash table of their right side when their condition
// holds an equality of the two sides beside other comparisons: TPC-H Q21's
// l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey.
// go-mysql-server hashes a join only when every condition is an equality,
// so each row of l1 read all of lineitem again. The join still evaluates
// its whole condition, now on the rows of the left row's key only: a row
// with another key fails the equality, and one with a NULL key cannot
// make it true. (NOT IN's anti join, whose NULLs count, is not touched.)
func hashPartialJoins(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || (j.Op != plan.JoinTypeSemi && j.Op != plan.JoinTypeAntiIncludeNulls) || j.Filter == nil {
			return n, transform.SameTree, nil
		}
		right := j.Right()
		if _, ok := right.(*plan.HashLookup); ok || readsOuterScope(ctx, right) {
			return n, transform.SameTree, nil
		}
		ls, rs := j.Left().Schema(ctx), right.Schema(ctx)
		var lefts, rights []sql.Expression
		for _, c := range expression.SplitConjunction(ctx, j.Filter) {
			eq, ok := c.(*expression.Equals)
			if !ok || !movable(ctx, c) {
				continue
			}
			l, r := eq.Left(), eq.Right()
			if readsOnlyColumnsOf(ctx, r, ls) && readsOnlyColumnsOf(ctx, l, rs) {
				l, r = r, l
			}
			if !readsOnlyColumnsOf(ctx, l, ls) || !readsOnlyColumnsOf(ctx, r, rs) || !l.Type(ctx).Equals(r.Type(ctx)) {
				continue
			}
			lefts, rights = append(lefts, l), append(rights, r)
		}
		if len(lefts) == 0 {
			return n, transform.SameTree, nil
		}
		hl := plan.NewHashLookup(ctx, right, expression.Tuple(rights), expression.Tuple(lefts), j.Op)
		out, err := j.WithChildren(ctx, j.Left(), hl)
		return out, transform.NewTree, err
	})
}

func wrapGroupedJoinSides(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	if !n.Resolved() {
		return n, transform.SameTree, nil
	}
	var maxID sql.TableId
	transform.Inspect(n, func(n sql.Node) bool {
		if tn, ok := n.(plan.TableIdNode); ok {
			maxID = max(maxID, tn.Id())
		}
		return true
	})
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || !(j.Op.IsSemi() || j.Op.IsAnti() || j.Op.IsInner()) || reorderable(j.Right()) {
			return n, transform.SameTree, nil
		}
		p, ok := j.Right().(*plan.Project)
		if !ok {
			return n, transform.SameTree, nil
		}
		var cols sql.ColSet
		for _, e := range p.Projections {
			ie, ok := e.(sql.IdExpression)
			if !ok {
				return n, transform.SameTree, nil
			}
			cols.Add(ie.Id())
		}
		schema := p.Schema(ctx)
		if len(schema) == 0 || cols.Len() != len(schema) || readsOuterScope(ctx, p) {
			return n, transform.SameTree, nil
		}
		source := schema[0].Source
		for _, c := range schema {
			if c.Source != source || source == "" {
				return n, transform.SameTree, nil
			}
		}
		maxID++
		sqa := plan.NewSubqueryAlias(source, "", p).WithId(maxID).WithColumns(cols)
		out, err := j.WithChildren(ctx, j.Left(), sqa)
		return out, transform.NewTree, err
	})
}

// reorderable says whether the join planner can take n as a join side:
// tables, derived tables and joins, under filters, projections, sorts,
// limits and DISTINCT (memo.joinOrderBuilder.populateSubgraph).
func reorderable(n sql.Node) bool {
	for {
		switch nn := n.(type) {
		case *plan.Filter, *plan.Having, *plan.Limit, *plan.Project, *plan.Sort, *plan.Distinct, *plan.Max1Row, *plan.CachedResults:
			n = nn.Children()[0]
		case *plan.JoinNode, *plan.SetOp, sql.NameableNode:
			return true
		default:
			return false
		}
	}
}

// readsOuterScope says whether n reads a column that none of its own
// tables, aggregates or aliases produce (a correlated subquery's).
func readsOuterScope(ctx *sql.Context, n sql.Node) bool {
	tables := map[string]bool{}
	transform.Inspect(n, func(n sql.Node) bool {
		if tn, ok := n.(sql.Nameable); ok {
			tables[strings.ToLower(tn.Name())] = true
		}
		return true
	})
	var own sql.ColSet
	transform.InspectExpressions(ctx, n, func(ctx *sql.Context, e sql.Expression) bool {
		if ie, ok := e.(sql.IdExpression); ok {
			if _, read := e.(*expression.GetField); !read {
				own.Add(ie.Id()) // an aggregate's or an alias's column
			}
		}
		return false
	})
	outer := false
	transform.InspectExpressions(ctx, n, func(ctx *sql.Context, e sql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok && !own.Contains(gf.Id()) && !tables[strings.ToLower(gf.Table())] {
			outer = true
		}
		return outer
	})
	return outer
}

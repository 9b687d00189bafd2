// Package planrules holds icesql's analyzer rules that rewrite a
// go-mysql-server plan without knowing Iceberg tables: join order and join
// conditions (cross joins, semi/anti joins, outer joins, USING), hash joins
// and keyed correlated subqueries, GROUP BY and HAVING fixes, window functions
// over GROUP BY, sort with LIMIT, plan nesting limits and EXPLAIN FORMAT=JSON,
// and the row builders (GroupByBuilder, SortBuilder, HashJoinBuilder) that run
// their nodes within the statement's memory budget.
package planrules

import (
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// go-mysql-server's replaceCrossJoins rule (analyzer/replace_cross_joins.go)
// turns a CROSS JOIN under a WHERE into an inner join on the WHERE's
// conjuncts that compare a column of each side. It gives wrong rows or
// fails in two ways, which the rule that replaces it here avoids:
//   - it moves a conjunct when any comparison inside it qualifies, so
//     "(a.k = b.k) OR (c.k = 70)" became the condition of a CROSS JOIN b
//     though c is not there: ERROR 1105 "unable to find field with index 3
//     in row of 2 columns" below a LEFT JOIN c, wrong rows below a RIGHT
//     JOIN c (the WHERE no longer filtered c's unmatched rows);
//   - it moves conjuncts below an outer join into the side that join pads
//     with NULLs, where they no longer filter the padded rows: a CROSS JOIN
//     b RIGHT JOIN c ON a.k = c.k WHERE a.k = b.k kept c's unmatched rows.
//
// crossJoinConditions moves a conjunct only into a CROSS JOIN that holds
// every column it names, reached from the WHERE through inner joins, the
// preserved sides of outer joins and the left sides of semi and anti joins
// (an IN or NOT IN subquery becomes one above the FROM's joins before this
// rule runs: TPC-H Q16 and Q20 stayed nested loops). A conjunct shared by
// every branch of an OR is taken out of it first, as TPC-H Q19 writes its
// join condition: (A AND B) OR (A AND C) is A AND (B OR C) in SQL's
// three-valued logic too.
func CrossJoinConditions(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !n.Resolved() {
		return n, transform.SameTree, nil
	}
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		var conjuncts []sql.Expression
		for _, c := range expression.SplitConjunction(ctx, f.Expression) {
			conjuncts = append(conjuncts, factorDisjunction(ctx, c)...)
		}
		moved := make([]bool, len(conjuncts))
		child, same, err := joinCrossJoins(ctx, f.Child, conjuncts, moved)
		if err != nil || same == transform.SameTree {
			return f, transform.SameTree, err
		}
		var rest []sql.Expression
		for i, c := range conjuncts {
			if !moved[i] {
				rest = append(rest, c)
			}
		}
		if len(rest) == 0 {
			return child, transform.NewTree, nil
		}
		return plan.NewFilter(ctx, expression.JoinAnd(rest...), child), transform.NewTree, nil
	})
}

// joinCrossJoins turns the CROSS JOINs of n, below inner joins and the
// preserved sides of outer joins, into inner joins on the conjuncts that
// join them (marking those moved), lowest first.
func joinCrossJoins(ctx *sql.Context, n sql.Node, conjuncts []sql.Expression, moved []bool) (sql.Node, transform.TreeIdentity, error) {
	j, ok := n.(*plan.JoinNode)
	if !ok {
		return n, transform.SameTree, nil
	}
	left, right := j.Left(), j.Right()
	same := transform.SameTree
	descend := func(side sql.Node) (sql.Node, error) {
		out, s, err := joinCrossJoins(ctx, side, conjuncts, moved)
		if s == transform.NewTree {
			same = transform.NewTree
		}
		return out, err
	}
	var err error
	switch {
	case j.Op.IsInner() || j.Op.IsCross():
		if left, err = descend(left); err == nil {
			right, err = descend(right)
		}
	case j.Op.IsLeftOuter() || j.Op.IsSemi() || j.Op.IsAnti():
		left, err = descend(left)
	case j.Op.IsRightOuter():
		right, err = descend(right)
	}
	if err != nil {
		return nil, transform.SameTree, err
	}
	if j.Op.IsCross() {
		var conds []sql.Expression
		for i, c := range conjuncts {
			if !moved[i] && joinsSides(ctx, c, left, right) {
				conds, moved[i] = append(conds, c), true
			}
		}
		if len(conds) > 0 {
			return plan.NewInnerJoin(ctx, left, right, expression.JoinAnd(conds...)).WithComment(j.Comment()), transform.NewTree, nil
		}
	}
	if same == transform.SameTree {
		return n, transform.SameTree, nil
	}
	out, err := j.WithChildren(ctx, left, right)
	return out, transform.NewTree, err
}

// joinsSides says whether conjunct c may join left and right: every column
// it reads is theirs (no subquery, no outer-scope column), and it holds a
// comparison of a column of one side with a column of the other.
func joinsSides(ctx *sql.Context, c sql.Expression, left, right sql.Node) bool {
	ls, rs := left.Schema(ctx), right.Schema(ctx)
	in := func(s sql.Schema, e sql.Expression) bool {
		gf, ok := e.(*expression.GetField)
		return ok && s.Contains(gf.Name(), gf.Table())
	}
	inside, compares := true, false
	transform.InspectExpr(ctx, c, func(ctx *sql.Context, e sql.Expression) bool {
		switch e := e.(type) {
		case *expression.GetField:
			if !in(ls, e) && !in(rs, e) {
				inside = false
			}
		case *plan.Subquery:
			inside = false
		case expression.Comparer:
			switch e.(type) {
			case *expression.Equals, *expression.NullSafeEquals, *expression.GreaterThan,
				*expression.LessThan, *expression.GreaterThanOrEqual, *expression.LessThanOrEqual:
				l, r := e.Left(), e.Right()
				compares = compares || in(ls, l) && in(rs, r) || in(rs, l) && in(ls, r)
			}
		}
		return !inside // stop at the first column from elsewhere
	})
	return inside && compares
}

// factorDisjunction returns c as conjuncts, with the conjuncts every
// branch of an OR shares taken out of it: (A AND B) OR (A AND C) gives A
// and B OR C; (A) OR (A AND C) gives A alone. Conjuncts that read a
// subquery or a non-deterministic function are not shared: evaluating
// them once instead of once per branch could change the answer.
func factorDisjunction(ctx *sql.Context, c sql.Expression) []sql.Expression {
	if _, ok := c.(*expression.Or); !ok {
		return []sql.Expression{c}
	}
	var branches [][]sql.Expression
	for _, d := range expression.SplitDisjunction(c) {
		branches = append(branches, expression.SplitConjunction(ctx, d))
	}
	var shared []sql.Expression
	for _, a := range branches[0] {
		if !movable(ctx, a) {
			continue
		}
		key, inAll := conjunctKey(a), true
		for _, b := range branches[1:] {
			inAll = inAll && slices.ContainsFunc(b, func(e sql.Expression) bool { return conjunctKey(e) == key })
		}
		if inAll && !slices.ContainsFunc(shared, func(e sql.Expression) bool { return conjunctKey(e) == key }) {
			shared = append(shared, a)
		}
	}
	if len(shared) == 0 {
		return []sql.Expression{c}
	}
	isShared := func(e sql.Expression) bool {
		return slices.ContainsFunc(shared, func(s sql.Expression) bool { return conjunctKey(s) == conjunctKey(e) })
	}
	var rest []sql.Expression
	for _, b := range branches {
		b = slices.DeleteFunc(slices.Clone(b), isShared)
		if len(b) == 0 {
			return shared // one branch is the shared conjuncts alone: the OR adds nothing
		}
		rest = append(rest, expression.JoinAnd(b...))
	}
	return append(shared, expression.JoinOr(rest...))
}

// conjunctKey is e's text, the same for a = b and b = a.
func conjunctKey(e sql.Expression) string {
	if eq, ok := e.(*expression.Equals); ok {
		l, r := eq.Left().String(), eq.Right().String()
		return "=(" + min(l, r) + "," + max(l, r) + ")"
	}
	return e.String()
}

// movable says whether e may be evaluated somewhere else than where it was
// written: it reads no subquery and calls no non-deterministic function.
func movable(ctx *sql.Context, e sql.Expression) bool {
	return !transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
		switch e := e.(type) {
		case *plan.Subquery:
			return true
		case sql.NonDeterministicExpression:
			return e.IsNonDeterministic()
		}
		return false
	})
}

// FilterOuterJoins filters the inner side of an outer join by the ON
// conjuncts that name that side alone (TPC-H Q13: LEFT JOIN orders ON
// c_custkey = o_custkey AND o_comment NOT LIKE ...): a row they reject can
// match no row, so the join keeps only its equalities and can be hashed,
// where go-mysql-server planned a nested loop.
func FilterOuterJoins(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !n.Resolved() {
		return n, transform.SameTree, nil
	}
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if j, ok := n.(*plan.JoinNode); ok {
			return filterInnerSide(ctx, j)
		}
		return n, transform.SameTree, nil
	})
}

// filterInnerSide moves the ON conjuncts of an outer join that read only
// the side it pads with NULLs into a filter over that side.
func filterInnerSide(ctx *sql.Context, j *plan.JoinNode) (sql.Node, transform.TreeIdentity, error) {
	var inner sql.Node
	switch {
	case j.Op == plan.JoinTypeLeftOuter:
		inner = j.Right()
	case j.Op == plan.JoinTypeRightOuter:
		inner = j.Left()
	default:
		return j, transform.SameTree, nil
	}
	schema := inner.Schema(ctx)
	var keep, pushed []sql.Expression
	for _, c := range expression.SplitConjunction(ctx, j.Filter) {
		if movable(ctx, c) && readsOnlyColumnsOf(ctx, c, schema) {
			pushed = append(pushed, c)
		} else {
			keep = append(keep, c)
		}
	}
	if len(pushed) == 0 {
		return j, transform.SameTree, nil
	}
	inner = plan.NewFilter(ctx, expression.JoinAnd(pushed...), inner)
	if len(keep) == 0 {
		keep = []sql.Expression{expression.NewLiteral(true, types.Boolean)}
	}
	left, right := j.Left(), inner
	if j.Op == plan.JoinTypeRightOuter {
		left, right = inner, j.Right()
	}
	return plan.NewJoin(ctx, left, right, j.Op, expression.JoinAnd(keep...)).WithComment(j.Comment()), transform.NewTree, nil
}

// readsOnlyColumnsOf says whether c reads at least one column and only
// columns of schema.
func readsOnlyColumnsOf(ctx *sql.Context, c sql.Expression, schema sql.Schema) bool {
	columns, outside := 0, false
	transform.InspectExpr(ctx, c, func(ctx *sql.Context, e sql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok {
			columns++
			outside = !schema.Contains(gf.Name(), gf.Table())
		}
		return outside
	})
	return columns > 0 && !outside
}

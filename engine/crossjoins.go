package engine

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
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
// every column it names, reached from the WHERE through inner joins and
// the preserved sides of outer joins.
func crossJoinConditions(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !n.Resolved() {
		return n, transform.SameTree, nil
	}
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		conjuncts := expression.SplitConjunction(ctx, f.Expression)
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
	case j.Op.IsLeftOuter():
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

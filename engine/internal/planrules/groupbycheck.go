package planrules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// ValidateGroupByView runs go-mysql-server's validateGroupBy (the
// ONLY_FULL_GROUP_BY check, analyzer/validation_rules.go) on a view of the
// plan that MySQL's rules would check, and which go-mysql-server misjudges
// as it stands. The rule only validates, so the plan itself is unchanged.
//
// First, an ORDER BY naming a select-list alias names the aliased
// expression. go-mysql-server checks such an ORDER BY only when a HAVING
// sits below it (a Project under the Sort otherwise hides the Sort from
// the check), and then takes the alias for a column missing from GROUP BY:
// SELECT id % 5 AS c0, COUNT(*) FROM t GROUP BY id % 5 HAVING COUNT(*) > 0
// ORDER BY c0 failed with ERROR 1105 "Expression #1 of ORDER BY clause is
// not in GROUP BY clause". MySQL checks the alias's expression, as the
// select list's.
//
// Second, a subquery stands for the outer columns it reads
// (subqueryStandIn). go-mysql-server takes any subquery in the select list
// of a grouped query for a column missing from GROUP BY: SELECT k, SUM(x),
// (SELECT SUM(x) FROM t) FROM t GROUP BY k failed with 1055. MySQL accepts
// a subquery whose outer references are grouped, and an uncorrelated one.
func ValidateGroupByView(validate analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		view, _, err := transform.NodeWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
			p, ok := n.(*plan.Project)
			if !ok {
				return n, transform.SameTree, nil
			}
			s, ok := p.Child.(*plan.Sort)
			if !ok {
				return n, transform.SameTree, nil
			}
			aliases := map[sql.ColumnId]sql.Expression{}
			for _, e := range p.Projections {
				if al, ok := e.(*expression.Alias); ok && al.Id() != 0 {
					aliases[al.Id()] = al.Child
				}
			}
			fields := make(sql.SortConditions, len(s.SortConditions))
			changed := false
			for i, f := range s.SortConditions {
				fields[i] = f
				if gf, ok := f.Expr.(*expression.GetField); ok {
					if e, ok := aliases[gf.Id()]; ok {
						fields[i].Expr, changed = e, true
					}
				}
			}
			if !changed {
				return n, transform.SameTree, nil
			}
			return plan.NewProject(ctx, p.Projections, plan.NewSort(fields, s.Child)), transform.NewTree, nil
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		view, _, err = transform.NodeWithOpaque(ctx, view, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
			switch n.(type) {
			case *plan.Project, *plan.Sort: // the select list and ORDER BY the check reads
			default:
				return n, transform.SameTree, nil
			}
			ex := n.(sql.Expressioner)
			exprs := append([]sql.Expression(nil), ex.Expressions()...) // the plan's own slice stays as it is
			for i, e := range exprs {
				exprs[i] = withOuterConstants(ctx, withSubqueryStandIns(ctx, e), scope.Correlated()) // groupbyouter.go
			}
			n, err := ex.WithExpressions(ctx, exprs...)
			return n, transform.NewTree, err
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		if _, _, err := validate(ctx, a, view, scope, sel, qFlags); err != nil {
			return nil, transform.SameTree, err
		}
		return n, transform.SameTree, nil
	}
}

// withSubqueryStandIns is e with its subqueries replaced by their
// stand-ins, except inside aggregates (which the check passes over, and
// whose text names their column in the select list) and where an
// expression must hold a subquery (ANY, ALL, IN): those stay as they are.
func withSubqueryStandIns(ctx *sql.Context, e sql.Expression) sql.Expression {
	out, _ := replaceSubqueries(ctx, e)
	return out
}

func replaceSubqueries(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	switch e := e.(type) {
	case sql.Aggregation:
		return e, false
	case *plan.Subquery:
		return subqueryStandIn(ctx, e), true
	}
	children := e.Children()
	replaced := make([]sql.Expression, len(children))
	changed := false
	for i, c := range children {
		var ok bool
		replaced[i], ok = replaceSubqueries(ctx, c)
		changed = changed || ok
	}
	if !changed {
		return e, false
	}
	out, err := e.WithChildren(ctx, replaced...)
	if err != nil {
		return e, false
	}
	return out, true
}

// subqueryStandIn is what the GROUP BY check sees of a subquery: the outer
// columns it reads, each of which must be grouped (or aggregated) as a
// column of the select list must, or a constant for a subquery that reads
// none.
func subqueryStandIn(ctx *sql.Context, sq *plan.Subquery) sql.Expression {
	corr := sq.Correlated()
	var outer []sql.Expression
	if !corr.Empty() {
		transform.InspectExpressions(ctx, sq.Query, func(ctx *sql.Context, e sql.Expression) bool {
			if gf, ok := e.(*expression.GetField); ok && corr.Contains(gf.Id()) {
				outer = append(outer, gf)
			}
			return true
		})
	}
	if len(outer) == 0 {
		return expression.NewLiteral(nil, types.Null)
	}
	return expression.NewTuple(outer...)
}

package engine

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// validateGroupByAliases runs go-mysql-server's validateGroupBy (the
// ONLY_FULL_GROUP_BY check, analyzer/validation_rules.go) on a view of the
// plan in which an ORDER BY naming a select-list alias names the aliased
// expression. go-mysql-server checks such an ORDER BY only when a HAVING
// sits below it (a Project under the Sort otherwise hides the Sort from
// the check), and then takes the alias for a column missing from GROUP BY:
// SELECT id % 5 AS c0, COUNT(*) FROM t GROUP BY id % 5 HAVING COUNT(*) > 0
// ORDER BY c0 failed with ERROR 1105 "Expression #1 of ORDER BY clause is
// not in GROUP BY clause". MySQL checks the alias's expression, as the
// select list's. The rule only validates, so the plan itself is unchanged.
func validateGroupByAliases(validate analyzer.RuleFunc) analyzer.RuleFunc {
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
		if _, _, err := validate(ctx, a, view, scope, sel, qFlags); err != nil {
			return nil, transform.SameTree, err
		}
		return n, transform.SameTree, nil
	}
}

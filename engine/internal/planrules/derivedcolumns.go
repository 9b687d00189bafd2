package planrules

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// MySQL refuses a derived table, a common table expression or a view
// whose columns repeat a name (case aside) with ER_DUP_FIELDNAME (1060):
// SELECT * FROM (SELECT id, id FROM t) AS d. go-mysql-server took them,
// and a query naming the column then read one of them, or failed with an
// internal error (d(a, a)). uniqueDerivedColumns refuses them before
// analysis, in the statement's subqueries too.

// UniqueDerivedColumnsID is the id of uniqueDerivedColumns.
const UniqueDerivedColumnsID analyzer.RuleId = 1400

func UniqueDerivedColumns(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return n, transform.SameTree, duplicateDerivedColumn(ctx, n)
}

// duplicateDerivedColumn is 1060 for the first derived table of n (or of
// its subqueries) that repeats a column name.
func duplicateDerivedColumn(ctx *sql.Context, n sql.Node) error {
	var err error
	transform.InspectWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) bool {
		if err != nil {
			return false
		}
		var sch sql.Schema
		switch n := n.(type) {
		case *plan.SubqueryAlias:
			sch = n.Schema(ctx)
		case *plan.CreateView:
			if n.Definition != nil {
				sch = n.Definition.Schema(ctx)
			}
		}
		if name, dup := repeatedName(sch); dup {
			err = sql.ErrDuplicateColumn.New(name)
			return false
		}
		if ex, ok := n.(sql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
					if sq, ok := e.(*plan.Subquery); ok && err == nil {
						err = duplicateDerivedColumn(ctx, sq.Query)
					}
					return err != nil
				})
			}
		}
		return err == nil
	})
	return err
}

// repeatedName is the second column of sch whose name another one before
// it has, case aside.
func repeatedName(sch sql.Schema) (string, bool) {
	seen := make(map[string]bool, len(sch))
	for _, c := range sch {
		key := strings.ToLower(c.Name)
		if seen[key] {
			return c.Name, true
		}
		seen[key] = true
	}
	return "", false
}

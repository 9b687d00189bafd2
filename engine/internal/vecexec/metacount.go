package vecexec

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// CountFromMetadata answers SELECT COUNT(*) FROM t, with no filter, from the
// snapshot summary instead of reading every data file. go-mysql-server's
// own rule (replaceCountStar) does this only for tables with a primary key,
// and Iceberg tables have none. It runs after the default rules, when
// COUNT(*) has become COUNT(1) and nothing is filtered any more above the
// table that is not in the plan.
func CountFromMetadata(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		agg, ok := n.(*plan.GroupBy)
		if !ok || len(agg.GroupByExprs) != 0 || len(agg.SelectDeps) != 1 {
			return n, transform.SameTree, nil
		}
		cnt, name := countOf(agg.SelectDeps[0])
		if cnt == nil || !countsRows(cnt) {
			return n, transform.SameTree, nil
		}
		rt, t, rows, ok := countedTable(agg)
		if !ok {
			return n, transform.SameTree, nil
		}
		field := expression.NewGetFieldWithTable(int(cnt.Id()), 0, types.Int64, rt.Database().Name(), t.Name(), name, false)
		return plan.NewProject(ctx,
			[]sql.Expression{expression.NewAlias(ctx, name, field).WithId(cnt.Id())},
			plan.NewTableCount(name, rt.SqlDatabase, t, rows, cnt.Id()),
		), transform.NewTree, nil
	})
}

// countedTable is the Iceberg table an aggregate reads directly (perhaps
// under an alias) and its exact row count, when the metadata knows it.
func countedTable(agg *plan.GroupBy) (*plan.ResolvedTable, ScanTable, uint64, bool) {
	rt, ok := agg.Child.(*plan.ResolvedTable)
	if ta, isAlias := agg.Child.(*plan.TableAlias); isAlias {
		rt, ok = ta.Child.(*plan.ResolvedTable)
	}
	if !ok {
		return nil, nil, 0, false
	}
	t, ok := AsScanTable(rt.Table)
	if !ok {
		return nil, nil, 0, false
	}
	rows, ok := t.ExactRowCount()
	return rt, t, rows, ok
}

func countOf(e sql.Expression) (*aggregation.Count, string) {
	if alias, ok := e.(*expression.Alias); ok {
		cnt, _ := alias.Child.(*aggregation.Count)
		return cnt, alias.Name()
	}
	cnt, _ := e.(*aggregation.Count)
	return cnt, e.String()
}

// countsRows says COUNT's argument is never NULL, so it counts rows.
func countsRows(cnt *aggregation.Count) bool {
	switch c := cnt.Child.(type) {
	case *expression.Star:
		return true
	case *expression.Literal:
		return c.Val != nil
	}
	return false
}

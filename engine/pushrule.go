package engine

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Row filters reach a scan in one of two ways (see lookup.go):
//
//   - In a simple single-table SELECT, go-mysql-server runs a short rule set
//     that offers the WHERE conjuncts to LookupForExpressions, which takes them.
//   - Every other statement goes through the full analyzer, whose join
//     planner costs an accepted lookup as a one-row index scan
//     (memo.MemoizeStaticIndexAccess uses RowCnt 1), which made any filtered
//     table the inner side of a nested-loop join: TPC-H Q3 at SF 0.01 ran for
//     minutes. There markFullAnalysis makes LookupForExpressions decline, and
//     pushRowFilters pushes the filters after the joins are planned with the
//     tables' real row counts.

// markFullAnalysis runs first in the full analyzer only.
func markFullAnalysis(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	sessionOf(ctx).markFullAnalysis(ctx)
	return n, transform.SameTree, nil
}

// pushRowFilters gives every Iceberg scan with a Filter directly above it
// (possibly through a table alias) the conjuncts Iceberg can evaluate, as
// its row filter.
func pushRowFilters(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		child, err := withRowFilter(ctx, f.Child, f.Expression)
		if err != nil || child == nil {
			return n, transform.SameTree, err
		}
		nf, err := f.WithChildren(ctx, child)
		return nf, transform.NewTree, err
	})
}

// withRowFilter returns scan (a ResolvedTable of an Iceberg table, or an
// alias of one) reading with the translatable conjuncts of cond, or nil when
// scan is something else or nothing translates.
func withRowFilter(ctx *sql.Context, scan sql.Node, cond sql.Expression) (sql.Node, error) {
	if alias, ok := scan.(*plan.TableAlias); ok {
		child, err := withRowFilter(ctx, alias.Child, cond)
		if err != nil || child == nil {
			return nil, err
		}
		return alias.WithChildren(ctx, child)
	}
	rt, ok := scan.(*plan.ResolvedTable)
	if !ok {
		return nil, nil
	}
	t, ok := rt.Table.(*Table)
	if !ok || t.filter != nil {
		return nil, nil
	}
	pushed := t.translate(ctx, expression.SplitConjunction(ctx, cond))
	if pushed == nil {
		return nil, nil
	}
	nt := *t
	nt.filter = pushed
	return rt.WithTable(ctx, &nt)
}

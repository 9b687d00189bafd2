package vecexec

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// ScanID is which node of the plan a Table is: go-mysql-server's id of the
// table reference. LookupForExpressions receives the conjuncts of the
// filter above the table, and in a correlated subquery those may name
// columns of an outer table; a column is only ours when its table id is.
type ScanID struct {
	ID        sql.TableId
	Ambiguous bool // one Table object behind two references: push nothing
	// VectorNote says whether a GROUP BY over the scan runs vectorized,
	// for EXPLAIN (vectorize.go).
	VectorNote string
	// filterNote says whether the Filter over the scan runs vectorized
	// (vecfilter.go).
	filterNote string
}

// BindScanIDs tells each Iceberg table of the statement its table id,
// before the analyzer offers it filters.
func BindScanIDs(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	WalkPlan(ctx, n, func(n sql.Node) {
		rt, ok := n.(*plan.ResolvedTable)
		if !ok {
			return
		}
		t, ok := AsScanTable(rt.Table)
		if !ok {
			return
		}
		t.NoteReference(ctx, rt.Id()) // engine/rowcache.go
		switch {
		case t.ScanRef().ID == 0:
			t.ScanRef().ID = rt.Id()
		case t.ScanRef().ID != rt.Id():
			t.ScanRef().Ambiguous = true
		}
	})
	return n, transform.SameTree, nil
}

// WalkPlan calls f on every node of n, the plans of subqueries and of an
// INSERT's source included, but not the table an INSERT writes to.
func WalkPlan(ctx *sql.Context, n sql.Node, f func(sql.Node)) {
	transform.InspectWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) bool {
		switch n := n.(type) {
		case *plan.DescribeQuery:
			// DescribeQuery has no children: it hides the query it explains.
			WalkPlan(ctx, n.Query(), f)
		case *plan.InsertInto:
			WalkPlan(ctx, n.Source, f)
			return false
		}
		f(n)
		if ex, ok := n.(sql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
					switch e := e.(type) {
					case *plan.Subquery:
						WalkPlan(ctx, e.Query, f)
					case planHolder: // a decorrelated subquery (engine/groupedsubquery.go)
						WalkPlan(ctx, e.InnerPlan(), f)
					}
					return false
				})
			}
		}
		return true
	})
}

// planHolder is an expression that runs a plan of its own, as a subquery
// does, so walking a plan must enter it.
type planHolder interface {
	sql.Expression
	InnerPlan() sql.Node
}

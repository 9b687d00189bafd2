package planrules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// KeepRootColumnsID is the id of keepRootColumns, apart from engine/rules.go's
// list so that the two can change independently.
const KeepRootColumnsID analyzer.RuleId = 1100

// KeepRootColumns keeps every column of a statement whose result is a
// derived table read as it is: SELECT * FROM (SELECT * FROM t) x LIMIT n,
// WITH x AS (SELECT * FROM t) SELECT DISTINCT * FROM x (Superset's virtual
// tables, LIMIT 0 probes).
//
// go-mysql-server's planbuilder drops a projection that repeats its derived
// table's columns, its replaceSubqueries rule then turns the derived table
// into an alias of the table, and pruneTables, which finds the columns a
// table must keep in the projections above it, finds none: the table was
// projected to no column and the statement returned no result set at all.
// replaceSubqueries leaves a derived table with column names of its own
// alone, so the derived table at the root is given its own names: it keeps
// its projection, and pruneTables does not look inside it.
func KeepRootColumns(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return nameRootDerivedTables(ctx, n)
}

// nameRootDerivedTables gives the derived table whose rows are n's rows its
// own column names, and so on down: the rows of that derived table may be
// those of another (SELECT * FROM (SELECT * FROM (SELECT * FROM t) y
// LIMIT 2) x), and replaceSubqueries looks inside derived tables.
func nameRootDerivedTables(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	switch node := n.(type) {
	case *plan.SubqueryAlias:
		child, same, err := nameRootDerivedTables(ctx, node.Child)
		if err != nil {
			return n, transform.SameTree, err
		}
		out := node
		if !same {
			out = out.WithChild(child)
		}
		if len(out.ColumnNames) == 0 {
			sch := out.Schema(ctx)
			names := make([]string, len(sch))
			for i, col := range sch {
				names[i] = col.Name
			}
			out, same = out.WithColumnNames(names), transform.NewTree
		}
		return out, same, nil
	case *plan.Limit, *plan.Offset, *plan.Distinct, *plan.OrderedDistinct, *plan.Sort, *plan.TopN, *plan.Filter:
		// Nodes that pass their child's columns on unchanged.
		child, same, err := nameRootDerivedTables(ctx, node.Children()[0])
		if err != nil || same {
			return n, transform.SameTree, err
		}
		out, err := node.WithChildren(ctx, child)
		return out, transform.NewTree, err
	case *plan.SetOp:
		// Each side of a UNION, INTERSECT or EXCEPT gives rows of its own.
		left, sameLeft, err := nameRootDerivedTables(ctx, node.Left())
		if err != nil {
			return n, transform.SameTree, err
		}
		right, sameRight, err := nameRootDerivedTables(ctx, node.Right())
		if err != nil || (sameLeft && sameRight) {
			return n, transform.SameTree, err
		}
		out, err := node.WithChildren(ctx, left, right)
		return out, transform.NewTree, err
	default:
		return n, transform.SameTree, nil
	}
}

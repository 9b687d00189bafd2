package planrules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// withOuterConstants is e with the outer columns a subquery reads (outer:
// its scope's correlated columns) replaced by constants, for the GROUP BY
// check: within one evaluation of the subquery an outer column is a
// constant, which MySQL accepts beside an aggregate without GROUP BY.
// go-mysql-server took it for a column missing from GROUP BY: SELECT o.id
// FROM o WHERE o.id + 2 = (SELECT o.id + COUNT(DISTINCT i.s) FROM i WHERE
// i.k = o.k) failed with 1140.
func withOuterConstants(ctx *sql.Context, e sql.Expression, outer sql.ColSet) sql.Expression {
	if outer.Empty() {
		return e
	}
	out, _, err := transform.Expr(ctx, e, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if gf, ok := e.(*expression.GetField); ok && outer.Contains(gf.Id()) {
			return expression.NewLiteral(nil, types.Null), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
	if err != nil {
		return e
	}
	return out
}

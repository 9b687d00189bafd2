package vecexec

import (
	"maps"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// go-mysql-server plans `GROUP BY k HAVING SUM(x) > 10` with x itself among
// the GroupBy's outputs: its planner adds every column an aggregate of
// HAVING reads, whether or not anything reads it from the GroupBy's rows.
// Such a column, not grouped by, declined the whole GROUP BY from the
// vector path. When no node above the GroupBy refers to it, the value
// given for it is never seen, and MySQL lets a non-grouped column take any
// value of its group: the vector path gives the group's MIN.

// columnsReadAbove maps each GroupBy of n to the columns read from its
// rows by the nodes above it, by qualified and by bare name, lower case;
// "*" stands for every column. The client reads every column of the root.
// A Project passes on only what is read of its own columns (the
// pass-through columns go-mysql-server projects for HAVING are not read
// when HAVING reads the aggregates only); the other nodes pass on their
// rows whole, so what is read above them is read of their child too, and
// they read the columns their own expressions refer to (DISTINCT and set
// operations read every column). A subquery's references are not
// followed: it reads "*".
func columnsReadAbove(ctx *sql.Context, n sql.Node) map[*plan.GroupBy]map[string]bool {
	out := map[*plan.GroupBy]map[string]bool{}
	var walk func(n sql.Node, above map[string]bool)
	walk = func(n sql.Node, above map[string]bool) {
		if gb, ok := n.(*plan.GroupBy); ok {
			out[gb] = above
		}
		below := maps.Clone(above)
		exprs := []sql.Expression(nil)
		if p, ok := n.(*plan.Project); ok {
			below = map[string]bool{}
			for _, e := range p.Projections {
				if above["*"] || readsOutput(above, e) {
					exprs = append(exprs, e)
				}
			}
		} else if ex, ok := n.(sql.Expressioner); ok {
			exprs = ex.Expressions()
		}
		switch n.(type) {
		case *plan.Distinct, *plan.OrderedDistinct, *plan.SetOp:
			below["*"] = true // they compare whole rows
		}
		for _, e := range exprs {
			transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
				switch e := e.(type) {
				case *expression.GetField:
					below[strings.ToLower(e.String())] = true
					below[strings.ToLower(e.Name())] = true
				case *plan.Subquery:
					below["*"] = true
				}
				return false
			})
		}
		for _, c := range n.Children() {
			walk(c, below)
		}
	}
	walk(n, map[string]bool{"*": true})
	return out
}

// readsOutput says whether a Project's column e is among those read above.
func readsOutput(above map[string]bool, e sql.Expression) bool {
	names := []string{e.String()}
	switch e := e.(type) {
	case *expression.Alias:
		names = append(names, e.Name())
	case *expression.GetField:
		names = append(names, e.Name())
	}
	for _, n := range names {
		if above[strings.ToLower(n)] {
			return true
		}
	}
	return false
}

// passThrough is the aggregate standing for gf, a column of the GroupBy's
// outputs that is not grouped by, when nothing above reads it (read):
// the MIN of the group.
func passThrough(gf *expression.GetField, read map[string]bool) (sql.Expression, bool) {
	if read == nil || read["*"] || read[strings.ToLower(gf.String())] || read[strings.ToLower(gf.Name())] {
		return nil, false
	}
	return aggregation.NewMin(gf), true
}

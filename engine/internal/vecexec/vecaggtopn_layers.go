package vecexec

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/icesql/icesql/pushdown/vector"
)

// Between a TopN and the vectorized GROUP BY it picks from, the planner
// puts the GroupBy's Project and, for a HAVING clause, a Having (over a
// Project that names the aggregates HAVING reads). The TopN evaluates
// them itself on the groups it considers: a HAVING is evaluated by
// go-mysql-server's own expression on the group's finished row, so it
// decides exactly as on the row path, and only for the groups that would
// take a top slot (the rest lose to the groups already kept, which passed
// it). A GROUP BY of 100,000 groups under HAVING COUNT(*) > 2 kept 10 of
// them after building and sorting every row on one goroutine.

// topNLayers is the Projects and Havings between the TopN and the GROUP
// BY, the one under the TopN first, and the node below them; or why the
// TopN cannot evaluate them.
func topNLayers(ctx *sql.Context, n sql.Node) (above []sql.Node, below sql.Node, why string) {
	for {
		var exprs []sql.Expression
		switch l := n.(type) {
		case *plan.Project:
			exprs = l.Projections
		case *plan.Having:
			exprs = []sql.Expression{l.Cond}
		default:
			return above, n, why
		}
		// These are evaluated here on the kept groups' rows; a subquery
		// needs the row path's iterators.
		for _, e := range exprs {
			_, having := n.(*plan.Having)
			switch {
			case why != "":
			case having && nondeterministic(ctx, e):
				// Evaluated on fewer groups than the row path does.
				why = "a non-deterministic HAVING"
			case having && hasSubquery(ctx, e):
				why = "a subquery in HAVING"
			case having && hasAggregation(ctx, e):
				// Aggregates are evaluated through buffers, not on a row.
				why = "an aggregate HAVING evaluates itself"
			case hasSubquery(ctx, e):
				why = "a subquery in the selected columns"
			}
		}
		above = append(above, n)
		n = n.Children()[0]
	}
}

func hasAggregation(ctx *sql.Context, e sql.Expression) bool {
	return transform.InspectExpr(ctx, e, func(_ *sql.Context, e sql.Expression) bool {
		_, agg := e.(sql.Aggregation)
		return agg
	})
}

func hasSubquery(ctx *sql.Context, e sql.Expression) bool {
	return transform.InspectExpr(ctx, e, func(_ *sql.Context, e sql.Expression) bool {
		_, sq := e.(*plan.Subquery)
		return sq
	})
}

// hasHaving says a HAVING filters the groups.
func (top *joinAggTopN) hasHaving() bool {
	for _, l := range top.above {
		if _, ok := l.(*plan.Having); ok {
			return true
		}
	}
	return false
}

// note is EXPLAIN's note on the TopN.
func (top *joinAggTopN) note() string {
	if top.hasHaving() {
		return "the ORDER BY ... LIMIT picks its groups, evaluating HAVING only on those that would take a top slot"
	}
	return "the ORDER BY ... LIMIT picks its groups before any row is built"
}

// sortedOutput is the GroupBy output a sort expression reads, through the
// Projects' columns.
func (top *joinAggTopN) sortedOutput(e sql.Expression) (int, bool) {
	gf, ok := e.(*expression.GetField)
	if !ok {
		return 0, false
	}
	for _, l := range top.above {
		p, ok := l.(*plan.Project)
		if !ok {
			continue // a Having's row is its child's
		}
		if gf.Index() < 0 || gf.Index() >= len(p.Projections) {
			return 0, false
		}
		inner, _ := unalias(p.Projections[gf.Index()])
		if gf, ok = inner.(*expression.GetField); !ok {
			return 0, false
		}
	}
	if gf.Index() < 0 || gf.Index() >= len(top.src.outputs()) {
		return 0, false
	}
	return gf.Index(), true
}

// finish is the TopN's row for group g, or nil when a HAVING rejects it.
func (top *joinAggTopN) finish(ctx *sql.Context, g *vector.Group) (sql.Row, error) {
	row, err := groupRow(top.src.outputs(), *g)
	if err != nil {
		return nil, err
	}
	for i := len(top.above) - 1; i >= 0; i-- {
		switch l := top.above[i].(type) {
		case *plan.Project:
			out := make(sql.Row, len(l.Projections))
			for j, e := range l.Projections {
				if out[j], err = e.Eval(ctx, row); err != nil {
					return nil, err
				}
			}
			row = out
		case *plan.Having:
			ok, err := sql.EvaluateCondition(ctx, l.Cond, row)
			if err != nil {
				return nil, err
			}
			if !sql.IsTrue(ok) {
				return nil, nil
			}
		}
	}
	return row, nil
}

// over is the layers rebuilt over child: the row path's plan when the
// vector path gives up.
func (top *joinAggTopN) over(ctx *sql.Context, child sql.Node) (sql.Node, error) {
	for i := len(top.above) - 1; i >= 0; i-- {
		var err error
		if child, err = top.above[i].WithChildren(ctx, child); err != nil {
			return nil, err
		}
	}
	return child, nil
}

package vecexec

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// An ORDER BY ... LIMIT over a GROUP BY of one Iceberg scan that the
// vector path computes (vectorAggregate) picks its groups as it does over
// a join (vecjoinaggtopn.go): from the exact values, before any row is
// built. A GROUP BY of 100,000 groups kept 10 of them after building and
// sorting 100,000 rows on one goroutine.

// vectorAggNote is EXPLAIN's note on a scan whose GROUP BY runs on the
// vector path.
const vectorAggNote = "yes: filter, grouping and aggregates run on Arrow batches"

func (v *vectorAggregate) outputs() []vecOutput { return v.outs }

// newAggTopN translates a TopN over a vectorAggregate (directly or through
// its Project), or says why it cannot ("" when it is over something else);
// the vectorAggregate either way, when there is one.
func newAggTopN(ctx *sql.Context, n *plan.TopN, row sql.Row) (*joinAggTopN, *vectorAggregate, string) {
	var va *vectorAggregate
	top, why := newGroupsTopN(ctx, n, func(child sql.Node) (topNSource, string) {
		va, _ = child.(*vectorAggregate)
		if va == nil {
			return nil, ""
		}
		// Inside an outer scope the vectorAggregate itself runs its
		// original GroupBy (vecnode.go).
		if len(row) > 0 {
			return nil, "a subquery's outer row"
		}
		return va, ""
	})
	return top, va, why
}

// buildAggTopN is the exec builder's hook for a TopN over a
// vectorAggregate: its rows, or nil to build it on the row path. When the
// data leave the exact range, b builds the TopN over the original GroupBy
// rather than over the vectorAggregate, which would read the table again
// only to fall back itself.
func buildAggTopN(ctx *sql.Context, b sql.NodeExecBuilder, n *plan.TopN, row sql.Row) (sql.RowIter, error) {
	top, va, _ := newAggTopN(ctx, n, row)
	if top == nil {
		return nil, nil
	}
	rows, err := top.rows(ctx)
	if err != nil {
		return nil, err
	}
	if rows != nil {
		return sql.RowsToRowIter(rows...), nil
	}
	child, err := top.over(ctx, va.original)
	if err != nil {
		return nil, err
	}
	rowPath, err := n.WithChildren(ctx, child)
	if err != nil {
		return nil, err
	}
	return b.Build(ctx, rowPath, row)
}

// noteAggTopN tells EXPLAIN which ORDER BY ... LIMIT over a vectorized
// GROUP BY of one scan picks its groups on the vector path.
func noteAggTopN(ctx *sql.Context, n sql.Node) {
	if !VectorizeOn(ctx) {
		return
	}
	WalkPlan(ctx, n, func(n sql.Node) {
		tn, ok := n.(*plan.TopN)
		if !ok {
			return
		}
		top, va, why := newAggTopN(ctx, tn, nil)
		switch {
		case top != nil:
			va.t.ScanRef().VectorNote = vectorAggNote + "; " + top.note()
		case va != nil && why != "":
			va.t.ScanRef().VectorNote = vectorAggNote + "; the ORDER BY ... LIMIT runs on the row path: " + why
		}
	})
}

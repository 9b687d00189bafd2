package engine

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/icesql/icesql/pushdown/vector"
)

// An ORDER BY ... LIMIT over a vectorized join aggregate (TPC-H Q3 keeps
// the 10 largest of some 60,000 groups at SF1) picks its groups from the
// vector path's values, comparing exact sums and keys as numbers: only the
// groups it keeps become rows. go-mysql-server's TopN built a row per
// group and compared decimals through its type conversions, which cost
// about a tenth of the query.

// joinAggTopN is a TopN (over the GroupBy's Project, or the GroupBy) whose
// sort keys are each a grouping key or a SUM, COUNT, MIN or MAX.
type joinAggTopN struct {
	src   topNSource
	proj  *plan.Project // nil: the TopN is directly over the GroupBy
	limit int64
	by    []topNKey
}

// topNSource is a vectorized GROUP BY whose groups a TopN picks: a GROUP
// BY over a join (vectorJoinAgg) or over one scan (vectorAggregate).
type topNSource interface {
	outputs() []vecOutput
	run(*sql.Context) ([]vector.Group, error)
}

func (ja *vectorJoinAgg) outputs() []vecOutput { return ja.outs }

type topNKey struct {
	out  int // the GroupBy output sorted by
	desc bool
}

// newJoinAggTopN translates n, or says why it cannot.
func newJoinAggTopN(ctx *sql.Context, n *plan.TopN, row sql.Row) (*joinAggTopN, string) {
	return newGroupsTopN(ctx, n, func(child sql.Node) (topNSource, string) {
		gb, ok := child.(*plan.GroupBy)
		if !ok {
			return nil, ""
		}
		ja, why := newVectorJoinAgg(ctx, gb, row)
		if ja == nil {
			return nil, why
		}
		return ja, ""
	})
}

// newGroupsTopN translates n over the groups source finds under it (nil
// and "" when n is not over a GROUP BY it knows), or says why it cannot.
func newGroupsTopN(ctx *sql.Context, n *plan.TopN, source func(sql.Node) (topNSource, string)) (*joinAggTopN, string) {
	if n.CalcFoundRows {
		return nil, "SQL_CALC_FOUND_ROWS"
	}
	lit, ok := n.Limit.(*expression.Literal)
	if !ok {
		return nil, "a LIMIT that is not a constant"
	}
	limit, ok := intValue(lit.Value())
	if !ok || limit < 0 {
		return nil, "LIMIT " + lit.String()
	}
	top := &joinAggTopN{limit: limit}
	child := n.Child
	if p, ok := child.(*plan.Project); ok {
		// The projection is evaluated here on the kept groups' rows; a
		// subquery in it needs the row path's iterators.
		for _, e := range p.Projections {
			if transform.InspectExpr(ctx, e, func(_ *sql.Context, e sql.Expression) bool {
				_, sq := e.(*plan.Subquery)
				return sq
			}) {
				return nil, "a subquery in the selected columns"
			}
		}
		top.proj, child = p, p.Child
	}
	src, why := source(child)
	if src == nil {
		return nil, why
	}
	top.src = src
	for _, sc := range n.SortConditions {
		out, ok := top.sortedOutput(sc.Expr)
		switch {
		case !ok:
			return nil, "ORDER BY " + sc.Expr.String() + ", which is not a grouping key or an aggregate"
		case sc.NullOrdering != sql.NullsFirst:
			return nil, "ORDER BY " + sc.Expr.String() + " with NULLs last"
		case !sortable(src.outputs()[out]):
			return nil, "ORDER BY " + sc.Expr.String() + ", an average or a rounded sum, whose rounded values may tie"
		}
		top.by = append(top.by, topNKey{out: out, desc: sc.Order == sql.Descending})
	}
	return top, ""
}

// sortedOutput is the GroupBy output a sort expression reads, through the
// Project's column when there is one.
func (top *joinAggTopN) sortedOutput(e sql.Expression) (int, bool) {
	gf, ok := e.(*expression.GetField)
	if !ok {
		return 0, false
	}
	if top.proj != nil {
		if gf.Index() < 0 || gf.Index() >= len(top.proj.Projections) {
			return 0, false
		}
		inner, _ := unalias(top.proj.Projections[gf.Index()])
		if gf, ok = inner.(*expression.GetField); !ok {
			return 0, false
		}
	}
	if gf.Index() < 0 || gf.Index() >= len(top.src.outputs()) {
		return 0, false
	}
	return gf.Index(), true
}

// sortable says the vector path's value of o orders as the row path's:
// keys, exact sums at one scale, counts, MIN and MAX. An AVG, or a SUM
// rounded to fewer decimals than its argument has, is compared after
// rounding, which may tie where the exact values do not.
func sortable(o vecOutput) bool {
	if o.key >= 0 {
		return true
	}
	if o.exact != nil {
		return !o.exact.avg && int32(o.exact.typ.Scale()) >= o.scale
	}
	switch o.fn {
	case vector.CountStar, vector.Count, vector.CountDistinct, vector.Sum, vector.Min, vector.Max:
		return true
	}
	return false
}

// compareOutput orders groups a and b by output o, NULL first, as ascending.
func compareOutput(o vecOutput, a, b *vector.Group) int {
	if o.key >= 0 {
		return compareValues(a.Keys[o.key], b.Keys[o.key])
	}
	x, y := a.Aggs[o.agg], b.Aggs[o.agg]
	switch o.fn {
	case vector.CountStar, vector.Count, vector.CountDistinct:
		return cmp.Compare(x.Count, y.Count)
	}
	if x.Null || y.Null {
		return compareNulls(x.Null, y.Null)
	}
	if o.fn == vector.Sum {
		return x.Sum.Cmp(y.Sum)
	}
	return compareValues(x.Val, y.Val)
}

func compareNulls(x, y bool) int {
	switch {
	case x && y:
		return 0
	case x:
		return -1
	}
	return 1
}

// compareValues orders keys and MIN/MAX values: numbers (one kind and
// scale per output) by I, strings bytewise (the translator takes only
// binary collations), both zero for the other kind.
func compareValues(x, y vector.Value) int {
	if x.Null || y.Null {
		return compareNulls(x.Null, y.Null)
	}
	if c := cmp.Compare(x.I, y.I); c != 0 {
		return c
	}
	return bytes.Compare([]byte(x.S), []byte(y.S))
}

// compare orders groups a and b as the ORDER BY does.
func (top *joinAggTopN) compare(a, b *vector.Group) int {
	for _, k := range top.by {
		c := compareOutput(top.src.outputs()[k.out], a, b)
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// pick is the first limit groups in sort order.
func (top *joinAggTopN) pick(groups []vector.Group) []vector.Group {
	n := int(min(top.limit, int64(len(groups))))
	if n == 0 {
		return nil
	}
	if n > 64 {
		slices.SortStableFunc(groups, func(a, b vector.Group) int { return top.compare(&a, &b) })
		return groups[:n]
	}
	// Keep the best n in order; most groups lose to the worst kept one.
	kept := make([]vector.Group, 0, n+1)
	for i := range groups {
		g := &groups[i]
		if len(kept) == n && top.compare(g, &kept[n-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(kept, g, func(k vector.Group, g *vector.Group) int {
			if top.compare(&k, g) <= 0 {
				return -1
			}
			return 1
		})
		kept = slices.Insert(kept, at, *g)
		if len(kept) > n {
			kept = kept[:n]
		}
	}
	return kept
}

// buildJoinAggTopN is the exec builder's hook for a TopN: its rows, or
// nil to build it on the row path.
func buildJoinAggTopN(ctx *sql.Context, n *plan.TopN, row sql.Row) (sql.RowIter, error) {
	top, _ := newJoinAggTopN(ctx, n, row)
	if top == nil {
		return nil, nil
	}
	rows, err := top.rows(ctx)
	if rows == nil || err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(rows...), nil
}

// rows is the TopN's rows, or nil and no error when the row path is to
// answer instead (rowPathAnswers).
func (top *joinAggTopN) rows(ctx *sql.Context) ([]sql.Row, error) {
	groups, err := top.src.run(ctx)
	if rowPathAnswers(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := groupRows(top.src.outputs(), top.pick(groups))
	if err != nil {
		return nil, err
	}
	if top.proj != nil {
		for i, r := range rows {
			out := make(sql.Row, len(top.proj.Projections))
			for j, e := range top.proj.Projections {
				if out[j], err = e.Eval(ctx, r); err != nil {
					return nil, err
				}
			}
			rows[i] = out
		}
	}
	return rows, nil
}

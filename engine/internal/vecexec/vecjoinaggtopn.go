package vecexec

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/icesql/icesql/pushdown/vector"
)

// An ORDER BY ... LIMIT over a vectorized join aggregate (TPC-H Q3 keeps
// the 10 largest of some 60,000 groups at SF1) picks its groups from the
// vector path's values, comparing exact sums and keys as numbers: only the
// groups it keeps become rows. go-mysql-server's TopN built a row per
// group and compared decimals through its type conversions, which cost
// about a tenth of the query.

// joinAggTopN is a TopN (over the GroupBy's Project and a HAVING, or the
// GroupBy) whose sort keys are each a grouping key, a SUM, COUNT, MIN, MAX
// or AVG, or computed from them (vecaggtopn_computed.go).
type joinAggTopN struct {
	src topNSource
	// above is the Projects and Havings between the TopN and the GroupBy,
	// the one under the TopN first (vecaggtopn_layers.go).
	above []sql.Node
	limit int64
	by    []topNKey
	// ctx and err serve the comparison of computed keys, which evaluates
	// go-mysql-server's Compare.
	ctx *sql.Context
	err error
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
	// derived is the index in each group's Aggs of the rounded AVG the
	// key compares (vecaggtopn_avg.go), or of its computed value's index
	// in comp.vals; -1 for neither.
	derived int
	comp    *computed // a computed key's expression; nil for an output
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
	limit, ok := numberValue(lit.Value())
	if !ok || limit < 0 {
		return nil, "LIMIT " + lit.String()
	}
	top := &joinAggTopN{limit: limit}
	above, child, layersWhy := topNLayers(ctx, n.Child)
	top.above = above
	src, why := source(child)
	if src == nil {
		return nil, why
	}
	if layersWhy != "" {
		return nil, layersWhy
	}
	top.src = src
	for _, sc := range n.SortConditions {
		if sc.NullOrdering != sql.NullsFirst {
			return nil, "ORDER BY " + sc.Expr.String() + " with NULLs last"
		}
		key := topNKey{out: -1, desc: sc.Order == sql.Descending, derived: -1}
		if out, ok := top.sortedOutput(sc.Expr); ok && sortable(src.outputs()[out]) {
			key.out = out
		} else if e, reads, why := top.computedKey(ctx, sc.Expr); why == "" {
			key.comp = &computed{expr: e, reads: reads, typ: sc.Expr.Type(ctx)}
		} else {
			return nil, "ORDER BY " + sc.Expr.String() + ", " + why
		}
		top.by = append(top.by, key)
	}
	return top, ""
}

// sortable says the vector path's value of o orders as the row path's:
// keys, exact sums at one scale, counts, MIN and MAX, and AVGs through
// their rounded values (vecaggtopn_avg.go). A SUM rounded to fewer
// decimals than its argument has is compared after rounding, which may
// tie where the exact values do not.
func sortable(o vecOutput) bool {
	if o.key >= 0 || averaged(o) {
		return true
	}
	if o.exact != nil {
		return !o.exact.Avg && int32(o.exact.Typ.Scale()) >= o.scale
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
		var c int
		switch {
		case k.comp != nil:
			c = top.compareComputed(k.comp, a.Aggs[k.derived], b.Aggs[k.derived])
		case k.derived >= 0:
			c = compareRounded(a.Aggs[k.derived], b.Aggs[k.derived])
		default:
			c = compareOutput(top.src.outputs()[k.out], a, b)
		}
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// picked is a group the TopN keeps, and its row once built.
type picked struct {
	g   *vector.Group
	row sql.Row
}

// pick is the first limit groups in sort order that a HAVING (if any)
// accepts, with their rows for those it evaluated HAVING on.
func (top *joinAggTopN) pick(ctx *sql.Context, groups []vector.Group) ([]picked, error) {
	n := int(min(top.limit, int64(len(groups))))
	if n == 0 {
		return nil, nil
	}
	having := top.hasHaving()
	accept := func(g *vector.Group) (picked, bool, error) {
		if !having {
			return picked{g: g}, true, nil
		}
		row, err := top.finish(ctx, g)
		return picked{g: g, row: row}, row != nil, err
	}
	if n > 64 {
		slices.SortStableFunc(groups, func(a, b vector.Group) int { return top.compare(&a, &b) })
		kept := make([]picked, 0, n)
		for i := range groups {
			if len(kept) == n {
				break
			}
			p, ok, err := accept(&groups[i])
			if err != nil {
				return nil, err
			}
			if ok {
				kept = append(kept, p)
			}
		}
		return kept, nil
	}
	// Keep the best n in order; most groups lose to the worst kept one,
	// and HAVING is evaluated only on those that do not.
	kept := make([]picked, 0, n+1)
	for i := range groups {
		g := &groups[i]
		if len(kept) == n && top.compare(g, kept[n-1].g) >= 0 {
			continue
		}
		p, ok, err := accept(g)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		at, _ := slices.BinarySearchFunc(kept, g, func(k picked, g *vector.Group) int {
			if top.compare(k.g, g) <= 0 {
				return -1
			}
			return 1
		})
		kept = slices.Insert(kept, at, p)
		if len(kept) > n {
			kept = kept[:n]
		}
	}
	return kept, nil
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
	top.ctx = ctx
	if err := top.derive(ctx, groups); err != nil {
		// A computed key failed on some group; the row path evaluates
		// it only on the groups HAVING keeps, and decides whether the
		// query fails.
		return nil, nil
	}
	kept, err := top.pick(ctx, groups)
	if err != nil {
		return nil, err
	}
	if top.err != nil {
		return nil, nil
	}
	rows := make([]sql.Row, 0, len(kept))
	for _, p := range kept {
		if p.row == nil {
			if p.row, err = top.finish(ctx, p.g); err != nil {
				return nil, err
			}
		}
		rows = append(rows, p.row)
	}
	return rows, nil
}

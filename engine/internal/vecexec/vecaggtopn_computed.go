package vecexec

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/icesql/icesql/pushdown/vector"
)

// A sort key computed from the groups' values (ORDER BY SUM(a) - SUM(b),
// or the alias of such a column) is evaluated once per group by
// go-mysql-server's own expression, on a row holding only the GroupBy
// outputs it reads, and compared as go-mysql-server's TopN compares
// (sorters.RowSorter: NULL first, then the expression type's Compare). It
// orders exactly as on the row path because it is the row path's
// arithmetic on the row path's values; only no full row is built, and the
// rows the TopN does not keep never are.

// computedKey is the sort expression e rewritten over the GroupBy's
// outputs (through the Projects' columns), and the outputs it reads; or
// why not.
func (top *joinAggTopN) computedKey(ctx *sql.Context, e sql.Expression) (sql.Expression, []int, string) {
	const notOutputs = "which reads more than the grouping keys and aggregates"
	if why := unstable(ctx, e); why != "" {
		return nil, nil, why
	}
	ok := true
	for _, l := range top.above {
		p, isProject := l.(*plan.Project)
		if !isProject {
			continue
		}
		var err error
		e, _, err = transform.Expr(ctx, e, func(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			gf, isField := e.(*expression.GetField)
			if !isField {
				return e, transform.SameTree, nil
			}
			if gf.Index() < 0 || gf.Index() >= len(p.Projections) {
				ok = false
				return e, transform.SameTree, nil
			}
			inner, _ := unalias(p.Projections[gf.Index()])
			return inner, transform.NewTree, nil
		})
		if err != nil || !ok {
			return nil, nil, notOutputs
		}
		if why := unstable(ctx, e); why != "" {
			return nil, nil, why
		}
	}
	if hasAggregation(ctx, e) {
		// An aggregate left over the GroupBy's rows is not one of its
		// outputs: only the row path evaluates it.
		return nil, nil, notOutputs
	}
	var reads []int
	n := len(top.src.outputs())
	transform.InspectExpr(ctx, e, func(_ *sql.Context, e sql.Expression) bool {
		if gf, isField := e.(*expression.GetField); isField {
			if gf.Index() < 0 || gf.Index() >= n {
				ok = false
			} else {
				reads = append(reads, gf.Index())
			}
		}
		return !ok
	})
	if !ok {
		return nil, nil, notOutputs
	}
	return e, reads, ""
}

// unstable says why e cannot be evaluated once per group here: a
// subquery needs the row path's iterators, and a non-deterministic
// expression is evaluated once per comparison there.
func unstable(ctx *sql.Context, e sql.Expression) string {
	switch {
	case hasSubquery(ctx, e):
		return "a subquery"
	case nondeterministic(ctx, e):
		return "which is not deterministic"
	}
	return ""
}

func nondeterministic(ctx *sql.Context, e sql.Expression) bool {
	return transform.InspectExpr(ctx, e, func(_ *sql.Context, e sql.Expression) bool {
		nd, is := e.(sql.NonDeterministicExpression)
		return is && nd.IsNonDeterministic()
	})
}

// computed is a computed sort key's expression over the GroupBy's row,
// the outputs it reads, the sort expression's type, and at run time each
// group's value.
type computed struct {
	expr  sql.Expression
	reads []int
	typ   sql.Type
	vals  []any
}

// derive widens every group's Aggs (one allocation for all groups) with a
// slot per AVG or computed sort key, and points the keys at it: an AVG's
// rounded value, or the index in the key's vals of the group's computed
// value.
func (top *joinAggTopN) derive(ctx *sql.Context, groups []vector.Group) error {
	var keys []int
	for i, k := range top.by {
		if k.comp != nil || averaged(top.src.outputs()[k.out]) {
			keys = append(keys, i)
		}
	}
	if len(keys) == 0 || len(groups) == 0 {
		return nil
	}
	outs := top.src.outputs()
	width := len(groups[0].Aggs)
	slab := make([]vector.AggValue, len(groups)*(width+len(keys)))
	for _, ki := range keys {
		if c := top.by[ki].comp; c != nil {
			c.vals = make([]any, len(groups))
		}
	}
	row := make(sql.Row, len(outs))
	for gi := range groups {
		g := &groups[gi]
		aggs := slab[: width+len(keys) : width+len(keys)]
		slab = slab[len(aggs):]
		copy(aggs, g.Aggs)
		for j, ki := range keys {
			k := top.by[ki]
			if k.comp == nil {
				o := outs[k.out]
				aggs[width+j] = roundedAvg(o, g.Aggs[o.agg])
				continue
			}
			if err := fillRow(row, outs, g, k.comp.reads); err != nil {
				return err
			}
			v, err := k.comp.expr.Eval(ctx, row)
			if err != nil {
				return err
			}
			k.comp.vals[gi] = v
			aggs[width+j] = vector.AggValue{Count: int64(gi)}
		}
		g.Aggs = aggs
	}
	for j, ki := range keys {
		top.by[ki].derived = width + j
	}
	return nil
}

// fillRow sets the outputs reads of row to group g's values.
func fillRow(row sql.Row, outs []vecOutput, g *vector.Group, reads []int) error {
	for _, j := range reads {
		o := outs[j]
		if o.key >= 0 {
			row[j] = nil
			if k := g.Keys[o.key]; !k.Null {
				row[j] = o.value(k)
			}
			continue
		}
		v, err := o.aggregateValue(g.Aggs[o.agg])
		if err != nil {
			return err
		}
		row[j] = v
	}
	return nil
}

// compareComputed orders two groups' computed values as RowSorter does,
// ascending; an error stops the TopN (top.err).
func (top *joinAggTopN) compareComputed(c *computed, x, y vector.AggValue) int {
	a, b := c.vals[x.Count], c.vals[y.Count]
	if a == nil || b == nil {
		return compareNulls(a == nil, b == nil)
	}
	r, err := c.typ.Compare(top.ctx, a, b)
	if err != nil && top.err == nil {
		top.err = err
	}
	return r
}

package vecexec

import (
	"math/big"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/icesql/icesql/pushdown/vector"
)

// A HAVING over a vectorized GROUP BY hands the aggregation the conjuncts
// it can decide on its exact accumulators (vector.Bound: an aggregate
// compared with a numeric constant), so that the groups they reject are
// never built as rows. The Having stays in the plan and decides every
// group left: the bounds only drop groups it would drop, so its answer is
// the row path's. TPC-H Q18's inner GROUP BY keeps 57 of 1.5 million groups.

// pushHaving is h with the bounds of its conjuncts given to the
// vectorAggregate under it (through the Projects between them), or nil
// when there is no such aggregate or no conjunct translates. It runs as
// the plan is built, when the column indexes are final.
func pushHaving(ctx *sql.Context, h *plan.Having) (sql.Node, error) {
	var layers []*plan.Project
	child := h.Child
	for {
		p, ok := child.(*plan.Project)
		if !ok {
			break
		}
		layers = append(layers, p)
		child = p.Child
	}
	va, ok := child.(*vectorAggregate)
	// An aggregate with bounds already is this function's own result,
	// being built.
	if !ok || len(va.plan.Having) > 0 || nondeterministic(ctx, h.Cond) || hasSubquery(ctx, h.Cond) {
		return nil, nil
	}
	var bounds []vector.Bound
	for _, c := range expression.SplitConjunction(ctx, h.Cond) {
		if b, ok := va.bound(ctx, c, layers); ok {
			bounds = append(bounds, b)
		}
	}
	if len(bounds) == 0 {
		return nil, nil
	}
	p := *va.plan
	p.Having = append(slices.Clip(p.Having), bounds...)
	if err := p.Check(); err != nil {
		return nil, nil
	}
	nva := *va
	nva.plan = &p
	var out sql.Node = &nva
	for i := len(layers) - 1; i >= 0; i-- {
		var err error
		if out, err = layers[i].WithChildren(ctx, out); err != nil {
			return nil, err
		}
	}
	return h.WithChildren(ctx, out)
}

// bound translates one HAVING conjunct, c, read on the row of the first
// of layers (the vectorAggregate's own when there are none): an aggregate
// of the GROUP BY compared with a numeric literal, either side.
func (va *vectorAggregate) bound(ctx *sql.Context, c sql.Expression, layers []*plan.Project) (vector.Bound, bool) {
	var op vector.CmpOp
	var l, r sql.Expression
	switch e := c.(type) {
	case *expression.Equals:
		op, l, r = vector.EQ, e.Left(), e.Right()
	case *expression.LessThan:
		op, l, r = vector.LT, e.Left(), e.Right()
	case *expression.LessThanOrEqual:
		op, l, r = vector.LE, e.Left(), e.Right()
	case *expression.GreaterThan:
		op, l, r = vector.GT, e.Left(), e.Right()
	case *expression.GreaterThanOrEqual:
		op, l, r = vector.GE, e.Left(), e.Right()
	default:
		return vector.Bound{}, false
	}
	gf, ok := l.(*expression.GetField)
	lit, isLit := r.(*expression.Literal)
	if !ok || !isLit {
		// constant op aggregate is aggregate op' constant.
		gf, ok = r.(*expression.GetField)
		lit, isLit = l.(*expression.Literal)
		if !ok || !isLit {
			return vector.Bound{}, false
		}
		op = map[vector.CmpOp]vector.CmpOp{vector.EQ: vector.EQ, vector.LT: vector.GT, vector.LE: vector.GE, vector.GT: vector.LT, vector.GE: vector.LE}[op]
	}
	out, ok := va.outputOf(gf, layers)
	if !ok {
		return vector.Bound{}, false
	}
	o := va.outs[out]
	if o.agg < 0 {
		return vector.Bound{}, false
	}
	tr := &VecTranslator{Ctx: ctx, T: va.t, Cols: map[string]bool{}}
	k, err := tr.literal(lit)
	if err != nil || k.Null || (k.T.Kind != vector.Int && k.T.Kind != vector.Decimal) {
		return vector.Bound{}, false
	}
	// The literal as an exact rational, in the aggregate's unit.
	value := new(big.Rat).SetFrac(big.NewInt(k.I), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k.T.Scale)), nil))
	switch o.fn {
	case vector.CountStar, vector.Count, vector.CountDistinct:
		// go-mysql-server compares a count with a decimal through
		// float64s; with an integer, exactly.
		if k.T.Kind != vector.Int {
			return vector.Bound{}, false
		}
	case vector.Sum:
		exactDecimal := o.exact != nil || o.kind == vector.Decimal
		if !exactDecimal {
			// A float64 sum (exact below 2^53, else the row path runs)
			// is compared with an integer exactly, with a decimal
			// through a float64 conversion of the decimal.
			if k.T.Kind != vector.Int || k.I >= 1<<53 || k.I <= -(1<<53) {
				return vector.Bound{}, false
			}
		}
		value.Mul(value, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(o.scale)), nil)))
	default:
		return vector.Bound{}, false
	}
	return vector.Bound{Agg: o.agg, Op: op, Value: value}, true
}

// outputOf is the index of the vectorAggregate output that gf, read on
// the row of layers[0], names through the Projects' columns.
func (va *vectorAggregate) outputOf(gf *expression.GetField, layers []*plan.Project) (int, bool) {
	for _, p := range layers {
		if gf.Index() < 0 || gf.Index() >= len(p.Projections) {
			return 0, false
		}
		inner, _ := unalias(p.Projections[gf.Index()])
		var ok bool
		if gf, ok = inner.(*expression.GetField); !ok {
			return 0, false
		}
	}
	if gf.Index() < 0 || gf.Index() >= len(va.outs) {
		return 0, false
	}
	return gf.Index(), true
}

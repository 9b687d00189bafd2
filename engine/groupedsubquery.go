package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/icesql/icesql/engine/internal/planrules"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// go-mysql-server runs a correlated scalar subquery once per outer row: it
// rewrites the subquery's plan to prepend the outer row to every row
// source (plan.PrependRowInPlan), builds its iterators and aggregates its
// rows again. TPC-H Q17's
//
//	l_quantity < (SELECT 0.2 * AVG(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)
//
// aggregated a part's lineitem rows for every outer row of that part, and a
// range correlation (q.k < l.k) aggregated the whole inner table for every
// outer row.
//
// groupCorrelatedSubqueries decorrelates a scalar subquery that aggregates
// without GROUP BY: it becomes a left hash join of the outer row with the
// subquery's rows grouped by the inner sides of its correlated equalities
// (q.k = l.k). The subquery's source, without its correlated conjuncts, is
// read once per statement and aggregated by key; each outer row looks up
// its group by the outer sides. An outer row with no group (a NULL key, a
// key no row has) gets the aggregates of no rows from the aggregates' own
// buffers, so COUNT is 0 and SUM, AVG, MIN and MAX are NULL, as the
// subquery answers. Correlated conjuncts that are not such equalities
// (q.k < l.k) are checked for each outer row on its group's rows, kept in
// memory: the source is still read once per statement, and a range on an
// ordered key keeps the rows sorted so that each outer row aggregates only
// the run that passes.
//
// Only the subquery's own filters and inner joins are searched for
// correlated conjuncts; one anywhere else (an outer join, a derived table,
// the aggregate's argument) leaves the subquery as it was, and so does
// anything the rewrite cannot check at run time (see fits).

var registerDecorrelateVar sync.Once

// addDecorrelateVar declares icesql_decorrelate; go-mysql-server's system
// variables are process-wide.
func addDecorrelateVar() {
	registerDecorrelateVar.Do(func() {
		sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{sqlval.SwitchVariable(planrules.DecorrelateVar)})
	})
}

// maxGroupKeys bounds the correlated equalities a subquery is grouped by.
const maxGroupKeys = 4

// thenGroupCorrelatedSubqueries runs go-mysql-server's assignExecIndexes,
// then replaces the correlated scalar aggregate subqueries of a read-only
// statement with groupedSubquery expressions: they read the column
// positions assignExecIndexes gives, and it does not see into them.
func thenGroupCorrelatedSubqueries(assignExecIndexes analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		n, same, err := assignExecIndexes(ctx, a, n, scope, sel, qf)
		if err != nil || !n.IsReadOnly() || !sqlval.SwitchedOn(ctx, planrules.DecorrelateVar) {
			// A write's subquery could read rows the statement changes.
			return n, same, err
		}
		n, grouped, err := groupSubqueriesIn(ctx, a.ExecBuilder, n)
		return n, same && grouped, err
	}
}

// groupSubqueriesIn rewrites the subqueries of every node of n.
func groupSubqueriesIn(ctx *sql.Context, b sql.NodeExecBuilder, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		ex, ok := n.(sql.Expressioner)
		if !ok {
			return n, transform.SameTree, nil
		}
		exprs := ex.Expressions()
		out := make([]sql.Expression, len(exprs))
		same := transform.SameTree
		for i, e := range exprs {
			ne, s, err := groupSubqueriesInExpr(ctx, b, e, true)
			if err != nil {
				return n, transform.SameTree, err
			}
			out[i], same = ne, same && s
		}
		if same {
			return n, transform.SameTree, nil
		}
		nn, err := ex.WithExpressions(ctx, out...)
		return nn, transform.NewTree, err
	})
}

// groupSubqueriesInExpr rewrites the subqueries within e, top down, since
// IN and EXISTS need their subqueries as they are; scalar says e's value
// is used as a scalar.
func groupSubqueriesInExpr(ctx *sql.Context, b sql.NodeExecBuilder, e sql.Expression, scalar bool) (sql.Expression, transform.TreeIdentity, error) {
	if sq, ok := e.(*plan.Subquery); ok {
		q, same, err := groupSubqueriesIn(ctx, b, sq.Query)
		if err != nil {
			return e, transform.SameTree, err
		}
		if !same {
			sq = sq.WithQuery(q)
		}
		if scalar {
			if g := newGroupedSubquery(ctx, b, sq); g != nil {
				return g, transform.NewTree, nil
			}
		}
		return sq, same, nil
	}
	children := e.Children()
	if len(children) == 0 {
		return e, transform.SameTree, nil
	}
	out := make([]sql.Expression, len(children))
	same := transform.SameTree
	for i, c := range children {
		childScalar := true
		switch e.(type) {
		case *plan.InSubquery:
			childScalar = i == 0 // the left side, not the subquery
		case *plan.ExistsSubquery:
			childScalar = false
		}
		nc, s, err := groupSubqueriesInExpr(ctx, b, c, childScalar)
		if err != nil {
			return e, transform.SameTree, err
		}
		out[i], same = nc, same && s
	}
	if same {
		return e, transform.SameTree, nil
	}
	ne, err := e.WithChildren(ctx, out...)
	return ne, transform.NewTree, err
}

// groupedSubquery is a correlated scalar subquery run as a left hash join
// on its rows grouped by key (see groupCorrelatedSubqueries).
type groupedSubquery struct {
	original *plan.Subquery // what runs when the rewrite does not fit
	b        sql.NodeExecBuilder
	body     sql.Node // the subquery's rows, before its aggregate, without its correlated conjuncts
	// pulled are the correlated conjuncts taken out of body, over its rows
	// with the outer row prepended; they are innerKeys[i] = outerKeys[i]
	// and residual.
	pulled               []sql.Expression
	innerKeys, outerKeys []sql.Expression
	kinds                []planrules.KeyKind
	// rng is a conjunct inner < outer (or <=, >, >=) over an ordered key,
	// when one is among those that are not keys: a group's rows are kept
	// sorted by inner, and each outer row aggregates the run of them that
	// passes, found by binary search; nil when none.
	rng         *rangeCond
	residual    sql.Expression   // the other conjuncts; nil when none
	aggs        []sql.Expression // the aggregate's (GroupBy's SelectDeps)
	project     sql.Expression   // over the outer row and aggs; nil: aggs[0]
	retainsRows bool             // an aggregate keeps the rows it is given (GROUP_CONCAT)
	state       *groupedState    // shared by the expression's copies
}

var _ sql.Expression = (*groupedSubquery)(nil)

// rangeCond is inner op outer, op one of <, <=, > and >=, whose sides
// keyOf orders as = compares them: integers, dates and times, floats.
type rangeCond struct {
	inner, outer sql.Expression
	kind         planrules.KeyKind
	op           string
}

// newRangeCond is c as a rangeCond, or nil.
func newRangeCond(ctx *sql.Context, c sql.Expression, outer sql.ColSet) *rangeCond {
	cmp, ok := c.(expression.Comparer)
	if !ok {
		return nil
	}
	var op string
	switch c.(type) {
	case *expression.LessThan:
		op = "<"
	case *expression.LessThanOrEqual:
		op = "<="
	case *expression.GreaterThan:
		op = ">"
	case *expression.GreaterThanOrEqual:
		op = ">="
	default:
		return nil
	}
	in, out := cmp.Left(), cmp.Right()
	if !planrules.ReadsOnly(ctx, in, outer, false) {
		in, out = out, in
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	}
	if !planrules.ReadsOnly(ctx, in, outer, false) || !planrules.ReadsOnly(ctx, out, outer, true) {
		return nil
	}
	kind, ok := planrules.KeyKindOf(ctx, in.Type(ctx), out.Type(ctx))
	if !ok || (kind != planrules.KeyInt && kind != planrules.KeyTime && kind != planrules.KeyFloat) {
		return nil
	}
	return &rangeCond{inner: in, outer: out, kind: kind, op: op}
}

// perOuterRow says conditions beside the keys are checked for each outer
// row, on its group's rows.
func (g *groupedSubquery) perOuterRow() bool { return g.rng != nil || g.residual != nil }

// newGroupedSubquery is sq decorrelated, or nil when it does not have the
// shape: a correlated Project over a GroupBy without grouping expressions
// (or that GroupBy alone), of one column, whose correlated conjuncts are in
// the filters above its source and its inner joins, and read no outer
// column elsewhere but in the projection.
func newGroupedSubquery(ctx *sql.Context, b sql.NodeExecBuilder, sq *plan.Subquery) *groupedSubquery {
	outer := sq.Correlated()
	if outer.Empty() || sq.Volatile() || b == nil || holdsBindVar(ctx, sq.Query) {
		return nil
	}
	q := sq.Query
	var project sql.Expression
	if p, ok := q.(*plan.Project); ok {
		if len(p.Projections) != 1 || !evaluable(ctx, p.Projections[0]) {
			return nil
		}
		project, q = p.Projections[0], p.Child
	}
	gb, ok := q.(*plan.GroupBy)
	if !ok || len(gb.GroupByExprs) > 0 || (project == nil && len(gb.SelectDeps) != 1) || !aggregatesRows(gb.SelectDeps) {
		return nil
	}
	g := &groupedSubquery{original: sq, b: b, project: project, aggs: gb.SelectDeps, state: &groupedState{}}
	for _, a := range g.aggs {
		if !evaluable(ctx, a) || readsAnyOf(ctx, a, outer) {
			return nil
		}
		if _, ok := a.(*aggregation.GroupConcat); ok {
			g.retainsRows = true
		}
	}
	var ok2 bool
	if g.body, g.pulled, ok2 = pullCorrelated(ctx, gb.Child, outer); !ok2 || !independentOf(ctx, g.body, outer) {
		return nil
	}
	var residual []sql.Expression
	for _, c := range g.pulled {
		if !evaluable(ctx, c) {
			return nil
		}
		if in, out, kind, ok := correlatedKey(ctx, c, outer); ok && len(g.innerKeys) < maxGroupKeys {
			g.innerKeys, g.outerKeys, g.kinds = append(g.innerKeys, in), append(g.outerKeys, out), append(g.kinds, kind)
			continue
		}
		if g.rng == nil {
			if g.rng = newRangeCond(ctx, c, outer); g.rng != nil {
				continue
			}
		}
		residual = append(residual, c)
	}
	if len(residual) > 0 {
		g.residual = expression.JoinAnd(residual...)
		// Checked per pair of rows: a NULL operand must not cost an error
		// (sqlfunc/nullcompare.go).
		if c, ok, err := sqlfunc.NullFirstCondition(ctx, g.residual); err != nil {
			return nil
		} else if ok {
			g.residual = c
		}
	}
	return g
}

// holdsBindVar says a parameter of a prepared statement is within n:
// go-mysql-server binds it when the statement runs, and does not see into
// a groupedSubquery.
func holdsBindVar(ctx *sql.Context, n sql.Node) bool {
	found := false
	transform.InspectWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) bool {
		if ex, ok := n.(sql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				found = found || transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
					_, ok := e.(*expression.BindVar)
					return ok
				})
			}
		}
		return !found
	})
	return found
}

// aggregatesRows says exprs, a GroupBy's without grouping, give one row:
// an aggregate other than ANY_VALUE is among them.
func aggregatesRows(exprs []sql.Expression) bool {
	for _, e := range exprs {
		if _, ok := e.(sql.Aggregation); ok {
			if _, any := e.(*aggregation.AnyValue); !any {
				return true
			}
		}
	}
	return false
}

// evaluable says e can be evaluated on a row alone, once per row: it holds
// no subquery and nothing nondeterministic (readsOuterOnlyBesides).
func evaluable(ctx *sql.Context, e sql.Expression) bool {
	return planrules.ReadsOuterOnlyBesides(ctx, e)
}

// readsAnyOf says e reads a column of cols.
func readsAnyOf(ctx *sql.Context, e sql.Expression, cols sql.ColSet) bool {
	return transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
		gf, ok := e.(*expression.GetField)
		return ok && cols.Contains(gf.Id())
	})
}

// correlatedKey splits c into the inner and outer sides of an equality
// that can group: inner reads only the subquery's columns, outer only
// outer ones, and = compares their values as keyOf does.
func correlatedKey(ctx *sql.Context, c sql.Expression, outer sql.ColSet) (inner, out sql.Expression, kind planrules.KeyKind, ok bool) {
	eq, isEq := c.(*expression.Equals)
	if !isEq {
		return nil, nil, 0, false
	}
	inner, out = eq.Left(), eq.Right()
	if !planrules.ReadsOnly(ctx, inner, outer, false) {
		inner, out = out, inner
	}
	if !planrules.ReadsOnly(ctx, inner, outer, false) || !planrules.ReadsOnly(ctx, out, outer, true) {
		return nil, nil, 0, false
	}
	kind, ok = planrules.KeyKindOf(ctx, inner.Type(ctx), out.Type(ctx))
	return inner, out, kind, ok
}

// pullCorrelated is n without the conjuncts of its filters that read outer
// columns, through inner joins, and those conjuncts with their inner
// columns at their positions in n's rows. Nodes of other kinds are kept
// whole (independentOf then tells whether they read outer columns).
func pullCorrelated(ctx *sql.Context, n sql.Node, outer sql.ColSet) (sql.Node, []sql.Expression, bool) {
	switch n := n.(type) {
	case *planrules.KeyedSource:
		// planrules/correlated.go keyed the source by an equality the filter above
		// still checks; grouped, it is read once anyway.
		return pullCorrelated(ctx, n.Source, outer)
	case *plan.Filter:
		child, pulled, ok := pullCorrelated(ctx, n.Child, outer)
		if !ok {
			return nil, nil, false
		}
		var keep []sql.Expression
		for _, c := range expression.SplitConjunction(ctx, n.Expression) {
			if readsAnyOf(ctx, c, outer) {
				pulled = append(pulled, c)
			} else {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return child, pulled, true
		}
		return plan.NewFilter(ctx, expression.JoinAnd(keep...), child), pulled, true
	case *plan.HashLookup:
		// The hashed side of a hash join (the join planner may put the
		// filtered table there); its rows are its child's, so pulled
		// conjuncts keep their positions, and the table is hashed once.
		child, pulled, ok := pullCorrelated(ctx, n.Child, outer)
		if !ok || len(pulled) == 0 {
			return n, nil, ok
		}
		nh, err := n.WithChildren(ctx, child)
		if err != nil {
			return nil, nil, false
		}
		return nh, pulled, true
	case *plan.JoinNode:
		switch n.Op {
		case plan.JoinTypeInner, plan.JoinTypeCross, plan.JoinTypeHash, plan.JoinTypeCrossHash:
		default:
			return n, nil, true
		}
		left, lp, ok := pullCorrelated(ctx, n.Left(), outer)
		if !ok {
			return nil, nil, false
		}
		right, rp, ok := pullCorrelated(ctx, n.Right(), outer)
		if !ok {
			return nil, nil, false
		}
		if len(lp)+len(rp) == 0 {
			return n, nil, true
		}
		// The right side's rows follow the left side's in the join's.
		width := len(n.Left().Schema(ctx))
		for _, c := range rp {
			moved, _, err := transform.Expr(ctx, c, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				if gf, ok := e.(*expression.GetField); ok && !outer.Contains(gf.Id()) {
					return gf.WithIndex(gf.Index() + width), transform.NewTree, nil
				}
				return e, transform.SameTree, nil
			})
			if err != nil {
				return nil, nil, false
			}
			lp = append(lp, moved)
		}
		nj, err := n.WithChildren(ctx, left, right)
		if err != nil {
			return nil, nil, false
		}
		return nj, lp, true
	}
	return n, nil, true
}

// independentOf says no expression of n reads a column of outer, holds a
// subquery or anything nondeterministic, and n holds no derived table that
// sees outer scopes: n gives the same rows for every outer row.
func independentOf(ctx *sql.Context, n sql.Node, outer sql.ColSet) bool {
	ok := true
	transform.InspectWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) bool {
		if sa, isAlias := n.(*plan.SubqueryAlias); isAlias && (sa.OuterScopeVisibility || sa.IsLateral) {
			ok = false
		}
		if ex, isEx := n.(sql.Expressioner); isEx {
			for _, e := range ex.Expressions() {
				if !evaluable(ctx, e) || readsAnyOf(ctx, e, outer) {
					ok = false
				}
			}
		}
		return ok
	})
	return ok
}

// fits checks, on the first outer row of a statement, what the rule took
// from go-mysql-server's column positions: every column the body reads is
// one of its rows' (past the outer row), and every inner column of the
// pulled conjuncts and the aggregates is at the position of a column of
// that name in the body's rows. A plan where this fails runs as it was.
func (g *groupedSubquery) fits(ctx *sql.Context, scope int) bool {
	ok := true
	transform.Inspect(g.body, func(n sql.Node) bool {
		if _, isAlias := n.(*plan.SubqueryAlias); isAlias {
			return false // its columns are its own, with no outer row
		}
		if ex, isEx := n.(sql.Expressioner); isEx {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
					if gf, isField := e.(*expression.GetField); isField && gf.Index() < scope {
						ok = false
					}
					return !ok
				})
			}
		}
		return ok
	})
	sch := g.body.Schema(ctx)
	outer := g.original.Correlated()
	for _, e := range append(append([]sql.Expression{}, g.pulled...), g.aggs...) {
		transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
			gf, isField := e.(*expression.GetField)
			if !isField {
				return false
			}
			if outer.Contains(gf.Id()) {
				ok = ok && gf.Index() < scope
				return !ok
			}
			i := gf.Index() - scope
			ok = ok && i >= 0 && i < len(sch) && strings.EqualFold(sch[i].Name, gf.Name()) &&
				(sch[i].Source == "" || gf.Table() == "" || strings.EqualFold(sch[i].Source, gf.Table()))
			return !ok
		})
	}
	return ok
}

func (g *groupedSubquery) Resolved() bool                   { return g.original.Resolved() }
func (g *groupedSubquery) IsNullable(ctx *sql.Context) bool { return true }
func (g *groupedSubquery) Type(ctx *sql.Context) sql.Type   { return g.original.Type(ctx) }
func (g *groupedSubquery) Children() []sql.Expression       { return nil }
func (g *groupedSubquery) DebugString(ctx *sql.Context) string {
	return g.Describe(ctx, sql.DescribeOptions{Debug: true})
}

func (g *groupedSubquery) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(g, len(children), 0)
	}
	return g, nil
}

// String is what EXPLAIN shows in place of the subquery: a join.
func (g *groupedSubquery) String() string {
	return fmt.Sprintf("GroupedLeftJoin(%s)", g.original.QueryString)
}

// how says how the subquery runs, for EXPLAIN.
func (g *groupedSubquery) how() string {
	var on []string
	for i := range g.innerKeys {
		on = append(on, fmt.Sprintf("%s = %s", g.innerKeys[i], g.outerKeys[i]))
	}
	s := "decorrelated: the subquery's rows are read once per statement"
	if len(on) > 0 {
		s += ", grouped by key and left joined on " + strings.Join(on, " AND ")
	}
	if g.rng != nil {
		s += fmt.Sprintf("; each group's rows are sorted by %s, and each outer row aggregates those where %s %s %s", g.rng.inner, g.rng.inner, g.rng.op, g.rng.outer)
	}
	if g.residual != nil {
		s += fmt.Sprintf("; %s is checked on the rows of each outer row's group", g.residual)
	}
	if !g.perOuterRow() {
		s += "; an outer row with no group gets the aggregates of no rows"
	}
	return s
}

// groupedSubqueryJoins are EXPLAIN's lines on the joins the grouped
// subqueries of n's expressions run as.
func groupedSubqueryJoins(ctx *sql.Context, n sql.Node) []string {
	ex, ok := n.(sql.Expressioner)
	if !ok {
		return nil
	}
	var lines []string
	for _, e := range ex.Expressions() {
		transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
			if g, ok := e.(*groupedSubquery); ok {
				lines = append(lines, fmt.Sprintf("GroupedLeftJoin(outer row; %s): %s", joinSide(g.body), g.how()))
			}
			return false
		})
	}
	return lines
}

// Describe shows the join and the subquery's source below it.
func (g *groupedSubquery) Describe(ctx *sql.Context, opts sql.DescribeOptions) string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("%s", g)
	_ = p.WriteChildren(g.how(), sql.Describe(ctx, g.body, opts))
	return p.String()
}

// InnerPlan is the subquery's body, for the walks of a plan that enter subqueries.
func (g *groupedSubquery) InnerPlan() sql.Node { return g.body }

package engine

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
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
// memory: the source is still read once per statement.
//
// Only the subquery's own filters and inner joins are searched for
// correlated conjuncts; one anywhere else (an outer join, a derived table,
// the aggregate's argument) leaves the subquery as it was, and so does
// anything the rewrite cannot check at run time (see fits).

// decorrelateVar is the session variable that turns the rewrite off (SET
// icesql_decorrelate = OFF): an escape hatch, and the differential tests'
// way to the answers of the subquery run per outer row.
const decorrelateVar = "icesql_decorrelate"

var registerDecorrelateVar sync.Once

// addDecorrelateVar declares icesql_decorrelate; go-mysql-server's system
// variables are process-wide.
func addDecorrelateVar() {
	registerDecorrelateVar.Do(func() {
		sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{&sql.MysqlSystemVariable{
			Name:    decorrelateVar,
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemBoolType(decorrelateVar),
			Default: int8(1),
		}})
	})
}

// switchedOn says the boolean session variable name, ON by default, is on.
func switchedOn(ctx *sql.Context, name string) bool {
	v, err := ctx.GetSessionVariable(ctx, name)
	if err != nil {
		return true
	}
	switch v := v.(type) {
	case int8:
		return v != 0
	case bool:
		return v
	}
	return true
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
		if err != nil || !n.IsReadOnly() || !switchedOn(ctx, decorrelateVar) {
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
	kinds                []keyKind
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

// groupedState is a groupedSubquery's groups for one statement.
type groupedState struct {
	mu       sync.Mutex
	pid      uint64 // the statement they were read in
	built    bool
	fallback bool // the original subquery answers: the rewrite does not fit
	scope    int  // the length of the outer row
	groups   map[subqueryKey]*subqueryGroup
	empty    sql.Row // the aggregates of no rows
}

// subqueryKey is the key of a group: keyOf's values of the keys, in order.
type subqueryKey [maxGroupKeys]any

// subqueryGroup is the rows of one key.
type subqueryGroup struct {
	values []any // the keys' values, to tell apart strings of one hash
	bufs   []sql.AggregationBuffer
	aggs   sql.Row   // the aggregates, when every conjunct is a key
	rows   []keptRow // the body's rows otherwise (sorted by rng's key)
}

// keptRow is a body's row without the outer row, and its key for rng.
type keptRow struct {
	key any
	row sql.Row
}

// rangeCond is inner op outer, op one of <, <=, > and >=, whose sides
// keyOf orders as = compares them: integers, dates and times, floats.
type rangeCond struct {
	inner, outer sql.Expression
	kind         keyKind
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
	if !readsOnly(ctx, in, outer, false) {
		in, out = out, in
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	}
	if !readsOnly(ctx, in, outer, false) || !readsOnly(ctx, out, outer, true) {
		return nil
	}
	kind, ok := keyKindOf(ctx, in.Type(ctx), out.Type(ctx))
	if !ok || (kind != keyInt && kind != keyTime && kind != keyFloat) {
		return nil
	}
	return &rangeCond{inner: in, outer: out, kind: kind, op: op}
}

// compareKeys orders two keys of one rangeCond kind.
func compareRangeKeys(a, b any) int {
	switch a := a.(type) {
	case int64:
		return cmp.Compare(a, b.(int64))
	case float64:
		return cmp.Compare(a, b.(float64))
	}
	return 0
}

// passing is the run of rows (sorted by key) whose key passes the
// condition for the outer key v.
func (r *rangeCond) passing(rows []keptRow, v any) []keptRow {
	lo := sort.Search(len(rows), func(i int) bool { return compareRangeKeys(rows[i].key, v) >= 0 })
	hi := sort.Search(len(rows), func(i int) bool { return compareRangeKeys(rows[i].key, v) > 0 })
	switch r.op {
	case "<":
		return rows[:lo]
	case "<=":
		return rows[:hi]
	case ">":
		return rows[hi:]
	default:
		return rows[lo:]
	}
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
		// (nullcompare.go).
		if c, ok, err := nullFirstCondition(ctx, g.residual); err != nil {
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
func evaluable(ctx *sql.Context, e sql.Expression) bool { return readsOuterOnlyBesides(ctx, e) }

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
func correlatedKey(ctx *sql.Context, c sql.Expression, outer sql.ColSet) (inner, out sql.Expression, kind keyKind, ok bool) {
	eq, isEq := c.(*expression.Equals)
	if !isEq {
		return nil, nil, 0, false
	}
	inner, out = eq.Left(), eq.Right()
	if !readsOnly(ctx, inner, outer, false) {
		inner, out = out, inner
	}
	if !readsOnly(ctx, inner, outer, false) || !readsOnly(ctx, out, outer, true) {
		return nil, nil, 0, false
	}
	kind, ok = keyKindOf(ctx, inner.Type(ctx), out.Type(ctx))
	return inner, out, kind, ok
}

// pullCorrelated is n without the conjuncts of its filters that read outer
// columns, through inner joins, and those conjuncts with their inner
// columns at their positions in n's rows. Nodes of other kinds are kept
// whole (independentOf then tells whether they read outer columns).
func pullCorrelated(ctx *sql.Context, n sql.Node, outer sql.ColSet) (sql.Node, []sql.Expression, bool) {
	switch n := n.(type) {
	case *keyedSource:
		// correlated.go keyed the source by an equality the filter above
		// still checks; grouped, it is read once anyway.
		return pullCorrelated(ctx, n.source, outer)
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

// Eval answers the subquery for the outer row: its group's aggregates.
func (g *groupedSubquery) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	st := g.state
	st.mu.Lock()
	if !st.built || st.pid != ctx.Pid() {
		if err := g.read(ctx, row); err != nil {
			st.mu.Unlock()
			return nil, err
		}
	}
	fallback := st.fallback || st.scope != len(row)
	st.mu.Unlock()
	if fallback {
		return g.original.Eval(ctx, row)
	}
	grp, err := g.lookup(ctx, row)
	if err != nil {
		return nil, err
	}
	var vals sql.Row
	switch {
	case g.perOuterRow():
		if vals, err = g.aggregate(ctx, row, grp); err != nil {
			return nil, err
		}
	case grp != nil:
		vals = grp.aggs
	default:
		vals = st.empty
	}
	if g.project == nil {
		return vals[0], nil
	}
	full := make(sql.Row, len(row)+len(vals))
	copy(full, row)
	copy(full[len(row):], vals)
	return g.project.Eval(ctx, full)
}

// read reads the body's rows into their groups; st.mu is held.
func (g *groupedSubquery) read(ctx *sql.Context, row sql.Row) (err error) {
	st := g.state
	st.pid, st.built, st.fallback, st.scope, st.groups, st.empty = ctx.Pid(), true, false, len(row), map[subqueryKey]*subqueryGroup{}, nil
	if !g.fits(ctx, len(row)) {
		st.fallback = true
		return nil
	}
	defer func() {
		if err != nil {
			st.built, st.groups = false, nil
		}
	}()
	if st.empty, err = g.evalBuffers(ctx, nil); err != nil {
		return err
	}
	if !g.perOuterRow() {
		if done, err := g.readVectorized(ctx, len(row)); done || err != nil {
			return err
		}
	}
	return g.readRows(ctx, row)
}

// readVectorized groups the body's rows with a vectorized GROUP BY by the
// inner keys (vectorize.go), when it takes the body: a table read under a
// filter. The plan is the body's with the outer row's columns taken out
// of the positions, as a statement of its own. done is false when the
// vector path declines, or grouped two rows apart that keyOf takes for
// equal (then the row path groups them).
func (g *groupedSubquery) readVectorized(ctx *sql.Context, scope int) (done bool, err error) {
	unscoped := func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if gf, ok := e.(*expression.GetField); ok {
			return gf.WithIndex(gf.Index() - scope), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	}
	body, _, err := transform.NodeExprs(ctx, g.body, unscoped)
	if err != nil {
		return false, err
	}
	selected := append(append([]sql.Expression{}, g.innerKeys...), g.aggs...)
	for i, e := range selected {
		if selected[i], _, err = transform.Expr(ctx, e, unscoped); err != nil {
			return false, err
		}
	}
	n, same, err := vectorize(ctx, nil, plan.NewGroupBy(selected, selected[:len(g.innerKeys)], body), nil, nil, nil)
	if err != nil || same {
		return false, err
	}
	iter, err := g.b.Build(ctx, n, nil)
	if err != nil {
		return false, err
	}
	defer func() {
		if cerr := iter.Close(ctx); err == nil {
			err = cerr
		}
	}()
	keys := make([]sql.Expression, len(g.innerKeys))
	for i, k := range g.innerKeys {
		keys[i] = expression.NewGetField(i, k.Type(ctx), k.String(), true)
	}
	for {
		r, err := iter.Next(ctx)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		grp, err := g.group(ctx, keys, r, true)
		if errors.Is(err, errHashCollision) || (grp != nil && grp.aggs != nil) {
			g.state.groups = map[subqueryKey]*subqueryGroup{}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if grp != nil { // nil: a NULL key's group, which no outer row joins
			grp.aggs = r[len(keys):].Copy()
		}
	}
}

// readRows reads the body's rows on the row path. row, the first outer
// row, only pads them to the positions the body's expressions read, as
// go-mysql-server's subquery does.
func (g *groupedSubquery) readRows(ctx *sql.Context, row sql.Row) (err error) {
	st := g.state
	body, _, err := transform.Node(ctx, g.body, plan.PrependRowInPlan(row, false))
	if err != nil {
		return err
	}
	iter, err := g.b.Build(ctx, body, row)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := iter.Close(ctx); err == nil {
			err = cerr
		}
	}()
	for n := 1; ; n++ {
		r, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n%checkEvery == 0 && ctx.Memory != nil && !ctx.Memory.HasAvailable() {
			// The statement's memory (memlimit.go): run as it was.
			st.fallback, st.groups = true, nil
			return nil
		}
		grp, err := g.group(ctx, g.innerKeys, r, true)
		if errors.Is(err, errHashCollision) {
			st.fallback, st.groups = true, nil
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case grp == nil: // a NULL key equals nothing
		case g.perOuterRow():
			var key any
			if g.rng != nil {
				var ok bool
				if key, ok, err = keyOf(ctx, g.rng.kind, g.rng.inner, r); err != nil {
					return err
				} else if !ok {
					continue // NULL compares true with nothing
				}
			}
			grp.rows = append(grp.rows, keptRow{key: key, row: r[len(row):].Copy()})
		default:
			if grp.bufs == nil {
				if grp.bufs, err = newBuffers(ctx, g.aggs); err != nil {
					return err
				}
			}
			for _, b := range grp.bufs {
				if err := b.Update(ctx, r); err != nil {
					return err
				}
			}
		}
	}
	for _, grp := range st.groups {
		switch {
		case g.rng != nil:
			slices.SortStableFunc(grp.rows, func(a, b keptRow) int { return compareRangeKeys(a.key, b.key) })
		case !g.perOuterRow():
			if grp.aggs, err = g.evalBuffers(ctx, grp.bufs); err != nil {
				return err
			}
			grp.bufs = nil
		}
	}
	return nil
}

// lookup is the outer row's group; nil when it has none.
func (g *groupedSubquery) lookup(ctx *sql.Context, row sql.Row) (*subqueryGroup, error) {
	return g.group(ctx, g.outerKeys, row, false)
}

// group is the group of row's keys (keys are innerKeys or outerKeys),
// added when add is set; nil when a key is NULL or, without add, when no
// row has the keys. Strings are keyed by their collation's hash; two
// strings of one hash that differ read the statement's subquery as it was.
func (g *groupedSubquery) group(ctx *sql.Context, keys []sql.Expression, row sql.Row, add bool) (*subqueryGroup, error) {
	var key subqueryKey
	var values []any
	for i, e := range keys {
		k, ok, err := keyOf(ctx, g.kinds[i], e, row)
		if err != nil || !ok {
			return nil, err
		}
		key[i] = k
		if g.kinds[i] == keyString {
			if values == nil {
				values = make([]any, len(keys))
			}
			if values[i], err = e.Eval(ctx, row); err != nil {
				return nil, err
			}
		}
	}
	st := g.state
	grp := st.groups[key]
	if grp != nil && values != nil {
		for i, v := range values {
			if v == nil {
				continue
			}
			if c, err := g.innerKeys[i].Type(ctx).Compare(ctx, grp.values[i], v); err != nil || c != 0 {
				if add && err == nil {
					return nil, fmt.Errorf("%w: the keys %v and %v have one hash", errHashCollision, grp.values[i], v)
				}
				return nil, err
			}
		}
	}
	if grp == nil && add {
		grp = &subqueryGroup{values: values}
		st.groups[key] = grp
	}
	return grp, nil
}

// errHashCollision is two strings of one collation hash: the grouped
// subquery cannot tell their groups apart.
var errHashCollision = errors.New("string keys collide")

// aggregate is the aggregates of grp's rows that pass the residual
// condition for the outer row.
func (g *groupedSubquery) aggregate(ctx *sql.Context, row sql.Row, grp *subqueryGroup) (sql.Row, error) {
	bufs, err := newBuffers(ctx, g.aggs)
	if err != nil {
		return nil, err
	}
	var rows []keptRow
	if grp != nil {
		rows = grp.rows
	}
	if g.rng != nil && len(rows) > 0 {
		v, ok, err := keyOf(ctx, g.rng.kind, g.rng.outer, row)
		if err != nil {
			return nil, err
		}
		if rows = nil; ok {
			rows = g.rng.passing(grp.rows, v)
		}
	}
	if len(rows) > 0 {
		full := make(sql.Row, len(row)+len(rows[0].row))
		copy(full, row)
		for _, r := range rows {
			copy(full[len(row):], r.row)
			if g.residual != nil {
				v, err := g.residual.Eval(ctx, full)
				if err != nil {
					return nil, err
				}
				if v == nil {
					continue // NULL, as a filter takes it
				}
				if keep, err := sql.ConvertToBool(ctx, v); err != nil || !keep {
					if err != nil {
						return nil, err
					}
					continue
				}
			}
			in := full
			if g.retainsRows {
				in = full.Copy()
			}
			for _, b := range bufs {
				if err := b.Update(ctx, in); err != nil {
					return nil, err
				}
			}
		}
	}
	return g.evalBuffers(ctx, bufs)
}

// evalBuffers is the aggregates of bufs (fresh ones when nil), disposed.
func (g *groupedSubquery) evalBuffers(ctx *sql.Context, bufs []sql.AggregationBuffer) (sql.Row, error) {
	if bufs == nil {
		var err error
		if bufs, err = newBuffers(ctx, g.aggs); err != nil {
			return nil, err
		}
	}
	out := make(sql.Row, len(bufs))
	for i, b := range bufs {
		v, err := b.Eval(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = v
		b.Dispose(ctx)
	}
	return out, nil
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

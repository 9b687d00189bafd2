package engine

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/icesql/icesql/engine/internal/memlimit"
	"github.com/icesql/icesql/engine/internal/planrules"
	"github.com/icesql/icesql/engine/internal/vecexec"
)

// How a groupedSubquery (groupedsubquery.go) runs: its groups, read once
// per statement, and each outer row's answer from them.

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

// compareRangeKeys orders two keys of one rangeCond kind.
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
// inner keys (vecexec/vectorize.go), when it takes the body: a table read under a
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
	n, same, err := vecexec.Vectorize(ctx, nil, plan.NewGroupBy(selected, selected[:len(g.innerKeys)], body), nil, nil, nil)
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
		if errors.Is(err, io.EOF) {
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
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if n%memlimit.CheckEvery == 0 && ctx.Memory != nil && !ctx.Memory.HasAvailable() {
			// The statement's memory (memlimit/memlimit.go): run as it was.
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
				if key, ok, err = planrules.KeyOf(ctx, g.rng.kind, g.rng.inner, r); err != nil {
					return err
				} else if !ok {
					continue // NULL compares true with nothing
				}
			}
			grp.rows = append(grp.rows, keptRow{key: key, row: r[len(row):].Copy()})
		default:
			if grp.bufs == nil {
				if grp.bufs, err = planrules.NewBuffers(ctx, g.aggs); err != nil {
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
		k, ok, err := planrules.KeyOf(ctx, g.kinds[i], e, row)
		if err != nil || !ok {
			return nil, err
		}
		key[i] = k
		if g.kinds[i] == planrules.KeyString {
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
	bufs, err := planrules.NewBuffers(ctx, g.aggs)
	if err != nil {
		return nil, err
	}
	var rows []keptRow
	if grp != nil {
		rows = grp.rows
	}
	if g.rng != nil && len(rows) > 0 {
		v, ok, err := planrules.KeyOf(ctx, g.rng.kind, g.rng.outer, row)
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
		if bufs, err = planrules.NewBuffers(ctx, g.aggs); err != nil {
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

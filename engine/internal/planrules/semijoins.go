package planrules

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GroupedJoinSides runs before go-mysql-server's join planner
// (optimizeJoins). An IN (SELECT ... GROUP BY ... HAVING ...) becomes a
// semi join whose right side is a GroupBy, a node the planner cannot
// reorder (memo.ErrUnsupportedReorderNode): it then kept the whole join
// tree as written, every join a nested loop (TPC-H Q18: customer, orders
// and lineitem joined row by row, over a minute at SF 0.01). Wrapped in a
// derived table, the grouped side is a leaf the planner can place and hash.
// Only an uncorrelated side whose columns come from one table is wrapped,
// named as that table, so that the conditions above still name its
// columns as they did.
func GroupedJoinSides(next analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		pruned, samePruned, err := pruneSemiJoinSides(ctx, n)
		if err != nil {
			return n, transform.SameTree, err
		}
		wrapped, same, err := wrapGroupedJoinSides(ctx, pruned)
		if err != nil {
			return n, transform.SameTree, err
		}
		same = same && samePruned
		out, same2, err := next(ctx, a, wrapped, scope, sel, qFlags)
		if err != nil {
			return out, same && same2, err
		}
		hashed, same3, err := hashPartialJoins(ctx, out)
		if err != nil {
			return hashed, same && same2 && same3, err
		}
		keyed, same4, err := keyOrJoins(ctx, hashed) // orjoin.go
		return keyed, same && same2 && same3 && same4, err
	}
}

// hashPartialJoins gives the nested-loop semi join of EXISTS and the anti
// join of NOT EXISTS a hash table of their right side when their condition
// holds an equality of the two sides beside other comparisons: TPC-H Q21's
// l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey.
// go-mysql-server hashes a join only when every condition is an equality,
// so each row of l1 read all of lineitem again. The join still evaluates
// its whole condition, now on the rows of the left row's key only: a row
// with another key fails the equality, and one with a NULL key cannot
// make it true. (NOT IN's anti join, whose NULLs count, is not touched.)
// A LEFT JOIN whose ON clause holds such an equality beside a condition on
// its preserved side (`a RIGHT JOIN b ON a.id = b.k AND b.f > 999.75`,
// which cannot move below the join) is hashed the same way: a left row
// that passes the whole condition with none of its key's rows is padded,
// as with all of them (3,000 x 3,000 rows compared, 10 s, off the vector
// path).
func hashPartialJoins(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || (j.Op != plan.JoinTypeSemi && j.Op != plan.JoinTypeAntiIncludeNulls && j.Op != plan.JoinTypeLeftOuter) || j.Filter == nil {
			return n, transform.SameTree, nil
		}
		right := j.Right()
		if _, ok := right.(*plan.HashLookup); ok || readsOuterScope(ctx, right) {
			return n, transform.SameTree, nil
		}
		ls, rs := j.Left().Schema(ctx), right.Schema(ctx)
		var lefts, rights []sql.Expression
		for _, c := range expression.SplitConjunction(ctx, j.Filter) {
			eq, ok := c.(*expression.Equals)
			if !ok || !movable(ctx, c) {
				continue
			}
			l, r := eq.Left(), eq.Right()
			if readsOnlyColumnsOf(ctx, r, ls) && readsOnlyColumnsOf(ctx, l, rs) {
				l, r = r, l
			}
			if !readsOnlyColumnsOf(ctx, l, ls) || !readsOnlyColumnsOf(ctx, r, rs) || !HashableEquality(ctx, l, r) {
				continue
			}
			lefts, rights = append(lefts, l), append(rights, r)
		}
		if len(lefts) == 0 {
			return n, transform.SameTree, nil
		}
		hl := plan.NewHashLookup(ctx, right, expression.Tuple(rights), expression.Tuple(lefts), j.Op)
		nj := *j
		if j.Op == plan.JoinTypeLeftOuter {
			nj.Op = plan.JoinTypeLeftOuterHash
		}
		out, err := nj.WithChildren(ctx, j.Left(), hl)
		return out, transform.NewTree, err
	})
}

func wrapGroupedJoinSides(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	if !n.Resolved() {
		return n, transform.SameTree, nil
	}
	var maxID sql.TableId
	transform.Inspect(n, func(n sql.Node) bool {
		if tn, ok := n.(plan.TableIdNode); ok {
			maxID = max(maxID, tn.Id())
		}
		return true
	})
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || !(j.Op.IsSemi() || j.Op.IsAnti() || j.Op.IsInner()) || reorderable(j.Right()) {
			return n, transform.SameTree, nil
		}
		p, ok := j.Right().(*plan.Project)
		if !ok {
			return n, transform.SameTree, nil
		}
		var cols sql.ColSet
		for _, e := range p.Projections {
			ie, ok := e.(sql.IdExpression)
			if !ok {
				return n, transform.SameTree, nil
			}
			cols.Add(ie.Id())
		}
		schema := p.Schema(ctx)
		if len(schema) == 0 || cols.Len() != len(schema) || readsOuterScope(ctx, p) {
			return n, transform.SameTree, nil
		}
		source := schema[0].Source
		for _, c := range schema {
			if c.Source != source || source == "" {
				return n, transform.SameTree, nil
			}
		}
		maxID++
		sqa := plan.NewSubqueryAlias(source, "", p).WithId(maxID).WithColumns(cols)
		out, err := j.WithChildren(ctx, j.Left(), sqa)
		return out, transform.NewTree, err
	})
}

// reorderable says whether the join planner can take n as a join side:
// tables, derived tables and joins, under filters, projections, sorts,
// limits and DISTINCT (memo.joinOrderBuilder.populateSubgraph).
func reorderable(n sql.Node) bool {
	for {
		switch nn := n.(type) {
		case *plan.Filter, *plan.Having, *plan.Limit, *plan.Project, *plan.Sort, *plan.Distinct, *plan.Max1Row, *plan.CachedResults:
			n = nn.Children()[0]
		case *plan.JoinNode, *plan.SetOp, sql.NameableNode:
			return true
		default:
			return false
		}
	}
}

// readsOuterScope says whether n reads a column that none of its own
// tables, aggregates or aliases produce (a correlated subquery's).
func readsOuterScope(ctx *sql.Context, n sql.Node) bool {
	tables := map[string]bool{}
	transform.Inspect(n, func(n sql.Node) bool {
		if tn, ok := n.(sql.Nameable); ok {
			tables[strings.ToLower(tn.Name())] = true
		}
		return true
	})
	var own sql.ColSet
	transform.InspectExpressions(ctx, n, func(ctx *sql.Context, e sql.Expression) bool {
		if ie, ok := e.(sql.IdExpression); ok {
			if _, read := e.(*expression.GetField); !read {
				own.Add(ie.Id()) // an aggregate's or an alias's column
			}
		}
		return false
	})
	outer := false
	transform.InspectExpressions(ctx, n, func(ctx *sql.Context, e sql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok && !own.Contains(gf.Id()) && !tables[strings.ToLower(gf.Table())] {
			outer = true
		}
		return outer
	})
	return outer
}

// pruneSemiJoinSides narrows the tables on the right side of semi and anti
// joins to the columns their condition and the side itself read. An EXISTS
// (SELECT * FROM ...) becomes such a join after go-mysql-server's
// pruneTables has run (and pruneTables does not look past a filter that
// holds a subquery), so its tables read every column: TPC-H Q21's two
// EXISTS sides read all 16 columns of lineitem, 1.5 GB at SF 0.1, for
// l_orderkey, l_suppkey and two dates. Nothing above a semi or anti join
// reads its right side's columns.
func pruneSemiJoinSides(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	if !n.Resolved() {
		return n, transform.SameTree, nil
	}
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || !(j.Op.IsSemi() || j.Op.IsAnti()) {
			return n, transform.SameTree, nil
		}
		needed := map[tableColumn]bool{}
		if j.Filter != nil {
			readColumns(ctx, j.Filter, needed)
		}
		transform.Inspect(j.Right(), func(n sql.Node) bool {
			if ex, ok := n.(sql.Expressioner); ok {
				for _, e := range ex.Expressions() {
					readColumns(ctx, e, needed)
				}
			}
			return true
		})
		right, same, err := pruneSide(ctx, j.Right(), needed)
		if err != nil || same {
			return n, transform.SameTree, err
		}
		out, err := j.WithChildren(ctx, j.Left(), right)
		return out, transform.NewTree, err
	})
}

// tableColumn is a column as expressions name it: its table (or the
// table's alias) and its name, in lower case.
type tableColumn struct{ table, column string }

// readColumns adds the columns e reads to cols, those of the subqueries it
// holds included.
func readColumns(ctx *sql.Context, e sql.Expression, cols map[tableColumn]bool) {
	transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
		switch e := e.(type) {
		case *expression.GetField:
			cols[tableColumn{strings.ToLower(e.Table()), strings.ToLower(e.Name())}] = true
		case *plan.Subquery:
			transform.Inspect(e.Query, func(n sql.Node) bool {
				if ex, ok := n.(sql.Expressioner); ok {
					for _, x := range ex.Expressions() {
						readColumns(ctx, x, cols)
					}
				}
				return true
			})
		}
		return false
	})
}

// pruneSide narrows the tables of n, through the nodes that pass their
// columns on by name (filters, projections, joins, aliases), to the
// columns in needed; at least one column stays.
func pruneSide(ctx *sql.Context, n sql.Node, needed map[tableColumn]bool) (sql.Node, bool, error) {
	switch nn := n.(type) {
	case *plan.ResolvedTable:
		return pruneTable(ctx, nn, nn.Name(), needed)
	case *plan.TableAlias:
		rt, ok := nn.Child.(*plan.ResolvedTable)
		if !ok {
			return n, true, nil
		}
		child, same, err := pruneTable(ctx, rt, nn.Name(), needed)
		if err != nil || same {
			return n, true, err
		}
		out, err := nn.WithChildren(ctx, child)
		return out, false, err
	case *plan.Filter, *plan.Project, *plan.Distinct, *plan.Limit, *plan.Sort, *plan.JoinNode:
		children := n.Children()
		out := make([]sql.Node, len(children))
		allSame := true
		for i, c := range children {
			var same bool
			var err error
			if out[i], same, err = pruneSide(ctx, c, needed); err != nil {
				return n, true, err
			}
			allSame = allSame && same
		}
		if allSame {
			return n, true, nil
		}
		nn2, err := n.WithChildren(ctx, out...)
		return nn2, false, err
	}
	return n, true, nil
}

// pruneTable projects rt to its columns that name.column reads.
func pruneTable(ctx *sql.Context, rt *plan.ResolvedTable, name string, needed map[tableColumn]bool) (sql.Node, bool, error) {
	pt, ok := rt.Table.(sql.ProjectedTable)
	if !ok {
		return rt, true, nil
	}
	schema := rt.Schema(ctx)
	var cols []string
	for _, c := range schema {
		if needed[tableColumn{strings.ToLower(name), strings.ToLower(c.Name)}] {
			cols = append(cols, strings.ToLower(c.Name))
		}
	}
	if len(cols) == len(schema) || len(schema) == 0 {
		return rt, true, nil
	}
	if len(cols) == 0 {
		cols = []string{strings.ToLower(schema[0].Name)}
	}
	t, err := pt.WithProjections(ctx, cols)
	if err != nil {
		return rt, true, err
	}
	out, err := rt.WithTable(ctx, t)
	return out, false, err
}

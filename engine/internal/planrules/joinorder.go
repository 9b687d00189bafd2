package planrules

import (
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// go-mysql-server searches join orders exhaustively up to 15 tables. Above
// that it tries a plan of lookup joins on a primary key, which needs indexes
// Iceberg tables do not have, and otherwise keeps the order of the FROM
// list. `FROM t1, t2, ..., t17 WHERE <equalities>` in an arbitrary order
// then joins tables no condition connects, and the intermediate results grow
// as a product of the table sizes (sqllogictest's select5 ran for hours).
//
// orderLargeJoins reorders such a FROM list before the join planner sees it,
// so that each table joins the ones before it through a condition whenever
// the conditions allow: it starts with the table most conditions on
// constants restrict, then repeatedly takes the first table in FROM order
// that a condition connects to the tables taken so far. The conditions
// stay in the WHERE filter; go-mysql-server moves each onto the lowest join
// that covers it, as it always does.
const exhaustiveJoinTables = 15

func OrderLargeJoins(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		j, ok := f.Child.(*plan.JoinNode)
		if !ok || !j.Op.IsCross() {
			return n, transform.SameTree, nil
		}
		var leaves []plan.TableIdNode
		if !crossJoinLeaves(j, &leaves) || len(leaves) <= exhaustiveJoinTables {
			return n, transform.SameTree, nil
		}
		order := connectedOrder(leaves, conjunctTables(ctx, f.Expression, leaves))
		if order == nil {
			return n, transform.SameTree, nil
		}
		var tree sql.Node = leaves[order[0]]
		for _, i := range order[1:] {
			tree = plan.NewCrossJoin(ctx, tree, leaves[i])
		}
		nf, err := f.WithChildren(ctx, tree)
		if err != nil {
			return n, transform.SameTree, err
		}
		return nf, transform.NewTree, nil
	})
}

// crossJoinLeaves collects the tables of a tree made only of cross joins; it
// reports false when the tree holds anything else.
func crossJoinLeaves(n sql.Node, leaves *[]plan.TableIdNode) bool {
	switch n := n.(type) {
	case *plan.JoinNode:
		return n.Op == plan.JoinTypeCross && n.Comment() == "" &&
			crossJoinLeaves(n.Left(), leaves) && crossJoinLeaves(n.Right(), leaves)
	case *plan.ResolvedTable, *plan.TableAlias:
		*leaves = append(*leaves, n.(plan.TableIdNode))
		return true
	}
	return false
}

// conjunctTables returns, per conjunct of cond, the positions in leaves of
// the tables it reads; conjuncts that read anything else (a subquery, an
// outer scope's column) are left out, since they cannot guide the order.
func conjunctTables(ctx *sql.Context, cond sql.Expression, leaves []plan.TableIdNode) [][]int {
	pos := make(map[sql.TableId]int, len(leaves))
	for i, l := range leaves {
		pos[l.Id()] = i
	}
	var out [][]int
	for _, c := range expression.SplitConjunction(ctx, cond) {
		var tables []int
		usable := true
		transform.InspectExpr(ctx, c, func(ctx *sql.Context, e sql.Expression) bool {
			switch e := e.(type) {
			case *plan.Subquery:
				usable = false
			case *expression.GetField:
				i, ok := pos[e.TableId()]
				if !ok {
					usable = false
				} else if !slices.Contains(tables, i) {
					tables = append(tables, i)
				}
			}
			return !usable
		})
		if usable && len(tables) > 0 {
			out = append(out, tables)
		}
	}
	return out
}

// connectedOrder orders the leaves as orderLargeJoins describes; nil when
// that is the FROM order already.
func connectedOrder(leaves []plan.TableIdNode, conjuncts [][]int) []int {
	restricted := make([]int, len(leaves))
	for _, c := range conjuncts {
		if len(c) == 1 {
			restricted[c[0]]++
		}
	}
	first := 0
	for i, r := range restricted {
		if r > restricted[first] {
			first = i
		}
	}
	taken := make([]bool, len(leaves))
	order := []int{first}
	taken[first] = true
	for len(order) < len(leaves) {
		next := -1
		for i := range leaves {
			if !taken[i] && connects(i, taken, conjuncts) {
				next = i
				break
			}
		}
		if next < 0 { // nothing connects: a cross join is unavoidable
			for i := range leaves {
				if !taken[i] {
					next = i
					break
				}
			}
		}
		taken[next] = true
		order = append(order, next)
	}
	for i, o := range order {
		if i != o {
			return order
		}
	}
	return nil
}

// connects reports whether some conjunct reads table i and only tables
// already taken besides it.
func connects(i int, taken []bool, conjuncts [][]int) bool {
	for _, c := range conjuncts {
		if len(c) < 2 || !slices.Contains(c, i) {
			continue
		}
		ok := true
		for _, t := range c {
			if t != i && !taken[t] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// go-mysql-server plans a LEFT JOIN as written even when the WHERE clause
// rejects the rows it pads with NULLs (`t2 l LEFT JOIN t1 r ON l.b = r.b
// WHERE r.m IN (SELECT ...)`): the join order is then fixed, and the
// outer join ran before the IN's semi-join could shrink its inner side
// (4 million rows joined, then filtered to 36,000). innerOuterJoins makes
// such a join an inner join, as every SQL optimizer does, so that the join
// planner may reorder it.
func InnerOuterJoins(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		conjuncts := expression.SplitConjunction(ctx, f.Expression)
		child, same := innerJoinsUnder(ctx, f.Child, conjuncts)
		if same {
			return n, transform.SameTree, nil
		}
		nf, err := f.WithChildren(ctx, child)
		if err != nil {
			return n, transform.SameTree, err
		}
		return nf, transform.NewTree, nil
	})
}

// innerJoinsUnder turns the left joins of the join tree n whose padded
// rows one of the WHERE conjuncts rejects into inner joins. It descends
// only into what reaches the WHERE clause row for row: both sides of an
// inner or cross join, the preserved side of a left join.
func innerJoinsUnder(ctx *sql.Context, n sql.Node, conjuncts []sql.Expression) (sql.Node, bool) {
	j, ok := n.(*plan.JoinNode)
	if !ok {
		return n, true
	}
	op := j.Op
	if op == plan.JoinTypeLeftOuter && rejectsPadding(ctx, conjuncts, tableIds(ctx, j.Right())) {
		op = plan.JoinTypeInner
	}
	if op != plan.JoinTypeInner && op != plan.JoinTypeCross && op != plan.JoinTypeLeftOuter {
		return n, true
	}
	left, sameLeft := innerJoinsUnder(ctx, j.Left(), conjuncts)
	right, sameRight := j.Right(), true
	if op != plan.JoinTypeLeftOuter {
		right, sameRight = innerJoinsUnder(ctx, j.Right(), conjuncts)
	}
	if op == j.Op && sameLeft && sameRight {
		return n, true
	}
	nj := plan.NewJoin(ctx, left, right, op, j.Filter)
	if j.CommentStr != "" {
		return nj.WithComment(j.CommentStr), false
	}
	return nj, false
}

// tableIds are the ids of the tables n reads.
func tableIds(ctx *sql.Context, n sql.Node) map[sql.TableId]bool {
	ids := map[sql.TableId]bool{}
	transform.Inspect(n, func(n sql.Node) bool {
		if t, ok := n.(plan.TableIdNode); ok {
			ids[t.Id()] = true
		}
		return true
	})
	return ids
}

// rejectsPadding says some conjunct is never true when every column of the
// tables ids is NULL (nullreject.go).
func rejectsPadding(ctx *sql.Context, conjuncts []sql.Expression, ids map[sql.TableId]bool) bool {
	for _, c := range conjuncts {
		if rejectsNulls(ctx, c, ids) {
			return true
		}
	}
	return false
}

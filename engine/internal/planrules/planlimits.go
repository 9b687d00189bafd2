package planrules

import (
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// maxNesting bounds how deeply expressions, subqueries and set operations
// may nest in one statement. go-mysql-server analyzes a tree by recursion,
// many times over: 10,000 nested NOTs took seconds to plan, uncancellable,
// and deeper trees would overflow the goroutine's stack, which takes the
// process down. MySQL stops such statements with 1436 too (its check is on
// the thread's stack; a count of levels is the portable equivalent).
const maxNesting = 1000

// CheckNesting fails a statement nested more than maxNesting levels deep.
// Chains of AND and OR count as one level, as MySQL keeps them as flat
// lists: a generated WHERE a=1 OR a=2 OR ... of any length is accepted.
func CheckNesting(stmt ast.SQLNode) error {
	if stmt == nil {
		return nil
	}
	if nestedBeyond(stmt, 0) {
		return mysqlerr.New(mysqlerr.ErStackOverrunNeedMore,
			"statement nested more than %d levels deep (expressions, subqueries or UNION branches): "+
				"icesql plans at most %d; flatten it (for example with IN lists or a table of values)", maxNesting, maxNesting)
	}
	return nil
}

// nestedBeyond reports whether node nests more than maxNesting levels
// below depth. It stops descending at the limit, so its own recursion is
// bounded whatever the statement.
func nestedBeyond(node ast.SQLNode, depth int) bool {
	if depth > maxNesting {
		return true
	}
	deeper, self := false, true
	_ = ast.Walk(func(child ast.SQLNode) (bool, error) {
		if self { // Walk visits node itself first
			self = false
			return true, nil
		}
		if deeper {
			return false, nil
		}
		deeper = nestedBeyond(child, depth+nestingStep(node, child))
		return false, nil
	}, node)
	return deeper
}

// nestingStep is the depth child adds below parent.
func nestingStep(parent, child ast.SQLNode) int {
	switch child.(type) {
	case *ast.AndExpr:
		if _, ok := parent.(*ast.AndExpr); ok {
			return 0
		}
	case *ast.OrExpr:
		if _, ok := parent.(*ast.OrExpr); ok {
			return 0
		}
	case ast.Expr, ast.SelectStatement:
		return 1
	}
	return 0
}

// StopIfCancelledID is the id of stopIfCancelled, apart from engine/rules.go's.
const StopIfCancelledID analyzer.RuleId = 1100

// StopIfCancelled ends the analysis of a statement that was killed, timed
// out or lost its client. go-mysql-server's analyzer never looks at the
// context, and it analyzes each branch of a UNION again for every UNION
// above it: a 5,000-branch UNION ALL planned for minutes after KILL QUERY.
// The rule runs before and after the main batches, and so once per branch.
func StopIfCancelled(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if err := ctx.Err(); err != nil {
		return n, transform.SameTree, err
	}
	return n, transform.SameTree, nil
}

// BalanceSetOps turns a chain of one set operation (a UNION ALL b UNION ALL
// c ..., as the parser builds it, each operation the left child of the
// next) into a balanced tree with the branches in the same order: the
// analyzer's work on a UNION grows with the depth of each branch, which was
// cubic in the number of branches (250 branches planned in 7 s, 500 in 43)
// and is n log n balanced. UNION ALL and UNION DISTINCT (and INTERSECT,
// EXCEPT ALL) chains of a single kind give the same rows either way;
// mixed chains, and chains with an ORDER BY, LIMIT or WITH inside, are left
// as they are.
func BalanceSetOps(node ast.SQLNode) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if op, ok := n.(*ast.SetOp); ok {
			balanceChain(op)
		}
		return true, nil
	}, node)
}

// minBalanced is the shortest chain worth rebuilding.
const minBalanced = 8

func balanceChain(top *ast.SetOp) {
	if top.Type != ast.UnionAllStr && top.Type != ast.UnionStr && top.Type != ast.UnionDistinctStr {
		return
	}
	var branches []ast.SelectStatement
	cur := top
	for {
		branches = append(branches, cur.Right)
		left, ok := cur.Left.(*ast.SetOp)
		if !ok || !sameKind(left.Type, top.Type) || left.OrderBy != nil || left.Limit != nil ||
			left.With != nil || left.Into != nil || left.Lock != nil {
			branches = append(branches, cur.Left)
			break
		}
		cur = left
	}
	if len(branches) < minBalanced {
		return
	}
	slices.Reverse(branches)
	mid := len(branches) / 2
	top.Left = balancedSetOp(top.Type, branches[:mid])
	top.Right = balancedSetOp(top.Type, branches[mid:])
}

func balancedSetOp(kind string, branches []ast.SelectStatement) ast.SelectStatement {
	if len(branches) == 1 {
		return branches[0]
	}
	mid := len(branches) / 2
	return &ast.SetOp{Type: kind, Left: balancedSetOp(kind, branches[:mid]), Right: balancedSetOp(kind, branches[mid:])}
}

// sameKind reports whether two set operations are the same (UNION is
// UNION DISTINCT).
func sameKind(a, b string) bool {
	norm := func(s string) string {
		if s == ast.UnionDistinctStr {
			return ast.UnionStr
		}
		return s
	}
	return norm(a) == norm(b)
}

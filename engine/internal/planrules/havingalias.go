package planrules

import ast "github.com/dolthub/vitess/go/vt/sqlparser"

// HavingAliases makes a HAVING name that is a select-list alias of an
// aggregate name the aggregate itself. MySQL resolves such a name to the
// alias unless it is a GROUP BY column; go-mysql-server's planbuilder takes
// a table column of that name first, so after ALTER TABLE t ADD COLUMN c1,
// SELECT s, COUNT(c1) AS c1 FROM t GROUP BY s HAVING c1 IS NOT NULL
// tested the column (NULL) and returned no row (history tester,
// FINDINGS.md #16). Naming the aggregate is what the alias means, so the
// rewrite is also right where no column shares the name.
func HavingAliases(node ast.SQLNode) {
	if ex, ok := node.(*ast.Explain); ok {
		node = ex.Statement // ast.Walk does not enter it; EXPLAIN shows what runs
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if sel, ok := n.(*ast.Select); ok && sel.Having != nil {
			resolveHavingAliases(sel)
		}
		return true, nil
	}, node)
	if sel, ok := node.(*ast.Select); ok {
		hoistJoinedAggregates(sel) // havingjoin.go
	}
	wrapNestedJoinedHaving(node) // havingjoin.go
}

func resolveHavingAliases(sel *ast.Select) {
	aliases := map[string]ast.Expr{}
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok && !ae.As.IsEmpty() && hasAggregate(ae.Expr) {
			aliases[ae.As.Lowered()] = ae.Expr
		}
	}
	if len(aliases) == 0 {
		return
	}
	// A GROUP BY column wins: GROUP BY c2, GROUP BY a.c2, or GROUP BY an
	// alias of the column c2 (MySQL prefers "the column in the GROUP BY").
	selected := map[string]*ast.ColName{}
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok && !ae.As.IsEmpty() {
			if c, ok := ae.Expr.(*ast.ColName); ok {
				selected[ae.As.Lowered()] = c
			}
		}
	}
	for _, g := range sel.GroupBy {
		c, ok := g.(*ast.ColName)
		if !ok {
			continue
		}
		delete(aliases, c.Name.Lowered())
		if col := selected[c.Name.Lowered()]; col != nil && c.Qualifier.IsEmpty() {
			delete(aliases, col.Name.Lowered())
		}
	}
	var refs []*ast.ColName
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil // its names resolve in its own scope first
		case *ast.ColName:
			if n.Qualifier.IsEmpty() && aliases[n.Name.Lowered()] != nil {
				refs = append(refs, n)
			}
		}
		return true, nil
	}, sel.Having.Expr)
	for _, r := range refs {
		sel.Having.Expr = ast.ReplaceExpr(sel.Having.Expr, r, aliases[r.Name.Lowered()])
	}
}

// hasAggregate reports whether e computes an aggregate (not a window
// function) outside any subquery.
func hasAggregate(e ast.Expr) bool {
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			if n.Over == nil && n.IsAggregate() {
				found = true
			}
		case *ast.GroupConcatExpr:
			found = true
		}
		return !found, nil
	}, e)
	return found
}

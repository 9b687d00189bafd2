package planrules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server builds a HAVING clause in a scope that holds the columns
// its aggregates read found by name only (planbuilder/aggregates.go
// buildHaving, getMatchingCol): in
//
//	SELECT a.k, SUM(a.x) FROM a JOIN b ON a.id = b.id GROUP BY a.k HAVING SUM(b.x) > 2
//
// b.x finds a.x's entry, and building SUM(b.x) then fails with ERROR 1146
// "table not found: b" (FINDINGS.md #14). The same aggregate in the select
// list is built in the FROM clause's scope, where it resolves, and HAVING
// may name a select-list alias. So an aggregate of a qualified column in
// the HAVING of a join is moved into the select list under a name of its
// own, HAVING names it, and dropHavingColumns takes the added columns out
// of the statement's result again before any other rule runs.

// havingColumnPrefix starts the names of the select-list columns added for
// HAVING; no user names a column so.
const havingColumnPrefix = "__icesql_having_"

// DropHavingColumnsID is the id of dropHavingColumns.
const DropHavingColumnsID analyzer.RuleId = 1300

// hoistJoinedAggregates moves the aggregates of qualified columns in the
// HAVING of sel, a statement's top-level SELECT over a join, into its
// select list.
func hoistJoinedAggregates(sel *ast.Select) {
	if sel.Having == nil || !joins(sel.From) {
		return
	}
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok && hasWindow(ae.Expr) {
			return // the result is a Window node, not a Project
		}
	}
	var aggs []ast.Expr
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil // its aggregates are its own
		case *ast.FuncExpr:
			if n.Over == nil && n.IsAggregate() && readsQualified(n) {
				aggs = append(aggs, n)
				return false, nil
			}
		}
		return true, nil
	}, sel.Having.Expr)
	names := map[string]string{}
	for _, agg := range aggs {
		key := ast.String(agg)
		name, ok := names[key]
		if !ok {
			name = fmt.Sprintf("%s%d", havingColumnPrefix, len(names)+1)
			names[key] = name
			sel.SelectExprs = append(sel.SelectExprs, &ast.AliasedExpr{Expr: agg, As: ast.NewColIdent(name)})
		}
		sel.Having.Expr = ast.ReplaceExpr(sel.Having.Expr, agg, &ast.ColName{Name: ast.NewColIdent(name)})
	}
}

// nestedHavingAlias names the derived table wrapJoinedHaving makes.
const nestedHavingAlias = "__icesql_nested"

// wrapNestedJoinedHaving does what hoistJoinedAggregates does for the
// SELECTs nested in stmt (subqueries, derived tables, UNION branches),
// whose added columns no rule could take out again: each such SELECT
// becomes a SELECT of its own columns from itself, with the added columns,
// as a derived table. Left as they are (and so still failing with 1146):
// SELECTs with *, and DISTINCT ones whose ORDER BY names something not in
// the select list (MySQL refuses those too, 3065). A grouped SELECT with
// window functions arrives here as its derived table (groupedwindows.go).
func wrapNestedJoinedHaving(stmt ast.SQLNode) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if sel, ok := n.(*ast.Select); ok && n != stmt && hoistable(sel) {
			wrapJoinedHaving(sel)
		}
		return true, nil
	}, stmt)
}

// hoistable says sel is a SELECT over a join whose HAVING aggregates a
// qualified column, in a form wrapJoinedHaving can rewrite.
func hoistable(sel *ast.Select) bool {
	if sel.Having == nil || !joins(sel.From) || sel.Into != nil {
		return false
	}
	if sel.QueryOpts.Distinct && (len(sel.OrderBy) > 0 || sel.Limit != nil) {
		// ORDER BY and LIMIT move out with DISTINCT; go-mysql-server then
		// reads a correlated SELECT's outer columns once, not per row.
		if _, ok := distinctOrder(sel); !ok || !readsOwnTables(sel) {
			return false
		}
	}
	for _, se := range sel.SelectExprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok || hasWindow(ae.Expr) {
			return false
		}
	}
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			if n.Over == nil && n.IsAggregate() && readsQualified(n) {
				found = true
			}
		}
		return !found, nil
	}, sel.Having.Expr)
	return found
}

// readsOwnTables says every column sel reads (outside its subqueries) is
// qualified by a table of its own FROM clause, so sel is not correlated.
func readsOwnTables(sel *ast.Select) bool {
	own := map[string]bool{}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.AliasedTableExpr:
			if !n.As.IsEmpty() {
				own[strings.ToLower(n.As.String())] = true
			} else if t, ok := n.Expr.(ast.TableName); ok {
				own[strings.ToLower(t.Name.String())] = true
			}
		}
		return true, nil
	}, sel.From)
	ok := true
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ColName:
			ok = ok && !n.Qualifier.IsEmpty() && own[strings.ToLower(n.Qualifier.Name.String())]
		}
		return ok, nil
	}, sel.SelectExprs, sel.Where, sel.GroupBy, sel.Having, sel.OrderBy)
	return ok
}

// distinctOrder is the ORDER BY of sel, a SELECT DISTINCT, in terms of its
// select list: each key a position (from 1), as DISTINCT lets ORDER BY name
// only what the select list holds (a position, an alias, or the same
// expression). ok is false when a key is none of those.
func distinctOrder(sel *ast.Select) (positions []int, ok bool) {
	for _, o := range sel.OrderBy {
		pos := 0
		if v, isVal := o.Expr.(*ast.SQLVal); isVal && v.Type == ast.IntVal {
			n, err := strconv.Atoi(string(v.Val))
			if err != nil || n < 1 || n > len(sel.SelectExprs) {
				return nil, false
			}
			pos = n
		}
		for i, se := range sel.SelectExprs {
			ae, isAliased := se.(*ast.AliasedExpr)
			if pos > 0 || !isAliased {
				break
			}
			c, isCol := o.Expr.(*ast.ColName)
			if isCol && c.Qualifier.IsEmpty() && !ae.As.IsEmpty() && ae.As.Equal(c.Name) || ast.String(ae.Expr) == ast.String(o.Expr) {
				pos = i + 1
			}
		}
		if pos == 0 {
			return nil, false
		}
		positions = append(positions, pos)
	}
	return positions, true
}

// wrapJoinedHaving makes sel SELECT its columns FROM (sel with the
// aggregates of its HAVING hoisted) AS __icesql_nested. The columns keep
// their names; DISTINCT moves out, and with it ORDER BY and LIMIT (which
// must come after DISTINCT), by select-list position; else ORDER BY and
// LIMIT stay in.
func wrapJoinedHaving(sel *ast.Select) {
	inner := *sel
	inner.SelectExprs = make(ast.SelectExprs, len(sel.SelectExprs))
	outer := &ast.Select{QueryOpts: ast.QueryOpts{Distinct: sel.QueryOpts.Distinct},
		From: ast.TableExprs{&ast.AliasedTableExpr{Expr: &ast.Subquery{Select: &inner}, As: ast.NewTableIdent(nestedHavingAlias)}}}
	inner.QueryOpts.Distinct = false
	for i, se := range sel.SelectExprs {
		ae := *se.(*ast.AliasedExpr)
		name := ae.As.String()
		switch {
		case name != "":
		case ae.InputExpression != "":
			name = ae.InputExpression
		default:
			name = ast.String(ae.Expr)
		}
		if c, ok := ae.Expr.(*ast.ColName); ok && ae.As.IsEmpty() {
			name = c.Name.String()
		}
		if ae.As.IsEmpty() {
			ae.As = ast.NewColIdent(fmt.Sprintf("%s_c%d", nestedHavingAlias, i+1))
		}
		inner.SelectExprs[i] = &ae
		outer.SelectExprs = append(outer.SelectExprs, &ast.AliasedExpr{
			Expr: &ast.ColName{Name: ae.As, Qualifier: ast.TableName{Name: ast.NewTableIdent(nestedHavingAlias)}},
			As:   ast.NewColIdent(name), InputExpression: name})
	}
	if sel.QueryOpts.Distinct {
		positions, _ := distinctOrder(sel)
		for i, o := range sel.OrderBy {
			outer.OrderBy = append(outer.OrderBy, &ast.Order{
				Expr: ast.NewIntVal([]byte(strconv.Itoa(positions[i]))), Direction: o.Direction})
		}
		outer.Limit, inner.OrderBy, inner.Limit = sel.Limit, nil, nil
	}
	hoistJoinedAggregates(&inner)
	*sel = *outer
}

// joins says a FROM clause reads more than one table.
func joins(from ast.TableExprs) bool {
	if len(from) > 1 {
		return true
	}
	for _, t := range from {
		if _, ok := t.(*ast.JoinTableExpr); ok {
			return true
		}
	}
	return false
}

// readsQualified says e names a column with its table, outside any subquery.
func readsQualified(e ast.SQLNode) bool {
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ColName:
			if !n.Qualifier.IsEmpty() {
				found = true
			}
		}
		return !found, nil
	}, e)
	return found
}

// hasWindow says e computes a window function outside any subquery.
func hasWindow(e ast.Expr) bool {
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			if n.Over != nil {
				found = true
			}
		}
		return !found, nil
	}, e)
	return found
}

// DropHavingColumns takes the columns hoistJoinedAggregates added out of the
// projection that gives the statement's rows.
func DropHavingColumns(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return dropHavingColumnsIn(ctx, n)
}

func dropHavingColumnsIn(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	switch node := n.(type) {
	case *plan.Project:
		var keep []sql.Expression
		for _, e := range node.Projections {
			if named, ok := e.(sql.Nameable); ok && strings.HasPrefix(named.Name(), havingColumnPrefix) {
				continue
			}
			keep = append(keep, e)
		}
		if len(keep) == len(node.Projections) {
			return n, transform.SameTree, nil
		}
		out := plan.NewProject(ctx, keep, node.Child).WithCanDefer(node.CanDefer).WithAliasDeps(node.AliasDeps)
		if node.IncludesNestedIters {
			out = out.WithIncludesNestedIters(true)
		}
		return out, transform.NewTree, nil
	case *plan.DescribeQuery, *plan.Limit, *plan.Offset, *plan.Distinct, *plan.OrderedDistinct, *plan.Sort, *plan.TopN:
		// Nodes that pass their child's columns on unchanged.
		child, same, err := dropHavingColumnsIn(ctx, node.Children()[0])
		if err != nil || same {
			return n, transform.SameTree, err
		}
		out, err := node.WithChildren(ctx, child)
		return out, transform.NewTree, err
	}
	return n, transform.SameTree, nil
}

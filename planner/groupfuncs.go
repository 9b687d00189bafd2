package planner

import (
	"slices"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// errGroupFuncUse is MySQL's answer to an aggregate where none can be
// computed: in WHERE or GROUP BY, or inside another aggregate (1111,
// ER_INVALID_GROUP_FUNC_USE, SQLSTATE HY000). go-mysql-server answered
// 1140 ("nonaggregated column") for the first and 1054 for the last,
// which send the user looking for the wrong mistake.
var errGroupFuncUse = mysql.NewSQLError(mysql.ERInvalidGroupFuncUse, mysql.SSUnknownSQLState, "Invalid use of group function")

// misplacedGroupFunc refuses an aggregate in the WHERE or GROUP BY of a
// query, or nested in another aggregate, with 1111. Only queries that
// cannot be correlated are checked (the statement's own SELECTs, their
// set operations, CTEs and derived tables): in a subquery an aggregate of
// an outer column belongs to the outer query, where MySQL computes it
// (`SELECT (SELECT 1 FROM u WHERE SUM(t.b) > 0) FROM t` is valid).
func misplacedGroupFunc(stmt ast.Statement) *mysql.SQLError {
	var found bool
	uncorrelatedSelects(stmt, func(s *ast.Select) {
		if found {
			return
		}
		if s.Where != nil && hasGroupFunc(s.Where.Expr) {
			found = true
			return
		}
		for _, e := range s.GroupBy {
			if hasGroupFunc(e) {
				found = true
				return
			}
		}
		nodes := []ast.SQLNode{s.SelectExprs, s.OrderBy}
		if s.Having != nil {
			nodes = append(nodes, s.Having.Expr)
		}
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if _, ok := n.(*ast.Subquery); ok {
				return false, nil
			}
			if isGroupFunc(n) && hasGroupFunc(groupFuncArgs(n)...) {
				found = true
			}
			return !found, nil
		}, nodes...)
	})
	if found {
		return errGroupFuncUse
	}
	return nil
}

// uncorrelatedSelects calls visit with each SELECT of n that no outer
// query's columns can reach.
func uncorrelatedSelects(n ast.SQLNode, visit func(*ast.Select)) {
	with := func(w *ast.With) {
		if w == nil {
			return
		}
		for _, cte := range w.Ctes {
			tableSelects(cte.AliasedTableExpr, visit)
		}
	}
	switch n := n.(type) {
	case *ast.Select:
		with(n.With)
		visit(n)
		for _, te := range n.From {
			tableSelects(te, visit)
		}
	case *ast.SetOp:
		with(n.With)
		uncorrelatedSelects(n.Left, visit)
		uncorrelatedSelects(n.Right, visit)
	case *ast.ParenSelect:
		uncorrelatedSelects(n.Select, visit)
	case *ast.Insert:
		with(n.With)
		uncorrelatedSelects(n.Rows, visit)
	case *ast.DDL:
		if n.OptSelect != nil {
			uncorrelatedSelects(n.OptSelect.Select, visit)
		}
	}
}

// tableSelects visits the SELECTs of the derived tables in te (a LATERAL
// one may read the tables before it, and is left alone).
func tableSelects(te ast.TableExpr, visit func(*ast.Select)) {
	switch te := te.(type) {
	case *ast.AliasedTableExpr:
		if sq, ok := te.Expr.(*ast.Subquery); ok && !te.Lateral {
			uncorrelatedSelects(sq.Select, visit)
		}
	case *ast.JoinTableExpr:
		tableSelects(te.LeftExpr, visit)
		tableSelects(te.RightExpr, visit)
	case *ast.ParenTableExpr:
		for _, e := range te.Exprs {
			tableSelects(e, visit)
		}
	}
}

// hasGroupFunc says an aggregate (not a window function) is among exprs,
// outside their subqueries.
func hasGroupFunc(exprs ...ast.Expr) bool {
	nodes := make([]ast.SQLNode, len(exprs))
	for i, e := range exprs {
		nodes[i] = e
	}
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if _, ok := n.(*ast.Subquery); ok {
			return false, nil
		}
		found = found || isGroupFunc(n)
		return !found, nil
	}, nodes...)
	return found
}

// isGroupFunc says n is an aggregate function call without OVER.
func isGroupFunc(n ast.SQLNode) bool {
	switch n := n.(type) {
	case *ast.FuncExpr:
		return n.Over == nil && n.IsAggregate()
	case *ast.GroupConcatExpr:
		return true
	}
	return false
}

// groupFuncArgs are the arguments of an aggregate call.
func groupFuncArgs(n ast.SQLNode) []ast.Expr {
	var exprs ast.SelectExprs
	switch n := n.(type) {
	case *ast.FuncExpr:
		exprs = n.Exprs
	case *ast.GroupConcatExpr:
		exprs = n.Exprs
	}
	var out []ast.Expr
	for _, e := range exprs {
		if ae, ok := e.(*ast.AliasedExpr); ok {
			out = append(out, ae.Expr)
		}
	}
	return out
}

// outerGroupFunc finds an aggregate in a subquery whose columns all belong
// to an outer query (`SELECT (SELECT SUM(t.b)) FROM t`): MySQL computes it
// in the outer query, which it turns into an aggregate one, and
// go-mysql-server computed it in the subquery, once per outer row, which
// answered wrong rows (one per row of t, not one). It is refused with 1235
// until icesql computes it where MySQL does; "" when there is none.
// Unqualified columns are taken as the subquery's own.
func outerGroupFunc(stmt ast.Statement) string {
	found := ""
	var visit func(s ast.SelectStatement, outer []map[string]bool)
	visit = func(s ast.SelectStatement, outer []map[string]bool) {
		switch s := s.(type) {
		case *ast.SetOp:
			visit(s.Left, outer)
			visit(s.Right, outer)
		case *ast.ParenSelect:
			visit(s.Select, outer)
		case *ast.Select:
			if s.With != nil {
				for _, cte := range s.With.Ctes {
					if sq, ok := cte.Expr.(*ast.Subquery); ok {
						visit(sq.Select, nil)
					}
				}
			}
			own := map[string]bool{}
			var conds []ast.SQLNode
			for _, te := range s.From {
				scopeOf(te, own, &conds, func(sq *ast.Subquery, lateral bool) {
					if lateral {
						visit(sq.Select, append(outer, own))
					} else {
						visit(sq.Select, nil)
					}
				})
			}
			inner := append(append([]map[string]bool{}, outer...), own)
			nodes := append([]ast.SQLNode{s.SelectExprs, s.GroupBy, s.OrderBy}, conds...)
			if s.Where != nil {
				nodes = append(nodes, s.Where.Expr)
			}
			if s.Having != nil {
				nodes = append(nodes, s.Having.Expr)
			}
			_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
				if sq, ok := n.(*ast.Subquery); ok {
					visit(sq.Select, inner)
					return false, nil
				}
				if found == "" && len(outer) > 0 && isGroupFunc(n) && onlyOuterColumns(groupFuncArgs(n), own, outer) {
					found = ast.String(n)
				}
				return true, nil
			}, nodes...)
		}
	}
	switch s := stmt.(type) {
	case ast.SelectStatement:
		visit(s, nil)
	case *ast.Insert:
		if rows, ok := s.Rows.(ast.SelectStatement); ok {
			visit(rows, nil)
		}
	case *ast.DDL:
		if s.OptSelect != nil {
			visit(s.OptSelect.Select, nil)
		}
	}
	return found
}

// scopeOf adds the names te's tables are known by to own, the join
// conditions to conds, and hands each derived table to derived.
func scopeOf(te ast.TableExpr, own map[string]bool, conds *[]ast.SQLNode, derived func(*ast.Subquery, bool)) {
	switch te := te.(type) {
	case *ast.AliasedTableExpr:
		name := te.As.String()
		switch e := te.Expr.(type) {
		case ast.TableName:
			if name == "" {
				name = e.Name.String()
			}
		case *ast.Subquery:
			derived(e, te.Lateral)
		}
		own[strings.ToLower(name)] = true
	case *ast.JoinTableExpr:
		scopeOf(te.LeftExpr, own, conds, derived)
		scopeOf(te.RightExpr, own, conds, derived)
		if te.Condition.On != nil {
			*conds = append(*conds, te.Condition.On)
		}
	case *ast.ParenTableExpr:
		for _, e := range te.Exprs {
			scopeOf(e, own, conds, derived)
		}
	}
}

// onlyOuterColumns says exprs name at least one column and every column
// they name (outside their subqueries) is qualified by a table of an outer
// query and of none of own.
func onlyOuterColumns(exprs []ast.Expr, own map[string]bool, outer []map[string]bool) bool {
	nodes := make([]ast.SQLNode, len(exprs))
	for i, e := range exprs {
		nodes[i] = e
	}
	seen, outerOnly := 0, true
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ColName:
			seen++
			q := strings.ToLower(n.Qualifier.Name.String())
			if q == "" || own[q] || !slices.ContainsFunc(outer, func(m map[string]bool) bool { return m[q] }) {
				outerOnly = false
			}
		}
		return outerOnly, nil
	}, nodes...)
	return seen > 0 && outerOnly
}

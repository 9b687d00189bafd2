package planrules

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server resolves the explicit targets of a multi-table DELETE by
// the names its FROM scope records, and a JOIN ... USING scope does not
// record the target's alias: DELETE a FROM a JOIN b USING (id) then
// resolved a to the table itself instead of the row-identity variant the
// statement reads (engine/rowlevel.go), which refused it with 1093. ON works (and
// UPDATE resolves its targets otherwise). So in a multi-table DELETE a
// join USING (c, ...) of two tables becomes a join ON l.c = r.c AND ...,
// and an unqualified c in the statement's WHERE and ORDER BY names the
// table whose value the USING column takes (the left one, the right one of
// a RIGHT JOIN), as MySQL's coalesced column does.

// UsingAsOn rewrites the USING joins of exprs, and qualifies the USING
// columns that where and order name without a table.
func UsingAsOn(exprs ast.TableExprs, where *ast.Where, order ast.OrderBy) {
	var walk func(te ast.TableExpr)
	walk = func(te ast.TableExpr) {
		switch t := te.(type) {
		case *ast.ParenTableExpr:
			for _, e := range t.Exprs {
				walk(e)
			}
		case *ast.JoinTableExpr:
			walk(t.LeftExpr)
			walk(t.RightExpr)
			if len(t.Condition.Using) == 0 {
				return
			}
			left, lok := tableRef(t.LeftExpr)
			right, rok := tableRef(t.RightExpr)
			if !lok || !rok {
				return
			}
			var on ast.Expr
			for _, c := range t.Condition.Using {
				eq := &ast.ComparisonExpr{Operator: ast.EqualStr,
					Left:  &ast.ColName{Name: c, Qualifier: left},
					Right: &ast.ColName{Name: c, Qualifier: right}}
				if on == nil {
					on = eq
				} else {
					on = &ast.AndExpr{Left: on, Right: eq}
				}
			}
			coalesced := left
			if strings.Contains(strings.ToLower(t.Join), "right") {
				coalesced = right
			}
			for _, c := range t.Condition.Using {
				qualify(where, c, coalesced)
				qualify(order, c, coalesced)
			}
			t.Condition = ast.JoinCondition{On: on}
		}
	}
	for _, te := range exprs {
		walk(te)
	}
}

// tableRef is the name a plain table of a FROM clause is referred to by.
func tableRef(te ast.TableExpr) (ast.TableName, bool) {
	at, ok := te.(*ast.AliasedTableExpr)
	if !ok {
		return ast.TableName{}, false
	}
	tn, ok := at.Expr.(ast.TableName)
	if !ok {
		return ast.TableName{}, false
	}
	if !at.As.IsEmpty() {
		return ast.TableName{Name: at.As}, true
	}
	return tn, true
}

// qualify gives the unqualified references to column c in n (outside
// subqueries) the qualifier q.
func qualify(n ast.SQLNode, c ast.ColIdent, q ast.TableName) {
	if n == nil {
		return
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ColName:
			if n.Qualifier.IsEmpty() && n.Name.Equal(c) {
				n.Qualifier = q
			}
		}
		return true, nil
	}, n)
}

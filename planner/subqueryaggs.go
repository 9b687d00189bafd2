package planner

import (
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// distinguishSubqueryTables gives a table of an aggregating subquery in a
// WHERE or HAVING clause its own alias when the enclosing SELECT reads a
// table of the same name, and qualifies the subquery's references to it
// with that alias. go-mysql-server finds an aggregate by its text, looking
// in the enclosing query too, so in TPC-H Q11
//
//	... FROM partsupp ... GROUP BY ps_partkey HAVING SUM(ps_supplycost * ps_availqty) >
//	    (SELECT SUM(ps_supplycost * ps_availqty) * 0.0001 FROM partsupp ...)
//
// the subquery's SUM was taken for the outer query's, one value per group:
// ERROR 1242, "the subquery returned more than 1 row". With the alias the
// texts differ. A name in the subquery that is not qualified already
// resolves to the subquery's own table, so only qualified references
// change, and not in a nested SELECT that reads a table of that name
// itself. Subqueries in the select list keep their text, which names
// their column.
func distinguishSubqueryTables(stmt ast.Statement) {
	var node ast.SQLNode = stmt
	if ex, ok := stmt.(*ast.Explain); ok {
		node = ex.Statement // ast.Walk does not enter it; EXPLAIN shows what runs
	}
	n := 0
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		sel, ok := node.(*ast.Select)
		if !ok {
			return true, nil
		}
		outer := fromNames(sel.From)
		if len(outer) == 0 {
			return true, nil
		}
		for _, w := range []*ast.Where{sel.Where, sel.Having} {
			if w == nil {
				continue
			}
			_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
				sq, ok := node.(*ast.Subquery)
				if !ok {
					return true, nil
				}
				if inner, ok := sq.Select.(*ast.Select); ok && aggregates(inner) {
					aliasShadowingTables(inner, outer, &n)
				}
				return false, nil // the outer walk reaches the subquery's own subqueries
			}, w.Expr)
		}
		return true, nil
	}, node)
}

// fromNames is the lower-case names a FROM clause gives its tables: their
// aliases, or their names when they have none.
func fromNames(from ast.TableExprs) map[string]bool {
	names := map[string]bool{}
	var add func(te ast.TableExpr)
	add = func(te ast.TableExpr) {
		switch te := te.(type) {
		case *ast.AliasedTableExpr:
			if !te.As.IsEmpty() {
				names[strings.ToLower(te.As.String())] = true
			} else if tn, ok := te.Expr.(ast.TableName); ok {
				names[strings.ToLower(tn.Name.String())] = true
			}
		case *ast.JoinTableExpr:
			add(te.LeftExpr)
			add(te.RightExpr)
		case *ast.ParenTableExpr:
			for _, e := range te.Exprs {
				add(e)
			}
		}
	}
	for _, te := range from {
		add(te)
	}
	return names
}

// aggregates says whether sel's select list or HAVING calls an aggregate
// function (not counting nested subqueries).
func aggregates(sel *ast.Select) bool {
	found := false
	visit := func(node ast.SQLNode) (bool, error) {
		switch node := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			found = found || node.IsAggregate()
		case *ast.GroupConcatExpr:
			found = true
		}
		return !found, nil
	}
	_ = ast.Walk(visit, sel.SelectExprs)
	if sel.Having != nil {
		_ = ast.Walk(visit, sel.Having.Expr)
	}
	return found
}

// aliasShadowingTables aliases the tables of sel's FROM clause that have no
// alias and a name in outer, and requalifies sel's references to them.
func aliasShadowingTables(sel *ast.Select, outer map[string]bool, n *int) {
	renamed := map[string]string{}
	var alias func(te ast.TableExpr)
	alias = func(te ast.TableExpr) {
		switch te := te.(type) {
		case *ast.AliasedTableExpr:
			tn, ok := te.Expr.(ast.TableName)
			if !ok || !te.As.IsEmpty() || !outer[strings.ToLower(tn.Name.String())] {
				return
			}
			*n++
			name := fmt.Sprintf("%s_icesql_sq%d", tn.Name.String(), *n)
			renamed[strings.ToLower(tn.Name.String())] = name
			te.As = ast.NewTableIdent(name)
		case *ast.JoinTableExpr:
			alias(te.LeftExpr)
			alias(te.RightExpr)
		case *ast.ParenTableExpr:
			for _, e := range te.Exprs {
				alias(e)
			}
		}
	}
	for _, te := range sel.From {
		alias(te)
	}
	if len(renamed) == 0 {
		return
	}
	requalify(sel, renamed)
}

// requalify points the references of sel (and of the SELECTs nested in it
// that do not read a table of the same name) to the renamed tables.
func requalify(sel *ast.Select, renamed map[string]string) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch node := node.(type) {
		case *ast.Select:
			if node == sel {
				return true, nil
			}
			own := fromNames(node.From)
			inner := map[string]string{}
			for k, v := range renamed {
				if !own[k] {
					inner[k] = v
				}
			}
			if len(inner) > 0 {
				requalify(node, inner)
			}
			return false, nil
		case *ast.ColName:
			if node.Qualifier.DbQualifier.IsEmpty() {
				if to, ok := renamed[strings.ToLower(node.Qualifier.Name.String())]; ok {
					node.Qualifier.Name = ast.NewTableIdent(to)
				}
			}
		}
		return true, nil
	}, sel)
}

package planrules

import (
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL computes window functions after GROUP BY and HAVING, over the
// grouped rows: SELECT k, SUM(x), RANK() OVER (ORDER BY SUM(x)) FROM t
// GROUP BY k ranks the groups. go-mysql-server's planner refuses any window
// function in a grouped query (ERROR 1140 with a broken message). icesql
// writes such a SELECT as MySQL evaluates it: the grouping moves into a
// derived table that yields every grouped value the window functions, the
// select list and ORDER BY read (each aggregate, each column read outside
// an aggregate), and the outer SELECT computes the window functions over its
// rows. A column read outside an aggregate that GROUP BY does not determine
// is then refused by the derived table's GROUP BY check, 1055, as MySQL
// refuses it. The outer columns keep the names the statement gave them. It
// runs before havingAliases and the HAVING-over-join rewrites
// (havingjoin.go), which then see the derived table's grouped SELECT.

// groupedRelation is the derived table's name, one a statement would not use.
const groupedRelation = "icesql_grouped"

// GroupedWindows rewrites every grouped SELECT of stmt that has window
// functions.
func GroupedWindows(stmt ast.Statement) {
	if ex, ok := stmt.(*ast.Explain); ok {
		stmt = ex.Statement // ast.Walk does not enter it; EXPLAIN shows what runs
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if sel, ok := n.(*ast.Select); ok {
			groupWindows(sel)
		}
		return true, nil
	}, stmt)
}

// groupWindows rewrites sel in place when it groups and has window
// functions, and leaves it alone when it cannot (a * in its select list, a
// subquery outside its WHERE, INTO).
func groupWindows(sel *ast.Select) {
	if sel.Into != nil || !selectHasWindow(sel) || len(sel.GroupBy) == 0 && !selectHasAggregate(sel) || !liftable(sel) {
		return
	}
	g := &grouping{seen: map[string]string{}}
	outer := make(ast.SelectExprs, len(sel.SelectExprs))
	aliases := map[string]bool{}
	for i, se := range sel.SelectExprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok {
			return // * or t.*
		}
		name := ae.As
		if c, ok := ae.Expr.(*ast.ColName); ok && name.IsEmpty() {
			name = c.Name
		}
		if name.IsEmpty() {
			name = ast.NewColIdent(ae.InputExpression)
		}
		aliases[name.Lowered()] = true
		if !hasWindow(ae.Expr) {
			// Computed whole in the derived table, under its own alias so
			// that HAVING can name it.
			col := g.add(ae.Expr, ae.As.String())
			outer[i] = &ast.AliasedExpr{Expr: col, As: name}
			continue
		}
		outer[i] = &ast.AliasedExpr{Expr: g.lift(ae.Expr), As: name}
	}
	for _, w := range sel.Window {
		g.liftWindow(w)
	}
	for _, o := range sel.OrderBy {
		if c, ok := o.Expr.(*ast.ColName); ok && c.Qualifier.IsEmpty() && aliases[c.Name.Lowered()] {
			continue // a select list name
		}
		if v, ok := o.Expr.(*ast.SQLVal); ok && v.Type == ast.IntVal {
			continue // a select list position
		}
		o.Expr = g.lift(o.Expr)
	}
	if g.failed {
		return
	}
	if len(g.exprs) == 0 { // one row per group, even when nothing is read
		g.add(ast.NewIntVal([]byte("1")), "")
	}
	inner := &ast.Select{
		SelectExprs: g.exprs,
		From:        sel.From,
		Where:       sel.Where,
		GroupBy:     sel.GroupBy,
		Having:      sel.Having,
		Comments:    sel.Comments,
	}
	sel.SelectExprs = outer
	sel.From = ast.TableExprs{&ast.AliasedTableExpr{
		Expr: &ast.Subquery{Select: inner},
		As:   ast.NewTableIdent(groupedRelation),
	}}
	sel.Where, sel.GroupBy, sel.Having = nil, nil, nil
}

// liftable says the parts of sel that lift reads hold no subquery, which
// could read the table's columns itself.
func liftable(sel *ast.Select) bool {
	nodes := []ast.SQLNode{sel.Window, sel.OrderBy}
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok && hasWindow(ae.Expr) {
			nodes = append(nodes, ae)
		}
	}
	for _, n := range nodes {
		found := false
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			_, sub := n.(*ast.Subquery)
			found = found || sub
			return !found, nil
		}, n)
		if found {
			return false
		}
	}
	return true
}

// grouping collects the derived table's columns.
type grouping struct {
	exprs  ast.SelectExprs
	seen   map[string]string // an expression's text: its column
	failed bool
}

// add makes e a column of the derived table (once per text), named alias
// when given, and returns the outer reference to it.
func (g *grouping) add(e ast.Expr, alias string) ast.Expr {
	key := ast.String(e)
	name, ok := g.seen[key]
	if !ok || alias != "" {
		name = alias
		if name == "" {
			name = "icesql_g" + strconv.Itoa(len(g.exprs)+1)
		}
		g.seen[key] = name
		g.exprs = append(g.exprs, &ast.AliasedExpr{Expr: e, As: ast.NewColIdent(name)})
	}
	return &ast.ColName{Name: ast.NewColIdent(name), Qualifier: ast.TableName{Name: ast.NewTableIdent(groupedRelation)}}
}

// lift is root with each grouped value it reads outside the window
// functions' own evaluation (an aggregate, a column) read from the derived
// table instead.
func (g *grouping) lift(root ast.Expr) ast.Expr {
	var targets []ast.Expr
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			g.failed = true
			return false, nil
		case *ast.ColName:
			targets = append(targets, n)
			return false, nil
		case *ast.GroupConcatExpr:
			targets = append(targets, n)
			return false, nil
		case *ast.FuncExpr:
			if n.Over != nil {
				g.liftWindowFunc(n)
				return false, nil
			}
			if isAggregateFunc(n) {
				targets = append(targets, n)
				return false, nil
			}
		}
		return true, nil
	}, root)
	for _, t := range targets {
		root = ast.ReplaceExpr(root, t, g.add(t, ""))
	}
	return root
}

// liftWindowFunc lifts the arguments and the window of a window function.
func (g *grouping) liftWindowFunc(f *ast.FuncExpr) {
	for _, a := range f.Exprs {
		if ae, ok := a.(*ast.AliasedExpr); ok {
			ae.Expr = g.lift(ae.Expr)
		}
	}
	g.liftWindow((*ast.WindowDef)(f.Over))
}

func (g *grouping) liftWindow(w *ast.WindowDef) {
	if w == nil {
		return
	}
	for i := range w.PartitionBy {
		w.PartitionBy[i] = g.lift(w.PartitionBy[i])
	}
	for _, o := range w.OrderBy {
		o.Expr = g.lift(o.Expr)
	}
}

// isAggregateFunc says f is an aggregate function call (not a window one).
func isAggregateFunc(f *ast.FuncExpr) bool {
	if f.Over != nil {
		return false
	}
	return f.IsAggregate() || strings.EqualFold(f.Name.String(), "any_value")
}

// selectHasWindow says sel's select list or ORDER BY calls a window
// function.
func selectHasWindow(sel *ast.Select) bool {
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok && hasWindow(ae.Expr) { // havingjoin.go
			return true
		}
	}
	for _, o := range sel.OrderBy {
		if hasWindow(o.Expr) {
			return true
		}
	}
	return false
}

// selectHasAggregate says sel's select list, HAVING or ORDER BY calls an
// aggregate function.
func selectHasAggregate(sel *ast.Select) bool {
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok && hasAggregate(ae.Expr) { // havingalias.go
			return true
		}
	}
	for _, o := range sel.OrderBy {
		if hasAggregate(o.Expr) {
			return true
		}
	}
	return sel.Having != nil && hasAggregate(sel.Having.Expr)
}

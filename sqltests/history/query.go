package history

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Query is a generated SELECT in both dialects. Table references are
// placeholders the runner resolves: {{t:NAME}} a table, {{asof:NAME:STEP}}
// the table as of the snapshot statement STEP made (VERSION AS OF on
// icesql, the oracle's copy of its rows on MariaDB), {{snapcount:NAME}}
// how many snapshots the oracle expects the table to have.
type Query struct {
	Shape   string
	Ice     string
	Maria   string
	Ordered bool // the ORDER BY orders every output column: compare in order
	// Sums are the output columns that are a SUM or AVG of doubles, which
	// depend on the order rows are added, and Terms the FROM and WHERE
	// clauses their terms come from (floatsum.go).
	Sums  []floatSum
	Terms string
}

// queryGen draws queries over the model tables.
type queryGen struct {
	rng    *rand.Rand
	cfg    *Config
	vg     *valueGen
	tables []*Table
	// Big says the tables hold thousands of rows: joins on keys with few
	// distinct values are aggregated rather than listed.
	Big bool
}

// rel is a table in a query's FROM clause.
type rel struct {
	alias string
	ref   string // placeholder
	t     *Table
	cols  []Column
}

func (r rel) col(c Column) string { return r.alias + "." + c.Name }

func (r rel) pick(rng *rand.Rand, pred func(Column) bool) (Column, bool) {
	var cs []Column
	for _, c := range r.cols {
		if pred == nil || pred(c) {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return Column{}, false
	}
	return cs[rng.IntN(len(cs))], true
}

func (g *queryGen) rel(alias string, t *Table) rel {
	cols := t.Cols
	if !g.cfg.on("read/added-columns") {
		cols = t.colsOf(func(c Column) bool { return isBase(c.Name) })
	}
	return rel{alias: alias, ref: "{{t:" + t.Name + "}}", t: t, cols: cols}
}

func (g *queryGen) table() *Table { return g.tables[g.rng.IntN(len(g.tables))] }

// Next draws a query of a shape that is on.
func (g *queryGen) Next(asof func() (ref string, cols []Column, ok bool)) Query {
	for {
		shape := weighted(g.rng, []weightedKind{
			{"filter", 12}, {"aggregate", 8}, {"group", 10}, {"distinct", 5}, {"join", 14},
			{"subquery", 14}, {"union", 8}, {"window", 8}, {"topn", 8}, {"meta", 2}, {"asof", 5}, {"branch", 5},
		})
		var q Query
		ok := true
		switch shape {
		case "asof":
			ref, cols, found := asof()
			if !found {
				ok = false
				break
			}
			r := rel{alias: "a", ref: ref, t: &Table{Cols: cols}, cols: cols}
			q = g.single(r)
			q.Shape = "asof/" + q.Shape
			if strings.HasPrefix(ref, "{{tag") {
				q.Shape = "tag/" + strings.TrimPrefix(q.Shape, "asof/")
			}
		case "branch":
			// A branch reads with the table's current columns.
			t := g.table()
			if len(t.Branches) == 0 {
				ok = false
				break
			}
			r := g.rel("a", t)
			r.ref = fmt.Sprintf("{{%s:%s:%s}}", pick(g.rng, "br", "brv"), t.Name, t.Branches[g.rng.IntN(len(t.Branches))])
			q = g.single(r)
			q.Shape = "branch/" + q.Shape
		case "meta":
			t := g.table()
			q = Query{Shape: "meta/snapshots", Ice: fmt.Sprintf("SELECT COUNT(*) FROM h.%s.snapshots", t.Name), Maria: fmt.Sprintf("SELECT {{snapcount:%s}}", t.Name)}
		case "filter", "aggregate", "group", "distinct", "topn", "window":
			q = g.singleShape(g.rel("a", g.table()), shape)
		case "join":
			q = g.join()
		case "subquery":
			q = g.subquery()
		case "union":
			q = g.union()
		}
		if ok && g.cfg.on(q.Shape) {
			if q.Maria == "" {
				q.Maria = q.Ice
			}
			return q
		}
	}
}

// single is one of the single-table shapes over r.
func (g *queryGen) single(r rel) Query {
	return g.singleShape(r, pick(g.rng, "filter", "aggregate", "group", "distinct", "topn", "window"))
}

func (g *queryGen) singleShape(r rel, shape string) Query {
	from := fmt.Sprintf("%s AS %s", r.ref, r.alias)
	where := ""
	if g.rng.IntN(5) > 0 {
		where = " WHERE " + g.predicate([]rel{r}, 3)
	}
	switch shape {
	case "filter":
		exprs := g.outputs([]rel{r}, 1+g.rng.IntN(3))
		return Query{Shape: "filter", Ice: fmt.Sprintf("SELECT %s FROM %s%s", aliased(exprs), from, where)}
	case "aggregate":
		aggs := g.aggregates([]rel{r}, 1+g.rng.IntN(4))
		return withSums(Query{Shape: "aggregate", Ice: fmt.Sprintf("SELECT %s FROM %s%s", aliased(aggs), from, where)}, []rel{r}, aggs, from, where)
	case "group":
		return g.group([]rel{r}, from, where)
	case "distinct":
		exprs := g.outputs([]rel{r}, 1+g.rng.IntN(2))
		return Query{Shape: "distinct", Ice: fmt.Sprintf("SELECT DISTINCT %s FROM %s%s", aliased(exprs), from, where)}
	case "topn":
		exprs := g.outputs([]rel{r}, 1+g.rng.IntN(3))
		order, ordered := g.orderAll(len(exprs))
		limit := fmt.Sprintf(" LIMIT %d", 1+g.rng.IntN(20))
		shapeName := "topn/limit"
		if g.rng.IntN(3) == 0 {
			limit += fmt.Sprintf(" OFFSET %d", g.rng.IntN(10))
			shapeName = "topn/offset"
		}
		return Query{Shape: shapeName, Ice: fmt.Sprintf("SELECT %s FROM %s%s%s%s", aliased(exprs), from, where, order, limit), Ordered: ordered}
	default:
		return g.window(r, from, where)
	}
}

func aliased(exprs []string) string {
	out := make([]string, len(exprs))
	for i, e := range exprs {
		out[i] = fmt.Sprintf("%s AS c%d", e, i)
	}
	return strings.Join(out, ", ")
}

// orderAll orders by every output column c0..c(n-1), each ASC or DESC, so
// that the order is total up to identical rows.
func (g *queryGen) orderAll(n int) (string, bool) {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("c%d", i)
		if g.rng.IntN(2) == 0 {
			parts[i] += " DESC"
		}
	}
	return " ORDER BY " + strings.Join(parts, ", "), true
}

// outputs are n select-list expressions over the relations.
func (g *queryGen) outputs(rels []rel, n int) []string {
	out := make([]string, n)
	for i := range out {
		r := rels[g.rng.IntN(len(rels))]
		c, _ := r.pick(g.rng, nil)
		out[i] = g.expr(r, c)
	}
	return out
}

// expr is a scalar expression over column c.
func (g *queryGen) expr(r rel, c Column) string {
	col := r.col(c)
	if g.rng.IntN(2) == 0 {
		return col
	}
	switch c.Kind {
	case KInt, KBigint:
		return pick(g.rng, col+" - 1", g.mod(col, 7), "COALESCE("+col+", -1)", "CASE WHEN "+col+" > 50 THEN 'hi' ELSE 'lo' END")
	case KDouble, KFloat:
		if c.Kind == KFloat && !g.cfg.on("expr/coalesce-float") {
			return pick(g.rng, col+" * 2", "-"+col)
		}
		return pick(g.rng, col+" * 2", "-"+col, "COALESCE("+col+", 0)")
	case KDecimal:
		return pick(g.rng, col+" + 1", col+" * 2", "COALESCE("+col+", 0)")
	case KString:
		return pick(g.rng, "UPPER("+col+")", "LOWER("+col+")", "CONCAT("+col+", '-', "+r.alias+".id)", "CHAR_LENGTH("+col+")", "SUBSTRING("+col+", 1, 3)", "COALESCE("+col+", 'none')")
	case KDate:
		return pick(g.rng, "YEAR("+col+")", "MONTH("+col+")", "COALESCE("+col+", '2000-01-01')")
	case KTimestamp:
		return pick(g.rng, "YEAR("+col+")", "HOUR("+col+")", "DATE("+col+")")
	default:
		return "CASE WHEN " + col + " THEN 'y' ELSE 'n' END"
	}
}

// aggregates are n aggregate expressions over the relations.
func (g *queryGen) aggregates(rels []rel, n int) []string {
	out := make([]string, n)
	for i := range out {
		r := rels[g.rng.IntN(len(rels))]
		c, _ := r.pick(g.rng, nil)
		col := r.col(c)
		switch {
		case g.rng.IntN(5) == 0:
			out[i] = "COUNT(*)"
		case c.Kind.numeric():
			out[i] = pick(g.rng, "SUM", "AVG", "MIN", "MAX", "COUNT") + "(" + col + ")"
		case c.Kind == KBool:
			out[i] = "COUNT(" + col + ")"
		default:
			out[i] = pick(g.rng, "MIN", "MAX", "COUNT", "COUNT(DISTINCT") + "(" + col + ")"
			if strings.HasPrefix(out[i], "COUNT(DISTINCT") {
				out[i] += ")"
			}
		}
	}
	return out
}

// group is a GROUP BY over 1-2 keys with aggregates, perhaps HAVING and a
// full ORDER BY ... LIMIT.
func (g *queryGen) group(rels []rel, from, where string) Query {
	having, order := g.rng.IntN(2) == 0, g.rng.IntN(3) == 0
	// While ORDER BY an alias of a grouped expression after HAVING is a
	// known issue, such queries group by plain columns.
	plain := having && order && !g.cfg.on("group/having-order-expr")
	nk := 1 + g.rng.IntN(2)
	var keys []string
	for range nk {
		r := rels[g.rng.IntN(len(rels))]
		c, _ := r.pick(g.rng, func(c Column) bool { return c.Kind != KDouble && c.Kind != KFloat })
		key := g.groupKey(r, c)
		if plain {
			key = r.col(c)
		}
		// MariaDB refuses a key listed twice (1055) under ONLY_FULL_GROUP_BY.
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	aggs := g.aggregates(rels, 1+g.rng.IntN(3))
	sel := append(append([]string{}, keys...), aggs...)
	q := fmt.Sprintf("SELECT %s FROM %s%s GROUP BY %s", aliased(sel), from, where, strings.Join(keys, ", "))
	shape := "group"
	if having {
		switch g.rng.IntN(3) {
		case 0:
			q += fmt.Sprintf(" HAVING COUNT(*) > %d", g.rng.IntN(3))
			shape = "group/having"
		case 1:
			// An aggregate the select list does not show, of a column of
			// any table: in a join, one whose name another table shares
			// (FINDINGS.md #14).
			r := rels[g.rng.IntN(len(rels))]
			c, _ := r.pick(g.rng, func(c Column) bool { return c.Kind.numeric() })
			q += fmt.Sprintf(" HAVING %s(%s) %s", pick(g.rng, "MIN", "MAX", "SUM", "COUNT"), r.col(c), pick(g.rng, "IS NOT NULL", "IS NULL", "> 0"))
			shape = "group/having-agg"
		default:
			q += fmt.Sprintf(" HAVING c%d IS NOT NULL", len(keys))
			shape = "group/having-alias"
		}
	}
	if order {
		o, _ := g.orderAll(len(sel))
		q += o + fmt.Sprintf(" LIMIT %d", 1+g.rng.IntN(10))
		shape += "/order"
	}
	return withSums(Query{Shape: shape, Ice: q, Ordered: order}, rels, sel, from, where)
}

func (g *queryGen) groupKey(r rel, c Column) string {
	col := r.col(c)
	if g.rng.IntN(3) > 0 {
		return col
	}
	switch c.Kind {
	case KDate, KTimestamp:
		return pick(g.rng, "YEAR("+col+")", "MONTH("+col+")")
	case KString:
		return "SUBSTRING(" + col + ", 1, 1)"
	case KInt, KBigint:
		return g.mod(col, 5)
	}
	return col
}

// mod is col % n, or (while a negative multiple's remainder being -0 is
// a known issue) col DIV n.
func (g *queryGen) mod(col string, n int) string {
	if g.cfg.on("expr/mod-negative-zero") {
		return fmt.Sprintf("%s %% %d", col, n)
	}
	return fmt.Sprintf("%s DIV %d", col, n)
}

// window is a window function over a partition, ordered by every column
// of the table where the function depends on the order of peers.
func (g *queryGen) window(r rel, from, where string) Query {
	pc, _ := r.pick(g.rng, func(c Column) bool { return c.Kind != KDouble && c.Kind != KFloat })
	part := r.col(pc)
	var all []string
	for _, c := range r.cols {
		all = append(all, r.col(c))
	}
	oc, _ := r.pick(g.rng, nil)
	nc, _ := r.pick(g.rng, func(c Column) bool { return c.Kind.numeric() })
	var fn, shape string
	switch g.rng.IntN(10) {
	case 7:
		fn, shape = g.rangeOffsetWindow(r, part, nc)
	case 8:
		fn, shape = g.rangePeersWindow(r, part, nc), "window/range-peers"
	case 9:
		frame := pick(g.rng, "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "ROWS 2 PRECEDING", "ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING",
			"ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING", "ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING")
		// Ordered by every column, so that the rows of a frame are known
		// up to identical rows.
		fn, shape = fmt.Sprintf("%s OVER (PARTITION BY %s ORDER BY %s %s)", g.frameFunction(r, nc, true), part, g.directed(all), frame), "window/rows"
	case 0:
		fn, shape = fmt.Sprintf("ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s)", part, strings.Join(all, ", ")), "window/row_number"
	case 1:
		fn, shape = fmt.Sprintf("RANK() OVER (PARTITION BY %s ORDER BY %s)", part, r.col(oc)), "window/rank"
	case 2:
		fn, shape = fmt.Sprintf("DENSE_RANK() OVER (PARTITION BY %s ORDER BY %s DESC)", part, r.col(oc)), "window/dense_rank"
	case 3:
		fn, shape = fmt.Sprintf("SUM(%s) OVER (PARTITION BY %s)", g.sumArg(r, nc), part), "window/sum"
	case 4:
		fn, shape = fmt.Sprintf("SUM(%s) OVER (PARTITION BY %s ORDER BY %s)", g.sumArg(r, nc), part, r.col(oc)), "window/running-sum"
	case 5:
		fn, shape = fmt.Sprintf("LAG(%s) OVER (PARTITION BY %s ORDER BY %s)", r.col(oc), part, strings.Join(all, ", ")), "window/lag"
	default:
		fn, shape = fmt.Sprintf("COUNT(*) OVER (PARTITION BY %s)", part), "window/count"
	}
	exprs := append(g.outputs([]rel{r}, 1+g.rng.IntN(2)), fn)
	return withSums(Query{Shape: shape, Ice: fmt.Sprintf("SELECT %s FROM %s%s", aliased(exprs), from, where)}, []rel{r}, exprs, from, where)
}

// frameFunction is a window function that reads its frame: an aggregate
// over the numeric column nc or any column, or (when the order of peers is
// total, valueFns) FIRST_VALUE or LAST_VALUE.
func (g *queryGen) frameFunction(r rel, nc Column, valueFns bool) string {
	c, _ := r.pick(g.rng, nil)
	fns := []string{"COUNT(*)", "SUM(" + r.col(nc) + ")", "AVG(" + r.col(nc) + ")", "MIN(" + r.col(c) + ")", "MAX(" + r.col(c) + ")", "COUNT(" + r.col(c) + ")"}
	if valueFns {
		fns = append(fns, "FIRST_VALUE("+r.col(c)+")", "LAST_VALUE("+r.col(c)+")")
	}
	return fns[g.rng.IntN(len(fns))]
}

// directed is cols, each ASC or DESC.
func (g *queryGen) directed(cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c + pick(g.rng, "", " DESC")
	}
	return strings.Join(out, ", ")
}

// rangeOffsetWindow is an aggregate over a RANGE frame with N PRECEDING or
// N FOLLOWING bounds, ordered by one numeric column. BIGINT columns are left
// out: MariaDB computes a bound beyond the BIGINT range in BIGINT and fails
// (icesql frames it exactly: README). MariaDB takes no INTERVAL bounds.
func (g *queryGen) rangeOffsetWindow(r rel, part string, nc Column) (string, string) {
	oc, ok := r.pick(g.rng, func(c Column) bool { return c.Kind.numeric() && c.Kind != KBigint })
	if !ok {
		return fmt.Sprintf("COUNT(*) OVER (PARTITION BY %s)", part), "window/count"
	}
	n := func() int { return g.rng.IntN(4) }
	var frame string
	switch g.rng.IntN(6) {
	case 0:
		frame = fmt.Sprintf("RANGE BETWEEN %d PRECEDING AND CURRENT ROW", n())
	case 1:
		frame = fmt.Sprintf("RANGE BETWEEN %d PRECEDING AND %d FOLLOWING", n(), n())
	case 2:
		frame = fmt.Sprintf("RANGE BETWEEN CURRENT ROW AND %d FOLLOWING", n())
	case 3:
		a := 1 + n()
		frame = fmt.Sprintf("RANGE BETWEEN %d PRECEDING AND %d PRECEDING", a+n(), a)
	case 4:
		a := 1 + n()
		frame = fmt.Sprintf("RANGE BETWEEN %d FOLLOWING AND %d FOLLOWING", a, a+n())
	default:
		frame = fmt.Sprintf("RANGE BETWEEN UNBOUNDED PRECEDING AND %d FOLLOWING", n())
	}
	return fmt.Sprintf("%s OVER (PARTITION BY %s ORDER BY %s%s %s)", g.frameFunction(r, nc, false), part, r.col(oc), pick(g.rng, "", " DESC"), frame), "window/range-offset"
}

// rangePeersWindow is an aggregate over a RANGE frame bounded by CURRENT
// ROW (the current row's peers) or UNBOUNDED, ordered by one or two
// columns of any type.
func (g *queryGen) rangePeersWindow(r rel, part string, nc Column) string {
	keys := []string{r.col(g.anyCol(r))}
	if g.rng.IntN(2) == 0 {
		keys = append(keys, r.col(g.anyCol(r)))
	}
	frame := pick(g.rng, "", " RANGE CURRENT ROW", " RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", " RANGE UNBOUNDED PRECEDING",
		" RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING")
	return fmt.Sprintf("%s OVER (PARTITION BY %s ORDER BY %s%s)", g.frameFunction(r, nc, false), part, g.directed(keys), frame)
}

func (g *queryGen) anyCol(r rel) Column {
	c, _ := r.pick(g.rng, nil)
	return c
}

// sumArg is a windowed SUM's argument: the column, or (while SUM over
// only NULLs is a known issue) the column with NULLs as 0.
func (g *queryGen) sumArg(r rel, c Column) string {
	if g.cfg.on("window/sum-null") {
		return r.col(c)
	}
	return "COALESCE(" + r.col(c) + ", 0)"
}

// joinKeys are the column pairs joins and subqueries match on.
var joinKeys = [][2]string{{"k", "id"}, {"id", "id"}, {"id", "k"}, {"s", "s"}, {"d", "d"}, {"k", "k"}, {"m", "m"}, {"b", "b"}}

// asBigint is expr, the column col, as a BIGINT when col is the integer k
// (INT until an ALTER widens it, table by table): MariaDB's NOT IN quirk
// (FINDINGS.md, oracle quirks) needs an INT subquery column.
func asBigint(col, expr string) string {
	if col == "k" {
		return "CAST(" + expr + " AS SIGNED)"
	}
	return expr
}

// fanout says a key pair matches many rows to many rows.
func fanout(key [2]string) bool { return key[0] != "id" && key[1] != "id" }

// join is a join of 2 or 3 tables with kinds INNER, LEFT, RIGHT, CROSS.
func (g *queryGen) join() Query {
	n := 2 + g.rng.IntN(2)
	rels := make([]rel, n)
	for i := range rels {
		rels[i] = g.rel(string(rune('a'+i)), g.table())
	}
	from := fmt.Sprintf("%s AS %s", rels[0].ref, rels[0].alias)
	var kinds []string
	many := false
	var crossConds []string
	for i := 1; i < n; i++ {
		key := joinKeys[g.rng.IntN(len(joinKeys))]
		if key[0] == "b" && !g.Big && g.rng.IntN(2) == 0 {
			key = joinKeys[0]
		}
		many = many || fanout(key)
		left := rels[g.rng.IntN(i)]
		cond := fmt.Sprintf("%s.%s = %s.%s", left.alias, key[0], rels[i].alias, key[1])
		kind := pick(g.rng, "JOIN", "LEFT JOIN", "RIGHT JOIN", "CROSS JOIN", "LEFT JOIN")
		if kind == "CROSS JOIN" {
			from += fmt.Sprintf(" CROSS JOIN %s AS %s", rels[i].ref, rels[i].alias)
			crossConds = append(crossConds, cond)
		} else {
			if g.rng.IntN(4) == 0 {
				c, _ := rels[i].pick(g.rng, func(c Column) bool { return c.Kind.numeric() })
				cond += fmt.Sprintf(" AND %s > %s", rels[i].col(c), g.vg.value(c, false))
			}
			from += fmt.Sprintf(" %s %s AS %s ON %s", kind, rels[i].ref, rels[i].alias, cond)
		}
		kinds = append(kinds, strings.ToLower(strings.Fields(kind)[0]))
	}
	var conds []string
	conds = append(conds, crossConds...)
	if g.rng.IntN(2) == 0 {
		conds = append(conds, g.predicate(rels, 2))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	shape := fmt.Sprintf("join/%s", strings.Join(kinds, "-"))
	if many && g.Big || g.rng.IntN(4) == 0 {
		if g.rng.IntN(2) == 0 {
			q := g.group(rels, from, where)
			q.Shape = shape + "/" + q.Shape
			return q
		}
		aggs := g.aggregates(rels, 1+g.rng.IntN(3))
		return withSums(Query{Shape: shape + "/aggregate", Ice: fmt.Sprintf("SELECT %s FROM %s%s", aliased(aggs), from, where)}, rels, aggs, from, where)
	}
	exprs := g.outputs(rels, 1+g.rng.IntN(3))
	q := Query{Shape: shape, Ice: fmt.Sprintf("SELECT %s FROM %s%s", aliased(exprs), from, where)}
	if g.rng.IntN(3) == 0 {
		order, _ := g.orderAll(len(exprs))
		q.Ice += order + fmt.Sprintf(" LIMIT %d", 1+g.rng.IntN(30))
		q.Ordered = true
	}
	return q
}

// subquery is a query filtered by IN, NOT IN, EXISTS or NOT EXISTS, or a
// scalar subquery, correlated or not.
func (g *queryGen) subquery() Query {
	outer := g.rel("l", g.table())
	inner := g.rel("q", g.table())
	key := joinKeys[g.rng.IntN(len(joinKeys))]
	innerWhere := ""
	if g.rng.IntN(2) == 0 {
		innerWhere = g.predicate([]rel{inner}, 2)
	}
	and := func(conds ...string) string {
		var out []string
		for _, c := range conds {
			if c != "" {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return ""
		}
		return " WHERE " + strings.Join(out, " AND ")
	}
	corr := fmt.Sprintf("q.%s = l.%s", key[1], key[0])
	var pred, shape string
	switch g.rng.IntN(8) {
	case 0:
		pred, shape = fmt.Sprintf("l.%s IN (SELECT q.%s FROM %s AS q%s)", key[0], key[1], inner.ref, and(innerWhere)), "subquery/in"
	case 1:
		// The same column on both sides, as BIGINT: MariaDB 10.11 answers a
		// BIGINT beyond INT's range NOT IN (an INT column holding NULL) as
		// TRUE, and k is INT in one table and BIGINT in another once an
		// ALTER widened it.
		pred, shape = fmt.Sprintf("l.%s NOT IN (SELECT %s FROM %s AS q%s)", key[0], asBigint(key[0], "q."+key[0]), inner.ref, and(innerWhere)), "subquery/not-in"
	case 2:
		pred, shape = fmt.Sprintf("EXISTS (SELECT 1 FROM %s AS q%s)", inner.ref, and(corr, innerWhere)), "subquery/exists"
	case 3:
		pred, shape = fmt.Sprintf("NOT EXISTS (SELECT 1 FROM %s AS q%s)", inner.ref, and(corr, innerWhere)), "subquery/not-exists"
	case 4:
		c, _ := inner.pick(g.rng, func(c Column) bool { return c.Kind == KString })
		pred, shape = fmt.Sprintf("l.s IN (SELECT q.%s FROM %s AS q%s)", c.Name, inner.ref, and("q.k = l.k", innerWhere)), "subquery/correlated-in"
	case 5:
		pred, shape = fmt.Sprintf("l.x > (SELECT AVG(q.x) FROM %s AS q%s)", inner.ref, and(innerWhere)), "subquery/scalar"
	case 6:
		pred, shape = fmt.Sprintf("l.k NOT IN (SELECT %s FROM %s AS q%s)", asBigint("k", "q.k"), inner.ref, and("q.s = l.s", innerWhere)), "subquery/correlated-not-in"
	default:
		exprs := g.outputs([]rel{outer}, 1+g.rng.IntN(2))
		exprs = append(exprs, fmt.Sprintf("(SELECT COUNT(*) FROM %s AS q%s)", inner.ref, and(corr, innerWhere)))
		where := ""
		if g.rng.IntN(2) == 0 {
			where = " WHERE " + g.predicate([]rel{outer}, 2)
		}
		return Query{Shape: "subquery/scalar-select", Ice: fmt.Sprintf("SELECT %s FROM %s AS l%s", aliased(exprs), outer.ref, where)}
	}
	if g.rng.IntN(2) == 0 {
		pred = "(" + pred + ") AND (" + g.predicate([]rel{outer}, 2) + ")"
	}
	from := fmt.Sprintf("%s AS l", outer.ref)
	if g.rng.IntN(3) == 0 {
		aggs := g.aggregates([]rel{outer}, 1+g.rng.IntN(3))
		return withSums(Query{Shape: shape + "/aggregate", Ice: fmt.Sprintf("SELECT %s FROM %s WHERE %s", aliased(aggs), from, pred)}, []rel{outer}, aggs, from, " WHERE "+pred)
	}
	exprs := g.outputs([]rel{outer}, 1+g.rng.IntN(3))
	return Query{Shape: shape, Ice: fmt.Sprintf("SELECT %s FROM %s WHERE %s", aliased(exprs), from, pred)}
}

// union is two single-table SELECTs of the same column kinds, UNION or
// UNION ALL, perhaps ordered with LIMIT and OFFSET.
func (g *queryGen) union() Query {
	a, b := g.rel("l", g.table()), g.rel("l", g.table())
	names := []string{"id", "k", "s", "d", "m", "x", "b"}
	n := 1 + g.rng.IntN(2)
	var cols []string
	for range n {
		cols = append(cols, names[g.rng.IntN(len(names))])
	}
	side := func(r rel) string {
		exprs := make([]string, len(cols))
		for i, c := range cols {
			exprs[i] = fmt.Sprintf("l.%s AS c%d", c, i)
		}
		where := ""
		if g.rng.IntN(3) > 0 {
			where = " WHERE " + g.predicate([]rel{r}, 2)
		}
		return fmt.Sprintf("SELECT %s FROM %s AS l%s", strings.Join(exprs, ", "), r.ref, where)
	}
	op := pick(g.rng, "UNION", "UNION ALL")
	shape := "union/" + strings.ToLower(strings.ReplaceAll(op, " ", "-"))
	if g.rng.IntN(3) == 0 {
		order, _ := g.orderAll(n)
		q := fmt.Sprintf("(%s) %s (%s)%s LIMIT %d", side(a), op, side(b), order, 1+g.rng.IntN(20))
		shape += "/limit"
		if g.rng.IntN(2) == 0 {
			q += fmt.Sprintf(" OFFSET %d", 1+g.rng.IntN(10))
			shape = strings.TrimSuffix(shape, "/limit") + "/offset"
		}
		return Query{Shape: shape, Ice: q, Ordered: true}
	}
	return Query{Shape: shape, Ice: fmt.Sprintf("%s %s %s", side(a), op, side(b))}
}

// predicate is a boolean combination of up to n atoms over the relations.
func (g *queryGen) predicate(rels []rel, n int) string {
	k := 1 + g.rng.IntN(n)
	p := g.atom(rels[g.rng.IntN(len(rels))])
	for i := 1; i < k; i++ {
		op := pick(g.rng, "AND", "AND", "OR")
		p = fmt.Sprintf("(%s) %s (%s)", p, op, g.atom(rels[g.rng.IntN(len(rels))]))
	}
	if g.rng.IntN(10) == 0 {
		p = "NOT (" + p + ")"
	}
	return p
}

// tablePredicate is a predicate over a table's columns, unqualified (for
// UPDATE, DELETE and the sources of MERGE and INSERT OVERWRITE).
func (g *queryGen) tablePredicate(t *Table) string {
	r := rel{alias: "\x00", t: t, cols: t.Cols}
	return strings.ReplaceAll(g.predicate([]rel{r}, 2), "\x00.", "")
}

// atom is one comparison of a pushable (or deliberately not pushable)
// shape over a column.
func (g *queryGen) atom(r rel) string {
	c, _ := r.pick(g.rng, nil)
	col := r.col(c)
	v := func() string { return g.vg.value(c, false) }
	switch g.rng.IntN(12) {
	case 0:
		return col + " IS NULL"
	case 1:
		return col + " IS NOT NULL"
	}
	switch c.Kind {
	case KBool:
		return pick(g.rng, col+" = TRUE", col+" = FALSE", col, "NOT "+col)
	case KString:
		switch g.rng.IntN(7) {
		case 0:
			return col + " LIKE " + lit(pick(g.rng, "ap%", "%an%", "_pple", "%e", "a%", "%/%"))
		case 1:
			return col + " NOT LIKE " + lit(pick(g.rng, "%ng%", "b%", "%a"))
		case 2:
			return fmt.Sprintf("%s IN (%s, %s, %s)", col, v(), v(), v())
		case 3:
			return fmt.Sprintf("%s NOT IN (%s, %s)", col, v(), v())
		case 4:
			return fmt.Sprintf("UPPER(%s) = 'APPLE'", col)
		}
	case KDate:
		switch g.rng.IntN(5) {
		case 0:
			return fmt.Sprintf("YEAR(%s) = %d", col, 2019+g.rng.IntN(7))
		case 1:
			return fmt.Sprintf("MONTH(%s) >= %d", col, 1+g.rng.IntN(12))
		case 2:
			return fmt.Sprintf("%s BETWEEN %s AND %s", col, v(), v())
		}
	case KTimestamp:
		switch g.rng.IntN(5) {
		case 0:
			return fmt.Sprintf("HOUR(%s) < %d", col, g.rng.IntN(24))
		case 1:
			return fmt.Sprintf("%s >= '%04d-%02d-01'", col, 2019+g.rng.IntN(7), 1+g.rng.IntN(12))
		case 2:
			return fmt.Sprintf("DATE(%s) = %s", col, lit(fmt.Sprintf("%04d-%02d-%02d", 2019+g.rng.IntN(7), 1+g.rng.IntN(12), 1+g.rng.IntN(28))))
		}
	default:
		k := func() string { return g.vg.constant(c) }
		switch g.rng.IntN(7) {
		case 0:
			return fmt.Sprintf("%s BETWEEN %s AND %s", col, k(), k())
		case 1:
			return fmt.Sprintf("%s IN (%s, %s, %s)", col, k(), k(), k())
		case 2:
			return fmt.Sprintf("%s NOT IN (%s, %s)", col, k(), k())
		case 3:
			if c.Kind == KInt || c.Kind == KBigint && g.cfg.on("arith/bigint-overflow") {
				return fmt.Sprintf("(%s - 2) < %s", col, v())
			}
			if c.Kind == KFloat && !g.cfg.on("expr/coalesce-float") {
				return fmt.Sprintf("%s > %s", col, v())
			}
			return fmt.Sprintf("COALESCE(%s, 0) > %s", col, v())
		}
	}
	op := pick(g.rng, "=", "<>", "<", "<=", ">", ">=", "<=>")
	if c.Kind.numeric() {
		return fmt.Sprintf("%s %s %s", col, op, g.vg.constant(c))
	}
	return fmt.Sprintf("%s %s %s", col, op, v())
}

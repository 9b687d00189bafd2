package planner

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// tableSuffixNames rewrites Spark's three-part table names db.t.x, which
// the MySQL grammar rejects, to db.`t$x`: one table name that the engine
// resolves to metadata table x of table t (db.t.snapshots, db.t.files, …),
// and that other features may resolve further (db.t.branch_dev).
// Only names in table position are rewritten (after FROM, JOIN, UPDATE,
// INTO, TABLE, DESCRIBE and between the tables of a FROM list): elsewhere
// db.t.col is MySQL's fully qualified column and stays as it is. The
// catalogNames pass has already turned icesql.db.t.x into db.t.x.
func tableSuffixNames(s statement) ([]edit, error) {
	var edits []edit
	type level struct{ query, fromList bool }
	levels := []level{{query: true}} // one per open parenthesis
	for i := 0; i < len(s.toks); i++ {
		t, top := s.toks[i], &levels[len(levels)-1]
		switch {
		case t.typ == '(':
			levels = append(levels, level{})
			continue
		case t.typ == ')':
			if len(levels) > 1 {
				levels = levels[:len(levels)-1]
			}
			continue
		case t.is("select"):
			// A parenthesis holding a SELECT is a subquery, whose FROM names
			// tables; other parentheses' FROM is EXTRACT(x FROM d) and the like.
			top.query, top.fromList = true, false
		case t.is("from") && top.query, i == 0 && t.is("update"):
			top.fromList = true
		case endsFromList(t):
			top.fromList = false
		}
		if !startsTableName(s, i) && !(t.typ == ',' && top.fromList) && !(t.is("from") && top.query) {
			continue
		}
		n := i + 1
		if s.name(n) && s.punct(n+1, '.') && s.name(n+2) && s.punct(n+3, '.') && s.name(n+4) && !s.punct(n+5, '.') {
			edits = append(edits, edit{
				start: s.toks[n+2].start,
				end:   s.toks[n+4].end,
				text:  backquote(s.toks[n+2].val + "$" + s.toks[n+4].val),
			})
		}
	}
	return edits, nil
}

// startsTableName reports whether token i is a keyword a table name follows.
func startsTableName(s statement, i int) bool {
	t := s.toks[i]
	switch {
	case t.is("join") || t.is("straight_join") || t.is("into") || t.is("table"):
		return true
	case i == 0:
		return t.is("describe") || t.is("desc") || t.is("explain") || t.is("update")
	}
	return false
}

// endsFromList reports whether t ends the list of tables of a FROM clause.
func endsFromList(t token) bool {
	for _, w := range []string{"where", "group", "order", "having", "limit", "union",
		"window", "into", "for", "lock", "set", "except", "intersect"} {
		if t.is(w) {
			return true
		}
	}
	return false
}

// backquote writes a name in backticks.
func backquote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// subscripts rewrites Spark's map and array subscripts, m['key'] and a[0],
// to MySQL's JSON_UNQUOTE(JSON_EXTRACT(m, '$."key"')): icesql shows maps
// (snapshot summaries, for one) as JSON objects and arrays as JSON arrays.
// A missing key gives NULL, as in Spark. Consecutive subscripts make one
// path: m['a']['b'] reads $."a"."b". Only literal subscripts are rewritten.
func subscripts(s statement) ([]edit, error) {
	var edits []edit
	for i := 0; i < len(s.toks); i++ {
		if !s.bracket(i, "[") {
			continue
		}
		first := s.subscriptBase(i)
		if first < 0 {
			continue
		}
		var path strings.Builder
		path.WriteString("$")
		j := i
		for s.bracket(j, "[") && s.bracket(j+2, "]") {
			k := s.toks[j+1]
			switch k.typ {
			case ast.STRING:
				path.WriteString(`."` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(k.val) + `"`)
			case ast.INTEGRAL:
				path.WriteString("[" + k.val + "]")
			default:
				j = -1
			}
			if j < 0 {
				break
			}
			j += 3
		}
		if j <= i {
			continue // not a literal subscript: left for the grammar to refuse
		}
		lit := strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(path.String())
		edits = append(edits,
			edit{start: s.toks[first].start, end: s.toks[first].start, text: "JSON_UNQUOTE(JSON_EXTRACT("},
			edit{start: s.toks[i].start, end: s.toks[j-1].end, text: ", '" + lit + "'))"})
		i = j - 1
	}
	return edits, nil
}

// bracket reports whether token i is the square bracket b, which the MySQL
// lexer knows only as an error token.
func (s statement) bracket(i int, b string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].typ == ast.LEX_ERROR && s.toks[i].val == b
}

// subscriptBase returns the first token of the expression the '[' at token
// i subscripts: a dotted name, or a function call or parenthesis; -1 if
// there is none.
func (s statement) subscriptBase(i int) int {
	j := i - 1
	switch {
	case s.punct(j, ')'):
		depth := 0
		for ; j >= 0; j-- {
			switch s.toks[j].typ {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if j < 0 {
			return -1
		}
		if s.name(j - 1) {
			j--
		}
		return j
	case s.name(j):
		for s.punct(j-1, '.') && s.name(j-2) {
			j -= 2
		}
		return j
	}
	return -1
}

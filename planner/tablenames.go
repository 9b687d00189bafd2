package planner

import "strings"

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
		"window", "into", "lock", "set", "except", "intersect"} {
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

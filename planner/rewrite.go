package planner

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// rewriter turns one statement of Spark/Iceberg SQL into MySQL text. A
// statement that uses no Spark syntax comes out byte for byte unchanged.
type rewriter struct {
	catalog string
	opts    ast.ParserOptions
}

// rewrite rewrites one statement (without its ';'). The passes run in order,
// each on the tokens of the previous pass's output, so no two passes ever
// edit the same bytes. ctasComment is the table COMMENT of a
// CREATE TABLE … AS SELECT without a column list, where the MySQL grammar has
// no place for table options; the caller attaches it to the parsed statement.
func (r rewriter) rewrite(text string) (out, ctasComment string, err error) {
	passes := []func(statement) ([]edit, error){
		r.doStatement,
		explainJSON,
		checksumTable,
		showOpenTables,
		alterView,
		sparkSet,
		namespaces,
		r.catalogNames,
		insertOverwrite,
		sparkSettings,
		sparkColumnLists,
		tableSuffixNames,
		subscripts,
		columnTypes,
		rejectAlterPartitionBy,
		icebergAlter,
		timeTravel,
		quantified,
		forShare,
		nullTreatment,
		foreignKeyColumns,
		rowConstructors,
	}
	s := lexStatement(text, r.opts)
	replaceEdits, replace := replaceTable(s)
	if len(replaceEdits) > 0 {
		s = lexStatement(applyEdits(s.text, replaceEdits), r.opts)
	}
	for _, pass := range passes {
		edits, err := pass(s)
		if err != nil {
			return "", "", err
		}
		if len(edits) > 0 {
			s = lexStatement(applyEdits(s.text, edits), r.opts)
		}
	}
	edits, ctasComment, err := tableClauses(s, replace)
	if err != nil {
		return "", "", err
	}
	return applyEdits(s.text, edits), ctasComment, nil
}

// namespaces rewrites Spark's namespace statements to their MySQL names:
// CREATE NAMESPACE and DROP NAMESPACE to … DATABASE, SHOW NAMESPACES to
// SHOW DATABASES. The rest of the statement is the same in both dialects.
func namespaces(s statement) ([]edit, error) {
	var keyword, with string
	switch {
	case s.word(0, "create") || s.word(0, "drop"):
		keyword, with = "namespace", "DATABASE"
	case s.word(0, "show"):
		keyword, with = "namespaces", "DATABASES"
	default:
		return nil, nil
	}
	if !s.word(1, keyword) {
		return nil, nil
	}
	return []edit{{start: s.toks[1].start, end: s.toks[1].end, text: with}}, nil
}

// catalogNames drops the catalog from catalog-qualified names. Spark resolves
// a.b.c by first asking whether a is a catalog, and so does icesql: any name
// of three or more parts whose first part is the catalog loses that part
// (icesql.db.t → db.t, icesql.db.t.col → db.t.col). Names whose first part is
// something else (MySQL's db.t.col) are left alone. Where a statement names
// a database (USE, CREATE/DROP DATABASE, SHOW TABLES FROM), a two-part name
// icesql.db means database db.
func (r rewriter) catalogNames(s statement) ([]edit, error) {
	isCatalog := func(i int) bool {
		return s.name(i) && strings.EqualFold(s.toks[i].val, r.catalog) &&
			s.punct(i+1, '.') && s.name(i+2) && !s.punct(i-1, '.')
	}
	drop := func(i int) edit { return edit{start: s.toks[i].start, end: s.toks[i+2].start} }

	var edits []edit
	if i := s.databaseName(); isCatalog(i) && !s.punct(i+3, '.') {
		edits = append(edits, drop(i))
	}
	for i := range s.toks {
		if isCatalog(i) && s.punct(i+3, '.') && s.name(i+4) {
			edits = append(edits, drop(i))
		}
	}
	return edits, nil
}

// databaseName returns the index of the token where the statement names a
// database, or -1.
func (s statement) databaseName() int {
	switch {
	case s.word(0, "use"):
		return 1
	case s.word(0, "create") || s.word(0, "drop"):
		if !s.word(1, "database") && !s.word(1, "schema") {
			return -1
		}
		i := 2
		if s.word(i, "if") {
			i++
			if s.word(i, "not") {
				i++
			}
			if s.word(i, "exists") {
				i++
			}
		}
		return i
	case s.word(0, "show"):
		i := 1
		for s.word(i, "full") || s.word(i, "extended") {
			i++
		}
		if s.word(i, "tables") && (s.word(i+1, "from") || s.word(i+1, "in")) {
			return i + 2
		}
	}
	return -1
}

// columnTypes rewrites the Spark types in column definitions, in
// CREATE TABLE and in ALTER TABLE … ADD/MODIFY/CHANGE [COLUMN].
func columnTypes(s statement) ([]edit, error) {
	var edits []edit
	if i := s.createTableName(); i >= 0 {
		open := s.skipName(i)
		if !s.punct(open, '(') || s.queryStart(open) {
			return nil, nil
		}
		close := s.closing(open)
		if close < 0 {
			return nil, nil
		}
		for _, e := range s.elements(open+1, close) {
			if e[0] < e[1] && !isConstraintStart(s.toks[e[0]]) {
				edits = append(edits, s.columnDefinition(e[0]+1, e[1])...)
			}
		}
	}
	if i := s.alterTableEnd(); i >= 0 {
		for _, e := range s.elements(i, len(s.toks)) {
			col := e[0] + 1
			if s.word(col, "column") {
				col++
			}
			switch {
			case col >= e[1] || !s.name(col):
			case (s.toks[e[0]].is("add") || s.toks[e[0]].is("modify")) && !isConstraintStart(s.toks[col]):
				edits = append(edits, s.columnDefinition(col+1, e[1])...)
			case s.toks[e[0]].is("change"):
				edits = append(edits, s.columnDefinition(col+2, e[1])...) // CHANGE old new type
			}
		}
	}
	return edits, nil
}

// elements splits tokens from..to-1 at the commas outside parentheses and
// returns each part as the token range [first, end).
func (s statement) elements(from, to int) [][2]int {
	if from >= to {
		return nil
	}
	var parts [][2]int
	depth, first := 0, from
	for j := from; j < to; j++ {
		switch s.toks[j].typ {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, [2]int{first, j})
				first = j + 1
			}
		}
	}
	return append(parts, [2]int{first, to})
}

// isConstraintStart reports whether a table element or an ALTER TABLE ADD
// starts with something other than a column name: a key, index or
// constraint, a partition, LIKE.
func isConstraintStart(t token) bool {
	for _, w := range []string{"primary", "key", "index", "unique", "constraint", "foreign",
		"check", "fulltext", "spatial", "vector", "partition", "like"} {
		if t.is(w) {
			return true
		}
	}
	return t.typ == '('
}

// columnDefinition rewrites the type that starts at token i of a column
// definition ending before token end, if it is a Spark type or a type whose
// MySQL meaning would betray a Spark user.
func (s statement) columnDefinition(i, end int) []edit {
	if i >= end {
		return nil
	}
	t := s.toks[i]
	replace := func(first, last int, with string) edit {
		return edit{start: s.toks[first].start, end: s.toks[last].end, text: with}
	}
	switch {
	case t.is("string"):
		return []edit{replace(i, i, "LONGTEXT")} // Spark strings are unbounded; TEXT stops at 64 KiB
	case t.is("long") && !s.word(i+1, "varchar") && !s.word(i+1, "varbinary"):
		// Alone, MySQL's LONG is MEDIUMTEXT; Spark's is a 64-bit integer.
		return []edit{replace(i, i, "BIGINT")}
	case t.is("binary") && !s.punct(i+1, '('):
		// MySQL's BINARY without a length is BINARY(1); Spark's BINARY is
		// Iceberg's variable-length binary.
		return []edit{replace(i, i, "LONGBLOB")}
	case t.is("timestamp") || t.is("timestamp_ntz") || t.is("timestamp_ltz"):
		// MySQL's TIMESTAMP only reaches 1970–2038; icesql stores Iceberg
		// timestamps, which DATETIME(6) represents (see DESIGN.md, Types).
		// Spark's TIMESTAMP_LTZ is Iceberg's timestamptz: it becomes
		// TIMESTAMP(6), which the engine stores as timestamptz and shows
		// as DATETIME(6) in the session time zone.
		last := i
		if s.punct(i+1, '(') && s.closing(i+1) > 0 {
			last = s.closing(i + 1)
		}
		typ := "DATETIME(6)"
		if t.is("timestamp_ltz") {
			typ = "TIMESTAMP(6)"
		}
		edits := []edit{replace(i, last, typ)}
		// DEFAULT CURRENT_TIMESTAMP and ON UPDATE NOW() must name the
		// column's precision, or the default is invalid (MySQL, and GMS,
		// refuse DATETIME(6) DEFAULT CURRENT_TIMESTAMP).
		for j := last + 1; j < end; j++ {
			if s.word(j, "current_timestamp") || s.word(j, "now") || s.word(j, "localtime") || s.word(j, "localtimestamp") {
				k := j
				if s.punct(j+1, '(') && s.closing(j+1) > 0 {
					k = s.closing(j + 1)
				}
				edits = append(edits, replace(j, k, "CURRENT_TIMESTAMP(6)"))
				j = k
			}
		}
		return edits
	}
	return nil
}

// WithoutCatalog drops the catalog name from the three-part names of query
// (cat.db.t → db.t), as icesql does for its own catalog name: a view
// another engine stored names tables through that engine's catalog, which
// the view records as its default catalog.
func WithoutCatalog(query, catalog string) string {
	if catalog == "" {
		return query
	}
	s := lexStatement(query, ast.ParserOptions{})
	edits, _ := rewriter{catalog: catalog}.catalogNames(s)
	return applyEdits(s.text, edits)
}

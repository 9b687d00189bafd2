package planner

import (
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// tableClauses rewrites Spark's CREATE TABLE clauses, which come after the
// column list (or after the name, for CREATE TABLE … AS SELECT):
//
//	USING iceberg | PARTITIONED BY (…) | COMMENT '…' | LOCATION '…' | TBLPROPERTIES ('k' = 'v', …)
//
// MySQL has no place for them, so they are removed and carried as one MySQL
// table option COMMENT='<EncodeTableOptions>' after the column list, together
// with a MySQL COMMENT the statement already has. Spark accepts the clauses
// in any order, each once; so does this. Other MySQL table options between
// them are left where they are.
//
// The MySQL grammar takes no table options in CREATE TABLE … AS SELECT
// without a column list; for that form the encoded comment is returned as
// ctasComment, and the caller attaches it to the parsed statement.
//
// Without any Spark clause the statement is MySQL and keeps its text, except
// that AS (SELECT …) loses the parentheses the vitess grammar rejects.
func tableClauses(s statement, replace string) (edits []edit, ctasComment string, err error) {
	name := s.createTableName()
	if name < 0 {
		return nil, "", nil
	}
	i := s.skipName(name)
	columnsEnd := -1 // the ')' that closes the column list
	if s.punct(i, '(') && !s.queryStart(i) {
		if columnsEnd = s.closing(i); columnsEnd < 0 {
			return nil, "", nil // unbalanced: the MySQL parser reports it
		}
		i = columnsEnd + 1
	}

	opts := TableOptions{Replace: replace}
	var removed []edit
	seen := map[string]bool{}
	for i < len(s.toks) && !s.queryStart(i) {
		t := s.toks[i]
		var clause string
		var next int // the token after the clause
		switch {
		case t.is("using"):
			clause = "USING"
			if !s.name(i + 1) {
				return nil, "", s.syntaxError(i+1, "USING expects a table format")
			}
			if format := s.toks[i+1].val; !strings.EqualFold(format, "iceberg") {
				return nil, "", notSupported("USING %s is not supported: icesql tables are Iceberg tables; write USING iceberg or leave the clause out", format)
			}
			next = i + 2
		case t.is("partitioned") && s.word(i+1, "by"):
			clause = "PARTITIONED BY"
			close, err := s.partitionTerms(i+2, &opts)
			if err != nil {
				return nil, "", err
			}
			next = close + 1
		case t.is("write") && s.word(i+1, "ordered") && s.word(i+2, "by"):
			clause = "WRITE ORDERED BY"
			end, err := s.writeOrderedBy(i+3, &opts)
			if err != nil {
				return nil, "", err
			}
			next = end
		case t.is("comment"):
			clause = "COMMENT"
			j := i + 1
			if s.punct(j, '=') {
				j++ // MySQL spelling: COMMENT = '…'
			}
			if !s.str(j) {
				return nil, "", s.syntaxError(j, "COMMENT expects a string")
			}
			opts.Comment = s.toks[j].val
			next = j + 1
		case t.is("location"):
			clause = "LOCATION"
			if !s.str(i + 1) {
				return nil, "", s.syntaxError(i+1, "LOCATION expects a string")
			}
			opts.Location = s.toks[i+1].val
			next = i + 2
		case t.is("tblproperties"):
			clause = "TBLPROPERTIES"
			close, err := s.properties(i+1, &opts)
			if err != nil {
				return nil, "", err
			}
			next = close + 1
		case t.typ == '(':
			// The value of a MySQL table option, such as UNION = (t1, t2).
			if i = s.closing(i); i < 0 {
				return nil, "", nil
			}
			i++
			continue
		default:
			i++ // part of a MySQL table option, which stays
			continue
		}
		if seen[clause] && clause != "COMMENT" { // MySQL lets a later COMMENT win
			return nil, "", s.syntaxError(i, "duplicate %s clause", clause)
		}
		seen[clause] = true
		removed = append(removed, s.removal(i, next-1))
		i = next
	}
	query := i

	// AS (SELECT …): the vitess grammar only takes parentheses around the
	// SELECTs of a UNION, so drop them when they enclose the whole query.
	if s.word(query, "as") && s.punct(query+1, '(') && s.closing(query+1) == len(s.toks)-1 {
		open := s.toks[query+1]
		with := ""
		if !isBlank(s.text[open.start-1]) {
			with = " " // AS(SELECT → AS SELECT
		}
		edits = append(edits, edit{start: open.start, end: open.end, text: with}, s.removal(len(s.toks)-1, len(s.toks)-1))
	}

	// The clauses move into the COMMENT if any is Spark's, if there is no
	// column list (the grammar takes no table options there, not even
	// MySQL's COMMENT), or if a MySQL comment merely looks encoded: encoding
	// it makes it decode as the comment it is.
	_, undecodable := DecodeTableOptions(opts.Comment)
	move := len(seen) > 1 || len(seen) == 1 && !seen["COMMENT"] ||
		len(seen) > 0 && columnsEnd < 0 || undecodable != nil || replace != ""
	if !move {
		return edits, "", nil
	}
	encoded := EncodeTableOptions(opts)
	switch {
	case columnsEnd >= 0:
		edits = append(edits, removed...)
		if encoded != "" {
			at := s.toks[columnsEnd].end
			edits = append(edits, edit{start: at, end: at, text: " COMMENT=" + sqlString(encoded)})
		}
		return edits, "", nil
	case query < len(s.toks):
		return append(edits, removed...), encoded, nil
	default:
		// Neither columns nor a query: not a table definition the MySQL
		// grammar knows, so leave the statement for its syntax error.
		return nil, "", nil
	}
}

// queryStart reports whether the query of CREATE TABLE … [AS] query starts at
// token i.
func (s statement) queryStart(i int) bool {
	if s.punct(i, '(') {
		return s.word(i+1, "select") || s.word(i+1, "with") || s.punct(i+1, '(')
	}
	return s.word(i, "as") || s.word(i, "select") || s.word(i, "with") || s.word(i, "table")
}

// str reports whether token i exists and is a string literal.
func (s statement) str(i int) bool {
	return i < len(s.toks) && s.toks[i].typ == ast.STRING
}

// partitionTerms reads the parenthesized list of PARTITIONED BY at token open
// into opts.PartitionBy, each term as written with normalized spacing
// ("days(ts)", "bucket(16, id)"), and returns the index of the closing ')'.
func (s statement) partitionTerms(open int, opts *TableOptions) (int, error) {
	close, err := s.list(open, "PARTITIONED BY")
	if err != nil {
		return 0, err
	}
	for _, e := range s.elements(open+1, close) {
		if e[0] == e[1] {
			return 0, s.syntaxError(e[0], "empty PARTITIONED BY term")
		}
		if _, _, err := s.partitionField(e[0], e[1]); err != nil {
			return 0, err
		}
		opts.PartitionBy = append(opts.PartitionBy, s.normalized(e[0], e[1]))
	}
	return close, nil
}

// list returns the index of the ')' that closes the list of clause at token
// open.
func (s statement) list(open int, clause string) (int, error) {
	if !s.punct(open, '(') {
		return 0, s.syntaxError(open, "%s expects a parenthesized list", clause)
	}
	close := s.closing(open)
	if close < 0 {
		return 0, s.syntaxError(len(s.toks), "%s list is not closed", clause)
	}
	return close, nil
}

// normalized returns tokens from..to-1 as written, separated by single
// spaces except where SQL is written without them: around '.', inside
// parentheses, before ',' and between a function name and its '('.
func (s statement) normalized(from, to int) string {
	var b strings.Builder
	for j := from; j < to; j++ {
		t := s.toks[j]
		if j > from {
			prev := s.toks[j-1]
			tight := t.typ == ')' || t.typ == ',' || t.typ == '.' || prev.typ == '(' || prev.typ == '.' ||
				t.typ == '(' && prev.isName()
			if !tight {
				b.WriteByte(' ')
			}
		}
		b.WriteString(s.text[t.start:t.end])
	}
	return b.String()
}

// properties reads the parenthesized 'key' = value list of TBLPROPERTIES at
// token open into opts.Properties and returns the index of the closing ')'.
func (s statement) properties(open int, opts *TableOptions) (int, error) {
	props, close, err := s.propertyList(open, "TBLPROPERTIES")
	opts.Properties = props
	return close, err
}

// propertyList reads the parenthesized 'key' = value list of clause at
// token open and returns it and the index of the closing ')'. Keys are
// string literals or dotted names; values are string literals, numbers or
// booleans, as in Spark. Spark's optional '=' is required here: the MySQL
// lexer joins 'k' 'v' into one string.
func (s statement) propertyList(open int, clause string) (map[string]string, int, error) {
	close, err := s.list(open, clause)
	if err != nil {
		return nil, 0, err
	}
	props := map[string]string{}
	for _, e := range s.elements(open+1, close) {
		key, next, ok := s.propertyKey(e[0])
		if !ok || next >= e[1] || !s.punct(next, '=') {
			return nil, 0, s.syntaxError(next, "%s expects 'key' = 'value' pairs", clause)
		}
		value, next, ok := s.propertyValue(next+1, e[1])
		if !ok || next != e[1] {
			return nil, 0, s.syntaxError(next, "a %s value is a string, a number or a boolean", clause)
		}
		if _, dup := props[key]; dup {
			return nil, 0, s.syntaxError(e[0], "duplicate %s key '%s'", clause, key)
		}
		props[key] = value
	}
	return props, close, nil
}

// propertyKey reads a property key at token i and returns it and the index
// after it.
func (s statement) propertyKey(i int) (string, int, bool) {
	if s.str(i) {
		return s.toks[i].val, i + 1, true
	}
	end := s.skipName(i)
	if end == i {
		return "", i, false
	}
	parts := make([]string, 0, (end-i+1)/2)
	for j := i; j < end; j += 2 {
		parts = append(parts, s.toks[j].val)
	}
	return strings.Join(parts, "."), end, true
}

// propertyValue reads a property value at token i, before token end, and
// returns it and the index after it.
func (s statement) propertyValue(i, end int) (string, int, bool) {
	sign := ""
	if s.punct(i, '-') || s.punct(i, '+') {
		sign, i = s.text[s.toks[i].start:s.toks[i].end], i+1
	}
	if i >= end {
		return "", i, false
	}
	t := s.toks[i]
	switch {
	case t.typ == ast.INTEGRAL || t.typ == ast.FLOAT:
		return sign + t.val, i + 1, true
	case sign != "":
		return "", i, false
	case t.typ == ast.STRING:
		return t.val, i + 1, true
	case t.is("true") || t.is("false"):
		return strings.ToLower(t.val), i + 1, true
	}
	return "", i, false
}

// syntaxError reports a syntax error at token i, in the words the MySQL
// parser uses, followed by what was expected.
func (s statement) syntaxError(i int, format string, args ...any) error {
	near := "end of statement"
	if i < len(s.toks) {
		near = "'" + s.text[s.toks[i].start:s.toks[i].end] + "'"
	}
	return fmt.Errorf("syntax error near %s: %s", near, fmt.Sprintf(format, args...))
}

package planner

import (
	"context"
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Merge is Spark's MERGE INTO, which the MySQL grammar lacks:
//
//	MERGE INTO target [[AS] t] USING (table | (query)) [[AS] s] ON cond
//	WHEN MATCHED [AND cond] THEN UPDATE SET c = e, ... | UPDATE SET * | DELETE
//	WHEN NOT MATCHED [BY TARGET] [AND cond] THEN INSERT (c, ...) VALUES (e, ...) | INSERT *
//	WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET ... | DELETE
//
// The planner splits it into its parts, keeping conditions and expressions
// as SQL text; the engine runs them as one query joining source and target
// and applies the first clause that holds for each row.
type Merge struct {
	TargetDB, Target string
	TargetAlias      string // the target's name when no alias is written
	// Source is a table name or a parenthesised query, as written (Spark's
	// SELECT ... FROM VALUES (...) AS s(a, b) rewritten to MySQL's VALUES ROW).
	Source      string
	SourceAlias string
	On          string
	Clauses     []MergeClause
}

// MergeClause kinds and actions.
const (
	WhenMatched = iota
	WhenNotMatched
	WhenNotMatchedBySource
)

const (
	MergeUpdate = iota
	MergeUpdateStar
	MergeDelete
	MergeInsert
	MergeInsertStar
)

// MergeClause is one WHEN clause.
type MergeClause struct {
	When   int
	Cond   string // "" when the clause has no AND condition
	Action int
	// Columns and Values are UPDATE's assignments or INSERT's column list
	// and values, pairwise.
	Columns []string
	Values  []string
}

var _ ast.Injectable = (*Merge)(nil)

// WithResolvedChildren implements ast.Injectable; the engine replaces Merge
// with the node that runs it.
func (m *Merge) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, notSupported("MERGE INTO is not available here")
}

func (m *Merge) String() string { return "MERGE INTO " + m.Target }

func mergeSyntax(format string, args ...any) error {
	return fmt.Errorf("syntax error near "+format, args...)
}

// parseMerge recognises MERGE INTO in one statement's text.
func (p *Parser) parseMerge(text string, opts ast.ParserOptions) (ast.Statement, bool, error) {
	s := lexStatement(text, opts)
	if !s.word(0, "merge") || !s.word(1, "into") {
		return nil, false, nil
	}
	m, err := p.mergeParts(s)
	if err != nil {
		return nil, true, err
	}
	return ast.InjectedStatement{
		Statement: m,
		Auth: ast.AuthInformation{AuthType: ast.AuthType_UPDATE, TargetType: ast.AuthTargetType_SingleTableIdentifier,
			TargetNames: []string{m.TargetDB, m.Target}},
	}, true, nil
}

func (p *Parser) mergeParts(s statement) (*Merge, error) {
	m := &Merge{}
	i := 2
	end := s.skipName(i)
	if end == i {
		return nil, mergeSyntax("'MERGE INTO': want the target table's name")
	}
	parts := []string{}
	for j := i; j < end; j += 2 {
		parts = append(parts, s.toks[j].val)
	}
	if len(parts) >= 3 && strings.EqualFold(parts[0], p.catalog) {
		parts = parts[1:]
	}
	switch len(parts) {
	case 1:
		m.Target = parts[0]
	case 2:
		m.TargetDB, m.Target = parts[0], parts[1]
	case 3:
		// db.t.branch_b, named as other statements' tableSuffixNames name it.
		m.TargetDB, m.Target = parts[0], parts[1]+"$"+parts[2]
	default:
		return nil, mergeSyntax("'%s': want [database.]table[.branch_name] as MERGE's target", s.text[s.toks[i].start:s.toks[end-1].end])
	}
	i = end
	m.TargetAlias, i = s.mergeAlias(i, "using")
	if m.TargetAlias == "" {
		m.TargetAlias = m.Target
	}
	if !s.word(i, "using") {
		return nil, mergeSyntax("%s: want USING after MERGE's target", s.at(i))
	}
	i++
	switch {
	case s.punct(i, '('):
		close := s.closing(i)
		if close < 0 {
			return nil, mergeSyntax("'(' in MERGE's USING: not closed")
		}
		m.Source = "(" + s.sparkValues(i+1, close) + ")"
		i = close + 1
	case s.name(i):
		end := s.skipName(i)
		m.Source = s.text[s.toks[i].start:s.toks[end-1].end]
		i = end
	default:
		return nil, mergeSyntax("%s: want a table or (query) after USING", s.at(i))
	}
	m.SourceAlias, i = s.mergeAlias(i, "on")
	if m.SourceAlias == "" {
		if strings.HasPrefix(m.Source, "(") {
			return nil, mergeSyntax("%s: a USING (query) needs an alias", s.at(i))
		}
		m.SourceAlias = s.toks[i-1].val
	}
	if !s.word(i, "on") {
		return nil, mergeSyntax("%s: want ON after MERGE's source", s.at(i))
	}
	onEnd := s.nextWhen(i + 1)
	if onEnd == i+1 {
		return nil, mergeSyntax("'ON': MERGE needs a join condition")
	}
	m.On = s.span(i+1, onEnd)
	i = onEnd
	for i < len(s.toks) {
		c, next, err := s.mergeClause(i)
		if err != nil {
			return nil, err
		}
		m.Clauses = append(m.Clauses, c)
		i = next
	}
	if len(m.Clauses) == 0 {
		return nil, mergeSyntax("'%s': MERGE needs at least one WHEN clause", m.On)
	}
	return m, nil
}

// at describes token i for a syntax error.
func (s statement) at(i int) string {
	if i >= len(s.toks) {
		return "the end"
	}
	return "'" + s.text[s.toks[i].start:s.toks[i].end] + "'"
}

func (s statement) span(from, to int) string {
	if from >= to {
		return ""
	}
	return s.text[s.toks[from].start:s.toks[to-1].end]
}

// mergeAlias reads [AS] alias before the keyword next.
func (s statement) mergeAlias(i int, next string) (string, int) {
	if s.word(i, "as") && s.name(i+1) {
		return s.toks[i+1].val, i + 2
	}
	if s.name(i) && !s.word(i, next) {
		return s.toks[i].val, i + 1
	}
	return "", i
}

// nextWhen returns the index of the next top-level WHEN that starts a MERGE
// clause (not one of a CASE expression), or len(toks).
func (s statement) nextWhen(i int) int {
	depth, cases := 0, 0
	for ; i < len(s.toks); i++ {
		switch {
		case s.punct(i, '('):
			depth++
		case s.punct(i, ')'):
			depth--
		case depth == 0 && s.word(i, "case"):
			cases++
		case depth == 0 && cases > 0 && s.word(i, "end"):
			cases--
		case depth == 0 && cases == 0 && s.word(i, "when"):
			return i
		}
	}
	return i
}

// keyword returns the index of the first top-level word w in [i, end), or -1.
func (s statement) keyword(i, end int, w string) int {
	depth, cases := 0, 0
	for ; i < end; i++ {
		switch {
		case s.punct(i, '('):
			depth++
		case s.punct(i, ')'):
			depth--
		case depth == 0 && s.word(i, "case"):
			cases++
		case depth == 0 && cases > 0 && s.word(i, "end"):
			cases--
		case depth == 0 && cases == 0 && s.word(i, w):
			return i
		}
	}
	return -1
}

func (s statement) mergeClause(i int) (MergeClause, int, error) {
	var c MergeClause
	if !s.word(i, "when") {
		return c, 0, mergeSyntax("%s: want WHEN [NOT] MATCHED", s.at(i))
	}
	end := s.nextWhen(i + 1)
	j := i + 1
	switch {
	case s.word(j, "matched"):
		c.When, j = WhenMatched, j+1
	case s.word(j, "not") && s.word(j+1, "matched"):
		c.When, j = WhenNotMatched, j+2
		if s.word(j, "by") && s.word(j+1, "target") {
			j += 2
		} else if s.word(j, "by") && s.word(j+1, "source") {
			c.When, j = WhenNotMatchedBySource, j+2
		}
	default:
		return c, 0, mergeSyntax("%s: want WHEN MATCHED, WHEN NOT MATCHED [BY TARGET] or WHEN NOT MATCHED BY SOURCE", s.at(j))
	}
	then := s.keyword(j, end, "then")
	if then < 0 {
		return c, 0, mergeSyntax("%s: a WHEN clause needs THEN", s.at(j))
	}
	if s.word(j, "and") {
		c.Cond = s.span(j+1, then)
		if c.Cond == "" {
			return c, 0, mergeSyntax("'AND': empty condition in a WHEN clause")
		}
	} else if then != j {
		return c, 0, mergeSyntax("%s: want AND condition or THEN", s.at(j))
	}
	j = then + 1
	var err error
	switch {
	case s.word(j, "delete") && j+1 == end:
		c.Action = MergeDelete
	case s.word(j, "update") && s.word(j+1, "set"):
		if c.When == WhenNotMatched {
			return c, 0, mergeSyntax("'UPDATE': WHEN NOT MATCHED can only INSERT")
		}
		if s.punct(j+2, '*') && j+3 == end {
			if c.When != WhenMatched {
				return c, 0, mergeSyntax("'UPDATE SET *': only WHEN MATCHED can take every column from the source")
			}
			c.Action = MergeUpdateStar
			break
		}
		c.Action = MergeUpdate
		err = s.assignments(&c, j+2, end)
	case s.word(j, "insert"):
		if c.When != WhenNotMatched {
			return c, 0, mergeSyntax("'INSERT': only WHEN NOT MATCHED can insert")
		}
		if s.punct(j+1, '*') && j+2 == end {
			c.Action = MergeInsertStar
			break
		}
		c.Action = MergeInsert
		err = s.insertValues(&c, j+1, end)
	default:
		return c, 0, mergeSyntax("%s: want UPDATE SET, DELETE or INSERT", s.at(j))
	}
	if c.Action == MergeDelete && c.When == WhenNotMatched {
		return c, 0, mergeSyntax("'DELETE': WHEN NOT MATCHED can only INSERT")
	}
	return c, end, err
}

func (s statement) assignments(c *MergeClause, from, to int) error {
	if from >= to {
		return mergeSyntax("'SET': no assignments")
	}
	for _, e := range s.elements(from, to) {
		eq := -1
		for k := e[0]; k < e[1]; k++ {
			if s.punct(k, '=') {
				eq = k
				break
			}
		}
		if eq < 0 || eq == e[0] || eq+1 >= e[1] {
			return mergeSyntax("'%s': want column = value", s.span(e[0], e[1]))
		}
		// A column may be qualified by the target's name or alias.
		col := s.toks[eq-1].val
		if s.skipName(e[0]) != eq {
			return mergeSyntax("'%s': want column = value", s.span(e[0], e[1]))
		}
		c.Columns = append(c.Columns, col)
		c.Values = append(c.Values, s.span(eq+1, e[1]))
	}
	return nil
}

func (s statement) insertValues(c *MergeClause, i, end int) error {
	if !s.punct(i, '(') {
		return mergeSyntax("%s: want INSERT * or INSERT (columns) VALUES (values)", s.at(i))
	}
	close := s.closing(i)
	if close < 0 {
		return mergeSyntax("'(' of INSERT: not closed")
	}
	for _, e := range s.elements(i+1, close) {
		if e[1]-e[0] != 1 || !s.name(e[0]) {
			return mergeSyntax("'%s': want a column name", s.span(e[0], e[1]))
		}
		c.Columns = append(c.Columns, s.toks[e[0]].val)
	}
	j := close + 1
	if !s.word(j, "values") || !s.punct(j+1, '(') || s.closing(j+1) != end-1 {
		return mergeSyntax("%s: want VALUES (values) after INSERT's columns", s.at(j))
	}
	for _, e := range s.elements(j+2, end-1) {
		if e[0] >= e[1] {
			return mergeSyntax("'VALUES': empty value")
		}
		c.Values = append(c.Values, s.span(e[0], e[1]))
	}
	if len(c.Values) != len(c.Columns) {
		return mergeSyntax("'VALUES': %d columns but %d values", len(c.Columns), len(c.Values))
	}
	return nil
}

// sparkValues returns the text of tokens [from, to), with Spark's
// SELECT ... FROM VALUES (a, b), (c, d) AS s(x, y) rewritten to MySQL's
// FROM (VALUES ROW(a, b), ROW(c, d)) AS s(x, y).
func (s statement) sparkValues(from, to int) string {
	text := s.span(from, to)
	base := s.toks[from].start
	for i := from; i+1 < to; i++ {
		if !s.word(i, "from") || !s.word(i+1, "values") || !s.punct(i+2, '(') {
			continue
		}
		var edits []edit
		j := i + 2
		for s.punct(j, '(') {
			close := s.closing(j)
			if close < 0 || close >= to {
				return text
			}
			edits = append(edits, edit{start: s.toks[j].start - base, end: s.toks[j].start - base, text: "ROW"})
			j = close + 1
			if !s.punct(j, ',') {
				break
			}
			j++
		}
		edits = append(edits,
			edit{start: s.toks[i+1].start - base, end: s.toks[i+1].start - base, text: "("},
			edit{start: s.toks[j-1].end - base, end: s.toks[j-1].end - base, text: ")"})
		return applyEdits(text, edits)
	}
	return text
}

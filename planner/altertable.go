package planner

import (
	"context"
	"errors"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// AlterTable is an ALTER TABLE of Spark/Iceberg syntax that the MySQL
// grammar lacks:
//
//	ADD PARTITION FIELD term [AS name]
//	DROP PARTITION FIELD term
//	REPLACE PARTITION FIELD term WITH term [AS name]
//	WRITE [LOCALLY] ORDERED BY term [ASC|DESC] [NULLS FIRST|LAST], …
//	WRITE DISTRIBUTED BY PARTITION [LOCALLY ORDERED BY …]
//	WRITE UNORDERED
//	SET TBLPROPERTIES ('k' = 'v', …)
//	UNSET TBLPROPERTIES [IF EXISTS] ('k', …)
//	ALTER [COLUMN] c TYPE t | FIRST | AFTER c2 | COMMENT 'x' | SET NOT NULL | DROP NOT NULL
//	CREATE [OR REPLACE] | REPLACE | DROP BRANCH|TAG … (RefDDL, branchtag.go)
//
// The Parser returns it as the Statement of an ast.InjectedStatement; the
// engine, which owns the catalog, replaces it with the node that runs it.
// Action is one of the *Alter… types below.
type AlterTable struct {
	Table  ast.TableName
	Action any
}

// AddPartitionField is ADD PARTITION FIELD Term [AS Name].
type AddPartitionField struct {
	Term PartitionTerm
	Name string
}

// DropPartitionField is DROP PARTITION FIELD Term, where an identity Term
// may also name a partition field.
type DropPartitionField struct{ Term PartitionTerm }

// ReplacePartitionField is REPLACE PARTITION FIELD From WITH To [AS Name].
type ReplacePartitionField struct {
	From, To PartitionTerm
	Name     string
}

// SortTerm is one term of WRITE ORDERED BY.
type SortTerm struct {
	Term       PartitionTerm
	Descending bool
	NullsFirst bool
}

// WriteOrder is WRITE [LOCALLY] ORDERED BY, WRITE DISTRIBUTED BY PARTITION
// and WRITE UNORDERED: the table's sort order (empty for unsorted) and its
// write.distribution-mode, as Spark sets them.
type WriteOrder struct {
	Fields       []SortTerm
	Distribution string // "range", "hash" or "none"
}

// SetProperties is SET TBLPROPERTIES.
type SetProperties struct{ Properties map[string]string }

// UnsetProperties is UNSET TBLPROPERTIES [IF EXISTS].
type UnsetProperties struct {
	Keys     []string
	IfExists bool
}

// AlterColumn is Spark's ALTER COLUMN, which changes one attribute of a
// column and keeps the others (MySQL's MODIFY replaces them all).
type AlterColumn struct {
	Column string
	// Type is the new type as MySQL text (Spark types already rewritten);
	// empty if unchanged.
	Type     string
	First    bool
	After    string
	Comment  *string
	Nullable *bool
}

// WithResolvedChildren implements ast.Injectable. The engine replaces an
// AlterTable before go-mysql-server binds it; reaching here means a Parser
// was used without the engine.
func (a *AlterTable) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, notSupported("ALTER TABLE %s: this form needs the icesql engine", a.Table.Name.String())
}

// String names the statement in logs.
func (a *AlterTable) String() string { return "ALTER TABLE " + a.Table.Name.String() }

// injected is a rewrite's way to return a statement that the MySQL grammar
// cannot express: the parser turns it into the statement (see rejectedBy).
type injected struct{ stmt ast.Statement }

func (i injected) Error() string { return "injected statement" }

// sparkColumnLists rewrites Spark's ADD COLUMNS (a INT, b STRING) and
// DROP COLUMNS (a, b) into MySQL's ADD COLUMN a INT, ADD COLUMN b STRING and
// DROP COLUMN a, DROP COLUMN b. It runs before columnTypes, which then
// rewrites the Spark types of the columns.
func sparkColumnLists(s statement) ([]edit, error) {
	i := s.alterTableEnd()
	if i < 0 || !(s.word(i, "add") || s.word(i, "drop")) || !s.word(i+1, "columns") {
		return nil, nil
	}
	verb := strings.ToUpper(s.toks[i].val)
	close, err := s.list(i+2, verb+" COLUMNS")
	if err != nil {
		return nil, err
	}
	if close != len(s.toks)-1 {
		return nil, s.syntaxError(close+1, "%s COLUMNS takes no further clauses", verb)
	}
	var parts []string
	for _, e := range s.elements(i+3, close) {
		if e[0] == e[1] {
			return nil, s.syntaxError(e[0], "empty column in %s COLUMNS", verb)
		}
		parts = append(parts, verb+" COLUMN "+s.text[s.toks[e[0]].start:s.toks[e[1]-1].end])
	}
	return []edit{{start: s.toks[i].start, end: s.toks[close].end, text: strings.Join(parts, ", ")}}, nil
}

// icebergAlter recognises the ALTER TABLE forms of AlterTable and returns
// them as an injected statement.
func icebergAlter(s statement) ([]edit, error) {
	i := s.alterTableEnd()
	if i < 0 || i >= len(s.toks) {
		return nil, nil
	}
	first := 2
	if s.word(1, "ignore") {
		first = 3
	}
	var action any
	var err error
	switch {
	case (s.word(i, "add") || s.word(i, "drop") || s.word(i, "replace")) && s.word(i+1, "partition") && s.word(i+2, "field"):
		action, err = s.partitionFieldAction(i)
	case s.word(i, "write"):
		action, err = s.writeOrder(i + 1)
	case s.word(i, "set") && s.word(i+1, "tblproperties"):
		var opts TableOptions
		var close int
		if close, err = s.properties(i+2, &opts); err == nil && close != len(s.toks)-1 {
			err = s.syntaxError(close+1, "SET TBLPROPERTIES takes no further clauses")
		}
		action = &SetProperties{Properties: opts.Properties}
	case s.word(i, "unset") && s.word(i+1, "tblproperties"):
		action, err = s.unsetProperties(i + 2)
	case s.word(i, "alter"):
		action, err = s.alterColumn(i + 1)
	case s.isRefDDL(i):
		action, err = s.refDDL(i)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if action == nil {
		return nil, nil // a MySQL form
	}
	end := s.skipName(first)
	if end != i || end-first > 3 {
		return nil, s.syntaxError(first, "expected a table name")
	}
	var name ast.TableName
	name.Name = ast.NewTableIdent(s.toks[i-1].val)
	if end-first == 3 {
		name.DbQualifier = ast.NewTableIdent(s.toks[first].val)
	}
	return nil, injected{ast.InjectedStatement{
		Statement: &AlterTable{Table: name, Action: action},
		Auth: ast.AuthInformation{
			AuthType:    ast.AuthType_ALTER,
			TargetType:  ast.AuthTargetType_SingleTableIdentifier,
			TargetNames: []string{name.DbQualifier.String(), name.Name.String()},
		},
	}}
}

// partitionFieldAction reads ADD/DROP/REPLACE PARTITION FIELD at token i.
func (s statement) partitionFieldAction(i int) (any, error) {
	verb := strings.ToLower(s.toks[i].val)
	from := i + 3
	// The term ends at AS or WITH outside parentheses, or at the end.
	termEnd := func(from int, stops ...string) int {
		depth := 0
		for j := from; j < len(s.toks); j++ {
			switch s.toks[j].typ {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				for _, w := range stops {
					if s.word(j, w) {
						return j
					}
				}
			}
		}
		return len(s.toks)
	}
	alias := func(at int) (string, error) {
		if at == len(s.toks) {
			return "", nil
		}
		if !s.word(at, "as") || !s.name(at+1) || at+2 != len(s.toks) {
			return "", s.syntaxError(at, "expected AS name at the end")
		}
		return s.toks[at+1].val, nil
	}
	switch verb {
	case "add":
		end := termEnd(from, "as")
		term, err := s.partitionTerm(from, end)
		if err != nil {
			return nil, err
		}
		name, err := alias(end)
		return &AddPartitionField{Term: term, Name: name}, err
	case "drop":
		term, err := s.partitionTerm(from, len(s.toks))
		return &DropPartitionField{Term: term}, err
	}
	with := termEnd(from, "with")
	old, err := s.partitionTerm(from, with)
	if err != nil {
		return nil, err
	}
	if with == len(s.toks) {
		return nil, s.syntaxError(with, "REPLACE PARTITION FIELD expects WITH")
	}
	end := termEnd(with+1, "as")
	term, err := s.partitionTerm(with+1, end)
	if err != nil {
		return nil, err
	}
	name, err := alias(end)
	return &ReplacePartitionField{From: old, To: term, Name: name}, err
}

// writeOrder reads what follows WRITE, at token i.
func (s statement) writeOrder(i int) (any, error) {
	switch {
	case s.word(i, "unordered") && i+1 == len(s.toks):
		return &WriteOrder{Distribution: "none"}, nil
	case s.word(i, "ordered") && s.word(i+1, "by"):
		fields, err := s.sortTerms(i+2, len(s.toks))
		return &WriteOrder{Fields: fields, Distribution: "range"}, err
	case s.word(i, "locally") && s.word(i+1, "ordered") && s.word(i+2, "by"):
		fields, err := s.sortTerms(i+3, len(s.toks))
		return &WriteOrder{Fields: fields, Distribution: "none"}, err
	case s.word(i, "distributed") && s.word(i+1, "by") && s.word(i+2, "partition"):
		j := i + 3
		if j == len(s.toks) {
			return &WriteOrder{Distribution: "hash"}, nil
		}
		if s.word(j, "locally") && s.word(j+1, "ordered") && s.word(j+2, "by") {
			fields, err := s.sortTerms(j+3, len(s.toks))
			return &WriteOrder{Fields: fields, Distribution: "hash"}, err
		}
		return nil, s.syntaxError(j, "expected LOCALLY ORDERED BY or the end")
	}
	return nil, s.syntaxError(i, "expected ORDERED BY, LOCALLY ORDERED BY, DISTRIBUTED BY PARTITION or UNORDERED after WRITE")
}

// sortTerms reads the comma-separated terms of ORDERED BY in tokens
// i..to-1.
func (s statement) sortTerms(i, to int) ([]SortTerm, error) {
	var out []SortTerm
	for _, e := range s.elements(i, to) {
		end := e[1]
		var st SortTerm
		nulls := ""
		if s.word(end-2, "nulls") && (s.word(end-1, "first") || s.word(end-1, "last")) && end-2 > e[0] {
			nulls = strings.ToLower(s.toks[end-1].val)
			end -= 2
		}
		if s.word(end-1, "desc") && end-1 > e[0] {
			st.Descending = true
			end--
		} else if s.word(end-1, "asc") && end-1 > e[0] {
			end--
		}
		// Iceberg's defaults, as Spark's: nulls first ascending, last descending.
		st.NullsFirst = nulls == "first" || nulls == "" && !st.Descending
		term, err := s.partitionTerm(e[0], end)
		if err != nil {
			return nil, err
		}
		st.Term = term
		out = append(out, st)
	}
	if len(out) == 0 {
		return nil, s.syntaxError(i, "ORDERED BY expects at least one column")
	}
	return out, nil
}

// unsetProperties reads [IF EXISTS] ('k', …) at token i.
func (s statement) unsetProperties(i int) (any, error) {
	u := &UnsetProperties{}
	if s.word(i, "if") && s.word(i+1, "exists") {
		u.IfExists = true
		i += 2
	}
	close, err := s.list(i, "UNSET TBLPROPERTIES")
	if err != nil {
		return nil, err
	}
	if close != len(s.toks)-1 {
		return nil, s.syntaxError(close+1, "UNSET TBLPROPERTIES takes no further clauses")
	}
	for _, e := range s.elements(i+1, close) {
		key, next, ok := s.propertyKey(e[0])
		if !ok || next != e[1] {
			return nil, s.syntaxError(e[0], "UNSET TBLPROPERTIES expects a list of 'key' strings")
		}
		u.Keys = append(u.Keys, key)
	}
	return u, nil
}

// alterColumn reads Spark's ALTER [COLUMN] c … at token i. MySQL's own
// ALTER [COLUMN] c SET DEFAULT / DROP DEFAULT / SET VISIBLE return nil: the
// MySQL grammar reads them.
func (s statement) alterColumn(i int) (any, error) {
	if s.word(i, "column") {
		i++
	}
	end := s.skipName(i)
	if end == i {
		return nil, nil
	}
	a := &AlterColumn{Column: s.dotted(i, end)}
	j := end
	rest := len(s.toks) - j
	switch {
	case s.word(j, "type") || s.word(j, "set") && s.word(j+1, "data") && s.word(j+2, "type"):
		if s.word(j, "set") {
			j += 2
		}
		if j+1 >= len(s.toks) {
			return nil, s.syntaxError(j+1, "TYPE expects a type")
		}
		sub := lexStatement(s.text[s.toks[j+1].start:s.toks[len(s.toks)-1].end], ast.ParserOptions{})
		a.Type = applyEdits(sub.text, sub.columnDefinition(0, len(sub.toks)))
	case s.word(j, "first") && rest == 1:
		a.First = true
	case s.word(j, "after") && s.name(j+1) && rest == 2:
		a.After = s.toks[j+1].val
	case s.word(j, "comment") && s.str(j+1) && rest == 2:
		c := s.toks[j+1].val
		a.Comment = &c
	case (s.word(j, "set") || s.word(j, "drop")) && s.word(j+1, "not") && s.word(j+2, "null") && rest == 3:
		nullable := s.word(j, "drop")
		a.Nullable = &nullable
	default:
		return nil, nil
	}
	return a, nil
}

// injectedBy returns the statement a rewrite returned through err.
func injectedBy(err error) (ast.Statement, bool) {
	var inj injected
	if errors.As(err, &inj) {
		return inj.stmt, true
	}
	return nil, false
}

// writeOrderedBy reads the terms of CREATE TABLE's WRITE ORDERED BY at token
// i into opts.WriteOrderedBy and returns the index after the last term. The
// clause is icesql's (Spark sets a sort order only with ALTER TABLE), so
// that SHOW CREATE TABLE can show a sorted table as one statement.
func (s statement) writeOrderedBy(i int, opts *TableOptions) (int, error) {
	for {
		start := i
		end := s.skipName(i)
		if end == i {
			return 0, s.syntaxError(i, "WRITE ORDERED BY expects a column or a transform")
		}
		if s.punct(end, '(') {
			if end = s.closing(end); end < 0 {
				return 0, s.syntaxError(len(s.toks), "unbalanced parentheses")
			}
			end++
		}
		if s.word(end, "asc") || s.word(end, "desc") {
			end++
		}
		if s.word(end, "nulls") && (s.word(end+1, "first") || s.word(end+1, "last")) {
			end += 2
		}
		if _, err := s.sortTerms(start, end); err != nil {
			return 0, err
		}
		opts.WriteOrderedBy = append(opts.WriteOrderedBy, s.normalized(start, end))
		if !s.punct(end, ',') {
			return end, nil
		}
		i = end + 1
	}
}

// ParseSortTerm reads one term of WRITE ORDERED BY: id DESC NULLS LAST.
func ParseSortTerm(text string) (SortTerm, error) {
	s := lexStatement(text, ast.ParserOptions{})
	terms, err := s.sortTerms(0, len(s.toks))
	if err != nil {
		return SortTerm{}, err
	}
	if len(terms) != 1 {
		return SortTerm{}, s.syntaxError(0, "expected one sort term")
	}
	return terms[0], nil
}

package planner

import (
	"encoding/json"
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Overwrite is what INSERT OVERWRITE says beyond an INSERT INTO: which
// partitions the rows replace. The engine reads it from the target name (see
// OverwriteTarget).
type Overwrite struct {
	// Static are the PARTITION clause's columns given a value, in order.
	Static []StaticValue `json:"static,omitempty"`
	// Dynamic are the PARTITION clause's columns without a value.
	Dynamic []string `json:"dynamic,omitempty"`
}

// StaticValue is one `column = literal` of a PARTITION clause.
type StaticValue struct {
	Column string `json:"column"`
	// Value is the literal as the lexer decodes it (a string unquoted, a
	// number as written); Null marks the literal NULL.
	Value string `json:"value,omitempty"`
	Null  bool   `json:"null,omitempty"`
}

// overwriteMarker separates a table name from its encoded Overwrite.
const overwriteMarker = "#icesql-overwrite:"

// OverwriteTarget splits a table name the parser made from INSERT OVERWRITE
// into the table's name and the Overwrite; ok is false for other names.
//
// Why the name carries it: go-mysql-server resolves the target of an INSERT
// by name, through Database.GetTableInsensitive, before any analyzer rule
// runs, and builds the row shape (the columns a static PARTITION clause
// leaves out) from the table it gets. The name is the one thing of the
// statement that reaches that call, on every path (text and prepared
// statements, multi-statement scripts).
func OverwriteTarget(name string) (table string, o Overwrite, ok bool, err error) {
	table, encoded, ok := strings.Cut(name, overwriteMarker)
	if !ok {
		return name, Overwrite{}, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(encoded))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return "", Overwrite{}, false, fmt.Errorf("decode INSERT OVERWRITE target %q: %w", name, err)
	}
	return table, o, true, nil
}

// insertOverwrite rewrites Spark's INSERT OVERWRITE to an INSERT INTO whose
// target name carries the PARTITION clause (see OverwriteTarget):
//
//	INSERT OVERWRITE [TABLE] db.t [PARTITION (p = 'a', q)] [IF NOT EXISTS] query
//	→ INSERT INTO db.`t#icesql-overwrite:{…}` query
//
// INSERT OVERWRITE DIRECTORY writes files outside any table; it is refused.
func insertOverwrite(s statement) ([]edit, error) {
	if !s.word(0, "insert") || !s.word(1, "overwrite") {
		return nil, nil
	}
	i := 2
	if s.word(i, "local") || s.word(i, "directory") {
		return nil, notSupported("INSERT OVERWRITE DIRECTORY is not supported: icesql writes only to Iceberg tables")
	}
	if s.word(i, "table") {
		i++
	}
	name := i
	end := s.skipName(name)
	if end == name {
		return nil, s.syntaxError(name, "INSERT OVERWRITE expects a table name")
	}
	last := end - 1 // the table's own name, after any qualifiers
	var o Overwrite
	next := end
	if s.word(next, "partition") {
		close, err := s.overwritePartitions(next+1, &o)
		if err != nil {
			return nil, err
		}
		next = close + 1
	}
	if s.word(next, "if") && s.word(next+1, "not") && s.word(next+2, "exists") {
		return nil, notSupported("INSERT OVERWRITE ... IF NOT EXISTS is not supported: icesql overwrites the partitions whether or not they exist")
	}
	encoded, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode INSERT OVERWRITE of %s: %w", s.toks[last].val, err)
	}
	target := s.toks[last].val + overwriteMarker + string(encoded)
	edits := []edit{
		{start: s.toks[1].start, end: s.toks[name].start, text: "INTO "},
		{start: s.toks[last].start, end: s.toks[last].end, text: "`" + strings.ReplaceAll(target, "`", "``") + "`"},
	}
	if next > end {
		edits = append(edits, s.removal(end, next-1))
	}
	return edits, nil
}

// overwritePartitions reads the PARTITION (…) list whose '(' is at open and
// returns the index of its ')'.
func (s statement) overwritePartitions(open int, o *Overwrite) (int, error) {
	close, err := s.list(open, "PARTITION")
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, e := range s.elements(open+1, close) {
		from, to := e[0], e[1]
		if !s.name(from) {
			return 0, s.syntaxError(from, "PARTITION expects column names")
		}
		col := s.toks[from].val
		if seen[strings.ToLower(col)] {
			return 0, s.syntaxError(from, "column %s appears twice in PARTITION", col)
		}
		seen[strings.ToLower(col)] = true
		if to == from+1 {
			o.Dynamic = append(o.Dynamic, col)
			continue
		}
		if !s.punct(from+1, '=') {
			return 0, s.syntaxError(from+1, "PARTITION expects column = value")
		}
		v, ok := s.literal(from+2, to)
		if !ok {
			return 0, s.syntaxError(from+2, "a PARTITION value must be a literal")
		}
		v.Column = col
		o.Static = append(o.Static, v)
	}
	return close, nil
}

// literal reads the constant that spans tokens from..to-1: a string, a
// number with an optional sign, TRUE, FALSE or NULL, or a typed literal such
// as DATE '2024-01-01'.
func (s statement) literal(from, to int) (StaticValue, bool) {
	t := func(i int) token { return s.toks[i] }
	switch {
	case to == from+1 && t(from).typ == ast.STRING:
		return StaticValue{Value: t(from).val}, true
	case to == from+1 && (t(from).typ == ast.INTEGRAL || t(from).typ == ast.FLOAT):
		return StaticValue{Value: t(from).val}, true
	case to == from+2 && (s.punct(from, '-') || s.punct(from, '+')) &&
		(t(from+1).typ == ast.INTEGRAL || t(from+1).typ == ast.FLOAT):
		sign := ""
		if s.punct(from, '-') {
			sign = "-"
		}
		return StaticValue{Value: sign + t(from+1).val}, true
	case to == from+1 && s.word(from, "null"):
		return StaticValue{Null: true}, true
	case to == from+1 && (s.word(from, "true") || s.word(from, "false")):
		return StaticValue{Value: strings.ToLower(t(from).val)}, true
	case to == from+2 && (s.word(from, "date") || s.word(from, "timestamp") || s.word(from, "time")) && t(from+1).typ == ast.STRING:
		return StaticValue{Value: t(from + 1).val}, true
	}
	return StaticValue{}, false
}

// PartitionOverwriteModeVariable is the session variable that chooses
// between static and dynamic INSERT OVERWRITE; Spark's
// spark.sql.sources.partitionOverwriteMode is rewritten to it.
const PartitionOverwriteModeVariable = "icesql_partition_overwrite_mode"

// sparkSettings rewrites SET of the Spark settings icesql honours to its own
// session variables:
//
//	SET spark.sql.sources.partitionOverwriteMode = dynamic
//	→ SET icesql_partition_overwrite_mode = 'dynamic'
func sparkSettings(s statement) ([]edit, error) {
	const key = "spark.sql.sources.partitionoverwritemode"
	if !s.word(0, "set") {
		return nil, nil
	}
	end := s.skipName(1)
	if end == 1 || !strings.EqualFold(s.dotted(1, end), key) {
		return nil, nil
	}
	if !s.punct(end, '=') || end+2 != len(s.toks) || !(s.name(end+1) || s.str(end+1)) {
		return nil, s.syntaxError(end, "expected SET %s = static | dynamic", "spark.sql.sources.partitionOverwriteMode")
	}
	value := strings.ToLower(s.toks[end+1].val)
	return []edit{{start: s.toks[1].start, end: s.toks[end+1].end,
		text: PartitionOverwriteModeVariable + " = " + sqlString(value)}}, nil
}

// replaceTable rewrites CREATE OR REPLACE TABLE and REPLACE TABLE to
// CREATE TABLE and returns which it was ("create-or-replace", "replace"),
// which travels with the table options (TableOptions.Replace).
func replaceTable(s statement) ([]edit, string) {
	switch {
	case s.word(0, "create") && s.word(1, "or") && s.word(2, "replace") && s.word(3, "table"):
		return []edit{{start: s.toks[1].start, end: s.toks[3].start}}, ReplaceOrCreate
	case s.word(0, "replace") && s.word(1, "table"):
		return []edit{{start: s.toks[0].start, end: s.toks[0].end, text: "CREATE"}}, ReplaceOnly
	}
	return nil, ""
}

// The TableOptions.Replace values.
const (
	ReplaceOrCreate = "create-or-replace"
	ReplaceOnly     = "replace"
)

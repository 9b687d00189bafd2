package planner

import (
	"fmt"
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Transform names of a PartitionTerm, as Iceberg spells them.
const (
	TransformIdentity = "identity"
	TransformBucket   = "bucket"
	TransformTruncate = "truncate"
	TransformYear     = "year"
	TransformMonth    = "month"
	TransformDay      = "day"
	TransformHour     = "hour"
)

// PartitionTerm is a column or a transform of one, as PARTITIONED BY, the
// partition field clauses of ALTER TABLE and WRITE ORDERED BY write them:
// region, days(ts), bucket(16, id), truncate(4, name).
type PartitionTerm struct {
	Transform string // one of the Transform constants
	Param     int    // the bucket count or truncate width
	Column    string // the source column; a dotted path for a nested field
}

// String returns the term in Spark's spelling, which ParsePartitionTerm reads
// back: region, days(ts), bucket(16, id).
func (t PartitionTerm) String() string {
	col := quoteName(t.Column)
	switch t.Transform {
	case TransformIdentity:
		return col
	case TransformBucket, TransformTruncate:
		return fmt.Sprintf("%s(%d, %s)", t.Transform, t.Param, col)
	}
	return t.Transform + "s(" + col + ")"
}

// quoteName quotes each part of a dotted column path that would not read
// back as a plain name.
func quoteName(path string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		plain := p != ""
		for j, c := range p {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
				plain = false
			}
		}
		if !plain || ast.KeywordString(keywordID(p)) != "" {
			parts[i] = "`" + strings.ReplaceAll(p, "`", "``") + "`"
		}
	}
	return strings.Join(parts, ".")
}

// keywordID returns the vitess token id of word, or 0 for a plain identifier.
func keywordID(word string) int {
	typ, _ := ast.NewStringTokenizer(word).Scan()
	if typ == ast.ID {
		return 0
	}
	return typ
}

// ParsePartitionTerm reads one term as PartitionTerm.String or a user wrote it.
func ParsePartitionTerm(text string) (PartitionTerm, error) {
	s := lexStatement(text, ast.ParserOptions{})
	return s.partitionTerm(0, len(s.toks))
}

// ParsePartitionField reads one PARTITIONED BY term with the partition
// field name icesql lets it carry: bucket(16, id) AS shard. Spark has no
// syntax for the name; SHOW CREATE TABLE needs one for a field renamed by
// ADD or REPLACE PARTITION FIELD ... AS.
func ParsePartitionField(text string) (PartitionTerm, string, error) {
	s := lexStatement(text, ast.ParserOptions{})
	return s.partitionField(0, len(s.toks))
}

// partitionField reads term [AS name] in tokens from..to-1.
func (s statement) partitionField(from, to int) (PartitionTerm, string, error) {
	name := ""
	if to-from > 2 && s.word(to-2, "as") && s.name(to-1) {
		name = s.toks[to-1].val
		to -= 2
	}
	t, err := s.partitionTerm(from, to)
	return t, name, err
}

// timeTransforms maps the spellings Spark accepts to Iceberg's transform.
var timeTransforms = map[string]string{
	"years": TransformYear, "year": TransformYear,
	"months": TransformMonth, "month": TransformMonth,
	"days": TransformDay, "day": TransformDay, "date": TransformDay,
	"hours": TransformHour, "hour": TransformHour, "date_hour": TransformHour,
}

// partitionTerm reads the term in tokens from..to-1.
func (s statement) partitionTerm(from, to int) (PartitionTerm, error) {
	if from >= to {
		return PartitionTerm{}, s.syntaxError(from, "expected a column or a partition transform")
	}
	if end := s.skipName(from); end == to {
		return PartitionTerm{Transform: TransformIdentity, Column: s.dotted(from, end)}, nil
	}
	fn := s.toks[from]
	if !fn.isName() || !s.punct(from+1, '(') || s.closing(from+1) != to-1 {
		return PartitionTerm{}, s.syntaxError(from, "expected a column or a transform such as days(ts) or bucket(16, id)")
	}
	args := s.elements(from+2, to-1)
	name := strings.ToLower(fn.val)
	if t, ok := timeTransforms[name]; ok {
		if len(args) != 1 {
			return PartitionTerm{}, s.syntaxError(from, "%s takes one column", name)
		}
		col, err := s.termColumn(args[0])
		return PartitionTerm{Transform: t, Column: col}, err
	}
	switch name {
	case TransformBucket, TransformTruncate:
	case "identity":
		if len(args) != 1 {
			return PartitionTerm{}, s.syntaxError(from, "identity takes one column")
		}
		col, err := s.termColumn(args[0])
		return PartitionTerm{Transform: TransformIdentity, Column: col}, err
	default:
		return PartitionTerm{}, s.syntaxError(from, "unknown partition transform %s: use years, months, days, hours, bucket or truncate", fn.val)
	}
	if len(args) != 2 {
		return PartitionTerm{}, s.syntaxError(from, "%s takes a number and a column, as in %s(16, id)", name, name)
	}
	// Spark writes the number first; older Iceberg docs write it last.
	num, col := args[0], args[1]
	if s.toks[num[0]].typ != ast.INTEGRAL && s.toks[col[0]].typ == ast.INTEGRAL {
		num, col = col, num
	}
	if num[1]-num[0] != 1 || s.toks[num[0]].typ != ast.INTEGRAL {
		return PartitionTerm{}, s.syntaxError(num[0], "%s needs a whole number of %s", name, map[string]string{TransformBucket: "buckets", TransformTruncate: "characters or units"}[name])
	}
	n, err := strconv.Atoi(s.toks[num[0]].val)
	if err != nil || n <= 0 {
		return PartitionTerm{}, s.syntaxError(num[0], "%s needs a positive number", name)
	}
	column, err := s.termColumn(col)
	return PartitionTerm{Transform: name, Param: n, Column: column}, err
}

// termColumn reads the column argument of a transform.
func (s statement) termColumn(e [2]int) (string, error) {
	if end := s.skipName(e[0]); end != e[1] || end == e[0] {
		return "", s.syntaxError(e[0], "expected a column name")
	}
	return s.dotted(e[0], e[1]), nil
}

// dotted returns the dotted name in tokens from..to-1, unquoted.
func (s statement) dotted(from, to int) string {
	parts := make([]string, 0, (to-from+1)/2)
	for j := from; j < to; j += 2 {
		parts = append(parts, s.toks[j].val)
	}
	return strings.Join(parts, ".")
}

package planner

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

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

package planner

import (
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// SplitStatements splits a script into its statements at each top-level ';'
// (not inside a string, a quoted identifier or a comment) and drops the
// statements that are empty or hold only comments. Each statement is
// returned as written, without its ';' and surrounding blanks.
//
// vitess's sqlparser.SplitStatementToPieces splits the same way, but keeps
// empty and comment-only pieces and never reports an unterminated string; a
// command line wants neither. Like the mysql client without DELIMITER, this
// splits a procedure body at its inner ';'.
func SplitStatements(text string) ([]string, error) {
	var stmts []string
	l := newLexer(text, ast.ParserOptions{})
	start, empty := 0, true
	for {
		t := l.next()
		switch t.typ {
		case 0, ';':
			if !empty {
				stmts = append(stmts, strings.TrimSpace(text[start:t.start]))
			}
			if t.typ == 0 {
				return stmts, nil
			}
			start, empty = t.end, true
		case ast.COMMENT:
		case ast.LEX_ERROR:
			if err := unterminated(text, t); err != nil {
				return nil, err
			}
			empty = false
		default:
			empty = false
		}
	}
}

// unterminated returns an error if the lexer error t is a string, quoted
// identifier or comment that runs to the end of the text, which would
// otherwise swallow every statement after it.
func unterminated(text string, t token) error {
	if t.end < len(text) {
		return nil
	}
	var what string
	switch {
	case strings.HasPrefix(text[t.start:], "/*"):
		what = "comment"
	case text[t.start] == '`':
		what = "quoted identifier"
	case text[t.start] == '\'' || text[t.start] == '"':
		what = "string"
	default:
		return nil
	}
	line := 1 + strings.Count(text[:t.start], "\n")
	return fmt.Errorf("unterminated %s starting on line %d", what, line)
}

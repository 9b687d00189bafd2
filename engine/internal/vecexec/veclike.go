package vecexec

import (
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"

	"github.com/icesql/icesql/pushdown/vector"
)

// like translates `column LIKE 'pattern' [ESCAPE 'c']` on a string column
// the vector path reads. go-mysql-server's own matcher, built once for the
// pattern in the expression's collation, tests the values, so the answer
// is the row path's; on dictionary-encoded pages it tests each distinct
// value once (vector.Match).
func (tr *VecTranslator) like(e *expression.Like) (vector.Expr, error) {
	gf, ok := e.Left().(*expression.GetField)
	if !ok {
		return nil, decline("LIKE on %s", e.Left())
	}
	col, _, err := tr.column(gf)
	if err != nil {
		return nil, err
	}
	if col.T.Kind != vector.String {
		return nil, decline("LIKE on a column of kind %d", col.T.Kind)
	}
	pattern, ok := stringLiteral(e.Right())
	if !ok {
		return nil, decline("LIKE pattern %s", e.Right())
	}
	escape := '\\'
	if e.Escape != nil {
		s, ok := stringLiteral(e.Escape)
		if !ok || utf8.RuneCountInString(s) > 1 {
			return nil, decline("LIKE escape %s", e.Escape)
		}
		escape = 0 // an empty ESCAPE '' escapes NUL, as in go-mysql-server
		for _, r := range s {
			escape = r
		}
	}
	collation, _ := e.CollationCoercibility(tr.Ctx)
	m, err := expression.ConstructLikeMatcher(collation, pattern, escape)
	if err != nil {
		// An invalid pattern: the row path warns per row.
		return nil, decline("LIKE pattern %s: %v", e.Right(), err)
	}
	return vector.Match{E: col, Test: m.Match}, nil
}

// stringLiteral is e's value when e is a non-NULL text literal.
func stringLiteral(e sql.Expression) (string, bool) {
	l, ok := e.(*expression.Literal)
	if !ok {
		return "", false
	}
	s, ok := l.Val.(string)
	return s, ok
}

package planner

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// foreignKeyColumns quotes the column names of FOREIGN KEY (...) and
// REFERENCES t (...) lists. The vitess grammar takes only identifiers
// there, not the non-reserved keywords MySQL allows as names: FOREIGN KEY
// (account) REFERENCES accounts (id) was a syntax error (1064), while
// KEY (account) was not.
func foreignKeyColumns(s statement) ([]edit, error) {
	var edits []edit
	quote := func(open int) {
		if !s.punct(open, '(') {
			return
		}
		end := s.closing(open)
		for j := open + 1; j > 0 && j < end; j++ {
			t := s.toks[j]
			if t.typ != ast.ID && !t.quoted && t.isName() {
				edits = append(edits, edit{start: t.start, end: t.end, text: "`" + strings.ReplaceAll(t.val, "`", "``") + "`"})
			}
		}
	}
	for i := 0; i+1 < len(s.toks); i++ {
		switch {
		case s.word(i, "foreign") && s.word(i+1, "key"):
			open := i + 2
			if !s.punct(open, '(') {
				open = s.skipName(open) // FOREIGN KEY index_name (...)
			}
			quote(open)
		case s.word(i, "references"):
			quote(s.skipName(i + 1))
		}
	}
	return edits, nil
}

package planner

import ast "github.com/dolthub/vitess/go/vt/sqlparser"

// ParseSortOrder reads a comma-separated sort order as rewrite_data_files'
// sort_order argument writes it: id DESC NULLS LAST, name ASC NULLS FIRST.
func ParseSortOrder(text string) ([]SortTerm, error) {
	s := lexStatement(text, ast.ParserOptions{})
	if len(s.toks) == 0 {
		return nil, s.syntaxError(0, "expected a sort order")
	}
	return s.sortTerms(0, len(s.toks))
}

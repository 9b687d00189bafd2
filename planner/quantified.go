package planner

import (
	"strings"
)

// QuantifiedFunction is the function the planner writes for a quantified
// comparison that MySQL's other syntax cannot say; the engine resolves it
// (engine/quantified.go).
const QuantifiedFunction = "icesql_quantified"

// quantified rewrites MySQL's quantified comparisons, x op ANY|SOME|ALL
// (subquery), which go-mysql-server's grammar lacks. = ANY is IN and <> ALL
// is NOT IN, in SQL's three-valued logic too; the other forms become
// x = icesql_quantified('op', 'any'|'all', (subquery)), which keeps x, the
// operator's precedence and the subquery where they were written, for the
// engine to replace with the comparison itself.
func quantified(s statement) ([]edit, error) {
	var edits []edit
	for i := 1; i+2 < len(s.toks); i++ {
		quant := strings.ToLower(s.toks[i].val)
		if s.toks[i].quoted || !(s.word(i, "any") || s.word(i, "some") || s.word(i, "all")) {
			continue
		}
		if !s.punct(i+1, '(') || !(s.word(i+2, "select") || s.word(i+2, "with") || s.punct(i+2, '(')) {
			continue
		}
		op := comparisonOperator(s, i-1)
		if op == "" {
			continue
		}
		end := s.closing(i + 1)
		if end < 0 {
			continue
		}
		if quant == "some" {
			quant = "any"
		}
		opTok := s.toks[i-1]
		switch {
		case op == "=" && quant == "any":
			edits = append(edits, edit{start: opTok.start, end: s.toks[i].end, text: "IN"})
		case op == "<>" && quant == "all":
			edits = append(edits, edit{start: opTok.start, end: s.toks[i].end, text: "NOT IN"})
		default:
			edits = append(edits,
				edit{start: opTok.start, end: s.toks[i].end, text: "= " + QuantifiedFunction + "('" + op + "', '" + quant + "', "},
				edit{start: s.toks[end].end, end: s.toks[end].end, text: ")"})
		}
	}
	return edits, nil
}

// comparisonOperator returns the comparison operator token i is, spelled
// as the engine names it ("<>" for both "<>" and "!="), or "".
func comparisonOperator(s statement, i int) string {
	if i < 0 || i >= len(s.toks) {
		return ""
	}
	t := s.toks[i]
	switch op := s.text[t.start:t.end]; op {
	case "=", "<", ">", "<=", ">=", "<>", "<=>":
		return op
	case "!=":
		return "<>"
	}
	return ""
}

package planner

import (
	"context"
	"errors"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Statements of MySQL that the vitess grammar lacks.

// Do is MySQL's DO expr [, expr] ...: it evaluates the expressions, for
// their effect (SLEEP, GET_LOCK, a user variable's assignment), and returns
// no result. The vitess grammar lacks it; the engine runs Query, the
// SELECT of the same expressions, and discards its row.
type Do struct{ Query string }

// WithResolvedChildren implements ast.Injectable; the engine replaces Do
// with its own node before the statement is bound.
func (Do) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, errors.New("DO is run by the engine")
}

func (Do) String() string { return "DO" }

// doStatement reads DO's expressions.
func (r rewriter) doStatement(s statement) ([]edit, error) {
	if !s.word(0, "do") || len(s.toks) < 2 {
		return nil, nil
	}
	query := "SELECT " + s.text[s.toks[1].start:]
	sel, err := ast.ParseWithOptions(context.Background(), query, r.opts)
	if err != nil {
		return nil, err
	}
	var exprs ast.Exprs
	if sel, ok := sel.(*ast.Select); ok && sel.From == nil && sel.Where == nil && sel.Limit == nil {
		for _, e := range sel.SelectExprs {
			if ae, ok := e.(*ast.AliasedExpr); ok && ae.As.IsEmpty() {
				exprs = append(exprs, ae.Expr)
			}
		}
		if len(exprs) != len(sel.SelectExprs) {
			exprs = nil
		}
	}
	if exprs == nil {
		return nil, s.syntaxError(1, "DO takes a list of expressions")
	}
	return nil, injected{ast.InjectedStatement{
		Statement: Do{Query: query},
		Auth:      ast.AuthInformation{AuthType: ast.AuthType_IGNORE},
	}}
}

// explainJSON lets EXPLAIN FORMAT=JSON parse: the vitess grammar takes the
// format as an identifier, and JSON is a keyword, so it is quoted. The
// engine answers the format (explainjson.go).
func explainJSON(s statement) ([]edit, error) {
	i := 1
	if !s.word(0, "explain") && !s.word(0, "describe") && !s.word(0, "desc") {
		return nil, nil
	}
	if s.word(i, "extended") {
		i++
	}
	if !s.word(i, "format") || !s.punct(i+1, '=') || !s.word(i+2, "json") {
		return nil, nil
	}
	t := s.toks[i+2]
	return []edit{{start: t.start, end: t.end, text: "`json`"}}, nil
}

package planner

import (
	"context"
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Call is a Spark procedure call, CALL [catalog.]system.<name>(args), which
// the MySQL grammar cannot parse three ways over: `system` is a reserved
// word, a procedure name has at most two parts, and `name => value` is not
// MySQL. The planner hands it on as an injected statement whose children are
// the argument expressions; the engine replaces Call with the node that runs
// the procedure (planner cannot import procedures, which imports planner).
//
// Why an injected node rather than a rewrite to MySQL's CALL of an external
// stored procedure: go-mysql-server matches external procedures by argument
// count only, accepts a fixed set of Go parameter types (no maps, which
// expire_snapshots and rewrite_data_files take), reports a wrong argument
// without naming it, and would need the procedures' parameter names in the
// parser to reorder named arguments. The injected node binds arguments by
// Spark's parameter names itself, with errors that name the argument.
type Call struct {
	// Name is the procedure's name, without catalog and system.
	Name string
	// ArgNames has one entry per argument: its name when written
	// name => value, else "".
	ArgNames []string
}

var _ ast.Injectable = (*Call)(nil)

// WithResolvedChildren implements ast.Injectable. The engine replaces Call
// before go-mysql-server binds it; reaching here means it did not.
func (c *Call) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, notSupported("CALL system.%s: procedures are not available here", c.Name)
}

// String names the statement in logs.
func (c *Call) String() string { return "CALL system." + c.Name }

// parseCall recognises CALL [catalog.]system.name(...) in one statement's
// text. ok is false for any other statement, including MySQL's CALL of a
// stored procedure, which go-mysql-server handles.
func (p *Parser) parseCall(ctx context.Context, text string, opts ast.ParserOptions) (stmt ast.Statement, ok bool, err error) {
	s := lexStatement(text, opts)
	if s.word(0, "alter") {
		return p.parseExecute(ctx, s, opts)
	}
	if s.word(0, "create") {
		return p.parseCreateNamespace(s)
	}
	if !s.word(0, "call") {
		return nil, false, nil
	}
	// `system` may be quoted, as MySQL users quote reserved words.
	isSystem := func(i int) bool { return s.name(i) && strings.EqualFold(s.toks[i].val, "system") }
	i := 1
	if s.name(i) && strings.EqualFold(s.toks[i].val, p.catalog) && s.punct(i+1, '.') && isSystem(i+2) {
		i += 2
	}
	if !isSystem(i) || !s.punct(i+1, '.') || !s.name(i+2) {
		return nil, false, nil
	}
	call := &Call{Name: s.toks[i+2].val}
	open := i + 3
	if open == len(s.toks) { // CALL system.name without parentheses
		return callStatement(call, nil), true, nil
	}
	close := s.closing(open)
	if !s.punct(open, '(') || close < 0 || close != len(s.toks)-1 {
		return nil, true, fmt.Errorf("syntax error in CALL system.%s: want CALL system.%s(arg, ... | name => value, ...)", call.Name, call.Name)
	}
	exprs, err := callArgs(ctx, s, call, open, close, opts, false)
	if err != nil {
		return nil, true, err
	}
	return callStatement(call, exprs), true, nil
}

func callStatement(call *Call, args ast.Exprs) ast.Statement {
	return ast.InjectedStatement{
		Statement: call,
		Children:  args,
		// A procedure changes the tables its string arguments name, which
		// the privilege check cannot see; it needs the global UPDATE
		// privilege.
		Auth: ast.AuthInformation{AuthType: ast.AuthType_UPDATE, TargetType: ast.AuthTargetType_Global},
	}
}

// parseExpr parses one scalar expression with the MySQL grammar.
func parseExpr(ctx context.Context, text string, opts ast.ParserOptions) (ast.Expr, error) {
	stmt, err := ast.ParseWithOptions(ctx, "SELECT "+text, opts)
	if err != nil {
		return nil, err
	}
	sel, ok := stmt.(*ast.Select)
	if !ok || len(sel.SelectExprs) != 1 {
		return nil, fmt.Errorf("%q is not a single value", text)
	}
	ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return nil, fmt.Errorf("%q is not a single value", text)
	}
	return ae.Expr, nil
}

package sqlfunc

import (
	"errors"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/regexlimit"
)

// RegexpOperators turns a REGEXP b (RLIKE too) into regexp_like(a, b) = 1
// and a NOT REGEXP b into regexp_like(a, b) = 0, the same values NULL
// included: go-mysql-server's planner builds the operators itself rather
// than through the function registry, where regexpFunction puts the
// limits. The select list keeps its text, and so its column names.
func RegexpOperators(node ast.SQLNode) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		c, ok := n.(*ast.ComparisonExpr)
		if !ok || (c.Operator != ast.RegexpStr && c.Operator != ast.NotRegexpStr) {
			return true, nil
		}
		want := "1"
		if c.Operator == ast.NotRegexpStr {
			want = "0"
		}
		c.Left = &ast.FuncExpr{Name: ast.NewColIdent("regexp_like"), Exprs: ast.SelectExprs{
			&ast.AliasedExpr{Expr: c.Left}, &ast.AliasedExpr{Expr: c.Right}}}
		c.Right = ast.NewIntVal([]byte(want))
		c.Operator = ast.EqualStr
		return true, nil
	}, node)
}

// RegexpFunctions are the REGEXP functions by name, with the position of
// their match type argument.
var RegexpFunctions = map[string]int{"regexp_like": 2, "regexp_substr": 4, "regexp_instr": 5, "regexp_replace": 5}

func guardRegexp(ctx *sql.Context, e sql.Expression, flagsAt int) (sql.Expression, error) {
	return newGuarded(ctx, e, func(ctx *sql.Context, vals []any) (bool, error) {
		return false, checkRegexp(ctx, vals, flagsAt)
	})
}

// RegexpFunction is go-mysql-server's REGEXP function name under the limits.
func RegexpFunction(name string, flagsAt int) sql.Function {
	builtin := builtinFunction(name)
	return sql.FunctionN{Name: name, Fn: func(ctx *sql.Context, args ...sql.Expression) (sql.Expression, error) {
		f, err := builtin.NewInstance(ctx, args)
		if err != nil {
			return nil, err
		}
		return guardRegexp(ctx, f, flagsAt)
	}}
}

// checkRegexp runs the search of a REGEXP function's arguments (text,
// pattern, ..., match type at flagsAt) under the server's limits.
func checkRegexp(ctx *sql.Context, vals []any, flagsAt int) error {
	if vals[0] == nil || vals[1] == nil {
		return nil
	}
	var flags uint32
	if flagsAt < len(vals) {
		for _, c := range TextOf(ctx, vals[flagsAt]) {
			switch c {
			case 'i':
				flags |= regexlimit.CaseInsensitive
			case 'c':
				flags &^= regexlimit.CaseInsensitive
			case 'm':
				flags |= regexlimit.Multiline
			case 'n':
				flags |= regexlimit.DotAll
			case 'u':
				flags |= regexlimit.UnixLines
			}
		}
	}
	err := regexlimit.Check(TextOf(ctx, vals[1]), TextOf(ctx, vals[0]), flags,
		int32(globalInt("regexp_time_limit", 32)), int32(globalInt("regexp_stack_limit", 8000000)))
	switch {
	case errors.Is(err, regexlimit.ErrTimeout):
		return mysqlerr.New(mysqlerr.ErRegexpTimeOut, "%s (regexp_time_limit is %d steps)",
			strings.TrimSuffix(err.Error(), "."), globalInt("regexp_time_limit", 32))
	case errors.Is(err, regexlimit.ErrStackOverflow):
		return mysqlerr.New(mysqlerr.ErRegexpStackOverflow, "%s (regexp_stack_limit is %d bytes)",
			strings.TrimSuffix(err.Error(), "."), globalInt("regexp_stack_limit", 8000000))
	}
	return err
}

// globalInt is a global system variable's integer value, def if unset.
func globalInt(name string, def int64) int64 {
	_, v, ok := sql.SystemVariables.GetGlobal(name)
	if !ok {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case uint64:
		return int64(n)
	}
	return def
}

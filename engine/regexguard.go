package engine

import (
	"errors"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine/internal/regexlimit"
)

// MySQL's codes for a regular expression search that ran into a limit.
const (
	erRegexpStackOverflow = 3698 // ER_REGEXP_STACK_OVERFLOW
	erRegexpTimeOut       = 3699 // ER_REGEXP_TIME_OUT
)

// guardRegexpsID is the id of guardRegexps, apart from rules.go's.
const guardRegexpsID analyzer.RuleId = 1101

// guardRegexps puts every REGEXP, RLIKE and REGEXP_* function under
// MySQL's regexp_time_limit and regexp_stack_limit. go-mysql-server
// searches with ICU, a backtracking engine, without either limit:
// REGEXP_LIKE(REPEAT('a', 32), '(a+)+b') ran for hours in C, past KILL
// QUERY. Each search is first run with ICU's limits (package regexlimit);
// one that runs out fails the statement with MySQL's 3699 (or 3698), and
// one that completes within them is then evaluated by go-mysql-server.
// The operators are built by go-mysql-server's planner, not looked up as
// functions, so this is a rule rather than an entry of providedFunctions.
func guardRegexps(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(ctx, n, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		flagsAt, ok := regexpFlagsAt(e)
		if !ok {
			return e, transform.SameTree, nil
		}
		g, err := guardRegexp(ctx, e, flagsAt)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return g, transform.NewTree, nil
	})
}

// regexpFunctions are the REGEXP functions by name, with the position of
// their match type argument.
var regexpFunctions = map[string]int{"regexp_like": 2, "regexp_substr": 4, "regexp_instr": 5, "regexp_replace": 5}

// regexpFlagsAt is the position of a go-mysql-server REGEXP function's
// match type argument; ok is false for other expressions.
func regexpFlagsAt(e sql.Expression) (int, bool) {
	switch e.(type) {
	case *function.RegexpLike:
		return regexpFunctions["regexp_like"], true
	case *function.RegexpSubstr:
		return regexpFunctions["regexp_substr"], true
	case *function.RegexpInstr:
		return regexpFunctions["regexp_instr"], true
	case *function.RegexpReplace:
		return regexpFunctions["regexp_replace"], true
	}
	return 0, false
}

func guardRegexp(ctx *sql.Context, e sql.Expression, flagsAt int) (sql.Expression, error) {
	return newGuarded(ctx, e, func(ctx *sql.Context, vals []any) (bool, error) {
		return false, checkRegexp(ctx, vals, flagsAt)
	})
}

// regexpFunction is go-mysql-server's REGEXP function name under the limits
// (the function-call syntax, which some statements plan without the rules
// that guardRegexps is one of).
func regexpFunction(name string, flagsAt int) sql.Function {
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
		for _, c := range textOf(ctx, vals[flagsAt]) {
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
	err := regexlimit.Check(textOf(ctx, vals[1]), textOf(ctx, vals[0]), flags,
		int32(globalInt("regexp_time_limit", 32)), int32(globalInt("regexp_stack_limit", 8000000)))
	switch {
	case errors.Is(err, regexlimit.ErrTimeout):
		return mysql.NewSQLError(erRegexpTimeOut, "HY000", "%s (regexp_time_limit is %d steps)",
			strings.TrimSuffix(err.Error(), "."), globalInt("regexp_time_limit", 32))
	case errors.Is(err, regexlimit.ErrStackOverflow):
		return mysql.NewSQLError(erRegexpStackOverflow, "HY000", "%s (regexp_stack_limit is %d bytes)",
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

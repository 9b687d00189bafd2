package engine

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// providedFunctions are the functions icesql puts in place of, or beside,
// go-mysql-server's built-ins of the same name.
var providedFunctions = func() map[string]sql.Function {
	fs := map[string]sql.Function{
		"sum":                      sqlval.ExactAggregateFunction("sum"),
		"avg":                      sqlval.ExactAggregateFunction("avg"),
		planner.QuantifiedFunction: quantifiedFunction,
		"load_file":                loadFileFunction,  // serverfiles.go
		"coalesce":                 coalesceFunction,  // coalesce.go
		"abs":                      absFunction,       // abs.go
		"str_to_date":              strToDateFunction, // strtodate.go
		"nth_value":                nthValueFunc,      // windowvalues.go
		"cume_dist":                cumeDistFunc,      // windowvalues.go
	}
	for _, name := range temporalTextFunctions { // stringfuncs.go
		fs[name] = textArgsFunction(name)
	}
	for name, bound := range packetBoundedFunctions { // packetlimit.go
		fs[name] = packetBoundedFunction(name, bound)
	}
	for name, flagsAt := range regexpFunctions { // regexguard.go
		fs[name] = regexpFunction(name, flagsAt)
	}
	return fs
}()

// Function implements sql.FunctionProvider: go-mysql-server's catalog asks
// the database provider before its built-in functions.
func (p *provider) Function(_ *sql.Context, schema, name string) (sql.Function, bool) {
	if schema != "" {
		return nil, false
	}
	f, ok := providedFunctions[strings.ToLower(name)]
	return f, ok
}

package engine

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// providedFunctions are the functions icesql puts in place of, or beside,
// go-mysql-server's built-ins of the same name.
var providedFunctions = func() map[string]sql.Function {
	fs := map[string]sql.Function{
		"sum":                      sqlval.ExactAggregateFunction("sum"),
		"avg":                      sqlval.ExactAggregateFunction("avg"),
		planner.QuantifiedFunction: sqlfunc.QuantifiedFunction,
		"load_file":                loadFileFunction,          // serverfiles.go
		"coalesce":                 sqlfunc.CoalesceFunction,  // sqlfunc/coalesce.go
		"abs":                      sqlfunc.AbsFunction,       // sqlfunc/abs.go
		"str_to_date":              sqlfunc.StrToDateFunction, // sqlfunc/strtodate.go
		"nth_value":                sqlfunc.NthValueFunc,      // sqlfunc/windowvalues.go
		"cume_dist":                sqlfunc.CumeDistFunc,      // sqlfunc/windowvalues.go
	}
	for _, name := range []string{"floor", "ceil", "ceiling"} {
		fs[name] = sqlfunc.DecimalArgCopiedFunction(name) // sqlfunc/floorceil.go
	}
	for _, name := range sqlfunc.TemporalTextFunctions { // sqlfunc/stringfuncs.go
		fs[name] = sqlfunc.TextArgsFunction(name)
	}
	for name, bound := range sqlfunc.PacketBoundedFunctions { // sqlfunc/packetlimit.go
		fs[name] = sqlfunc.PacketBoundedFunction(name, bound)
	}
	for name, flagsAt := range sqlfunc.RegexpFunctions { // sqlfunc/regexguard.go
		fs[name] = sqlfunc.RegexpFunction(name, flagsAt)
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

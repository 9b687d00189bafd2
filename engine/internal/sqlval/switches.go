package sqlval

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// SwitchVariable is an ON/OFF session variable, ON by default, that
// SwitchedOn reads: icesql's escape hatches (icesql_vectorize,
// icesql_decorrelate).
func SwitchVariable(name string) sql.SystemVariable {
	return &sql.MysqlSystemVariable{
		Name:    name,
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic: true,
		Type:    types.NewSystemBoolType(name),
		Default: int8(1),
	}
}

// SwitchedOn says the boolean session variable name, ON by default, is on.
func SwitchedOn(ctx *sql.Context, name string) bool {
	v, err := ctx.GetSessionVariable(ctx, name)
	if err != nil {
		return true
	}
	switch v := v.(type) {
	case int8:
		return v != 0
	case bool:
		return v
	}
	return true
}

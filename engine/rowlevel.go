package engine

import (
	"context"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Row-level changes (UPDATE, DELETE) on Iceberg tables are not
// built yet. go-mysql-server would answer them with 1105 "table doesn't
// support UPDATE", or for a bare DELETE FROM with a misleading "database
// not found"; refuseRowLevel answers 1235 saying what is missing instead.
// The grant tables of the mysql database keep go-mysql-server's handling.
func refuseRowLevel(stmt ast.Statement) (ast.Statement, bool) {
	var what string
	var tables ast.TableExprs
	switch s := stmt.(type) {
	case *ast.Update:
		what, tables = "UPDATE", s.TableExprs
	case *ast.Delete:
		what, tables = "DELETE", s.TableExprs
	default:
		return nil, false
	}
	for _, te := range tables {
		if at, ok := te.(*ast.AliasedTableExpr); ok {
			if tn, ok := at.Expr.(ast.TableName); ok && strings.EqualFold(tn.DbQualifier.String(), "mysql") {
				return nil, false
			}
		}
	}
	return ast.InjectedStatement{
		Statement: refusal{err: notSupported("%s is not supported on Iceberg tables yet: icesql cannot change or remove existing rows (row-level deletes are the next step); INSERT, INSERT OVERWRITE, TRUNCATE TABLE, CREATE TABLE ... AS SELECT and DROP TABLE work", what)},
		Auth:      ast.AuthInformation{AuthType: ast.AuthType_IGNORE},
	}, true
}

// refusal is an injected statement that fails with err when bound.
type refusal struct{ err error }

func (r refusal) WithResolvedChildren(context.Context, []any) (any, error) { return nil, r.err }
func (r refusal) String() string                                           { return r.err.Error() }

package planner

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// notSupported builds MySQL error 1235 (ER_NOT_SUPPORTED_YET, SQLSTATE 42000)
// for statements icesql refuses on purpose.
func notSupported(format string, args ...any) *mysql.SQLError {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSClientError, format, args...)
}

// Iceberg partitions by transforms of columns; a MySQL partitioning clause
// cannot be translated, and go-mysql-server would parse it and silently drop
// it, which would leave the user believing the table is partitioned.
const partitionAdvice = "icesql tables are partitioned with Iceberg transforms, write PARTITIONED BY (col, days(ts), bucket(16, id), ...)"

var (
	errMySQLPartitionBy = notSupported("MySQL PARTITION BY is not supported: %s", partitionAdvice)
	errMySQLPartitions  = notSupported("MySQL partition management (ADD/DROP/… PARTITION) is not supported: %s", partitionAdvice)
)

// rejectMySQLPartitioning refuses MySQL partitioning in a parsed statement.
// The check is on the AST rather than the tokens so that it also sees
// PARTITION BY inside an executable comment (/*!50100 PARTITION BY … */), the
// way mysqldump writes it.
func rejectMySQLPartitioning(stmt ast.Statement) *mysql.SQLError {
	switch s := stmt.(type) {
	case *ast.DDL:
		if s.TableSpec != nil && s.TableSpec.PartitionOpt != nil {
			return errMySQLPartitionBy
		}
	case *ast.AlterTable:
		if len(s.PartitionSpecs) > 0 {
			return errMySQLPartitions
		}
	}
	return nil
}

// rejectAlterPartitionBy refuses ALTER TABLE … PARTITION BY, which the vitess
// grammar accepts and drops without a trace in the AST, so only the tokens
// show it.
func rejectAlterPartitionBy(s statement) ([]edit, error) {
	i := s.alterTableEnd()
	if i < 0 {
		return nil, nil
	}
	depth := 0
	for ; i < len(s.toks); i++ {
		switch s.toks[i].typ {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 && s.word(i, "partition") && s.word(i+1, "by") {
			return nil, errMySQLPartitionBy
		}
	}
	return nil, nil
}

// rejected returns a statement that fails with err when go-mysql-server
// binds it.
//
// Why not return err from the parser: go-mysql-server's planbuilder
// (planbuilder/parse.go) wraps every parser error as
// sql.ErrSyntaxError.New(err.Error()), which keeps only the message, and
// sql.CastSQLError maps that kind to 1105 (ER_UNKNOWN_ERROR, HY000). An error
// raised while binding an injected statement is returned unwrapped
// (buildInjectedStatement → handleErr → Parse/BindOnly recover), and
// sql.CastSQLError returns a *mysql.SQLError as it is, so the client sees
// err's own code and SQLSTATE. TestRejectionReachesClient checks this.
func rejected(err *mysql.SQLError) ast.Statement {
	return ast.InjectedStatement{
		Statement: rejection{err},
		// The statement does nothing, so it needs no privilege.
		Auth: ast.AuthInformation{AuthType: ast.AuthType_IGNORE},
	}
}

// rejection is the ast.Injectable of a rejected statement.
type rejection struct{ err *mysql.SQLError }

// WithResolvedChildren implements ast.Injectable.
func (r rejection) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, r.err
}

// String names the statement in EXPLAIN-like output and logs.
func (r rejection) String() string {
	return "rejected statement: " + r.err.Message
}

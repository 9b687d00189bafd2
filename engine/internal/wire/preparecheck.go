package wire

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
)

// prepareCheck answers COM_STMT_PREPARE of a statement vitess cannot parse
// before vitess sees it. vitess parses a statement to be prepared itself,
// with its own grammar (to count the parameters), and answers a failure
// with 1105 "unknown error" before any handler could give it MySQL's code.
// The check parses the statement exactly as vitess will, with the
// connection's parser options, so a statement it lets through is one
// vitess accepts; a statement it stops gets MySQL's syntax error 1064, or
// 1295 when it is icesql's own (Spark or Iceberg) syntax, which the
// prepared-statement protocol cannot carry.
type prepareCheck struct {
	options func() (ast.ParserOptions, error) // the connection's, as vitess asks for them
	vc      *mysql.Conn
	icesql  *planner.Parser
}

// check is the error the statement query gets instead of being prepared,
// or nil.
func (p prepareCheck) check(query string) *mysql.SQLError {
	opts, err := p.options()
	if err != nil {
		return nil // vitess asks again and answers this itself
	}
	if !p.vc.DisableClientMultiStatements && p.vc.Capabilities&mysql.CapabilityClientMultiStatements != 0 {
		pieces, err := ast.SplitStatementToPieces(query)
		if err != nil {
			return mysqlerr.Coded(err)
		}
		if len(pieces) != 1 {
			return mysqlerr.New(mysql.ERParseError,
				"a prepared statement holds one statement; this text has %d", len(pieces))
		}
	}
	_, err = ast.ParseWithOptions(context.Background(), query, opts)
	if err == nil {
		return nil
	}
	if _, _, _, ierr := p.icesql.ParseWithOptions(context.Background(), query, ';', false, opts); ierr == nil {
		return mysqlerr.New(mysqlerr.ErUnsupportedPS,
			"This statement uses icesql's Spark/Iceberg syntax, which cannot be prepared on the server (MySQL's grammar stops at: %s); send it as a plain query, or let the client substitute the parameters",
			mysqlerr.Coded(err).Message)
	}
	return mysqlerr.Coded(err)
}

package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/procedures"
	"github.com/icesql/icesql/storage"
)

// interceptCall gives a parsed CALL system.<name>(...) the node that runs it.
func (p parser) interceptCall(stmt ast.Statement) (ast.Statement, bool) {
	inj, ok := stmt.(ast.InjectedStatement)
	if !ok {
		return stmt, false
	}
	call, ok := inj.Statement.(*planner.Call)
	if !ok {
		return stmt, false
	}
	inj.Statement = &callNode{e: p.e, call: call}
	return inj, true
}

// callNode runs one procedure of procedures.Builtin.
type callNode struct {
	e    *Engine
	call *planner.Call
	proc *procedures.Procedure
	args []sql.Expression
}

var (
	_ sql.ExecSourceRel = (*callNode)(nil)
	_ ast.Injectable    = (*callNode)(nil)
)

// WithResolvedChildren implements ast.Injectable: the argument expressions
// arrive bound; an unknown procedure fails here, before anything runs.
func (c *callNode) WithResolvedChildren(_ context.Context, children []any) (any, error) {
	proc, ok := c.e.procedures.Lookup(c.call.Name)
	if !ok {
		return nil, mysqlerr.New(mysql.ERSPDoesNotExist,
			"PROCEDURE system.%s does not exist; icesql's procedures are %v", c.call.Name, c.e.procedures.Names())
	}
	nc := *c
	nc.proc = proc
	nc.args = make([]sql.Expression, len(children))
	for i, ch := range children {
		e, ok := ch.(sql.Expression)
		if !ok {
			return nil, fmt.Errorf("CALL system.%s: argument %d is not an expression (%T)", c.call.Name, i+1, ch)
		}
		nc.args[i] = e
	}
	return &nc, nil
}

func (c *callNode) Resolved() bool       { return true }
func (c *callNode) IsReadOnly() bool     { return false }
func (c *callNode) String() string       { return c.call.String() }
func (c *callNode) Children() []sql.Node { return nil }
func (c *callNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 0)
	}
	return c, nil
}

// Schema implements sql.Node: the procedure's output columns, as Spark names them.
func (c *callNode) Schema(*sql.Context) sql.Schema {
	if c.proc == nil {
		return nil
	}
	out := make(sql.Schema, len(c.proc.Output))
	for i, col := range c.proc.Output {
		out[i] = &sql.Column{Name: col.Name, Type: kindType(col.Kind), Nullable: true}
	}
	return out
}

func kindType(k procedures.Kind) sql.Type {
	switch k {
	case procedures.Int64:
		return types.Int64
	case procedures.Bool:
		return types.Boolean
	}
	return types.LongText
}

// RowIter implements sql.ExecSourceRel: it evaluates the arguments, binds
// them to the procedure's parameters and runs it.
func (c *callNode) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	bound, err := c.callArgs(ctx, row)
	if err != nil {
		return nil, procedureError(err)
	}
	rows, err := c.proc.Run(ctx, c.e.procedureEnv(ctx), bound)
	if err != nil {
		return nil, procedureError(err)
	}
	out := make([]sql.Row, len(rows))
	for i, r := range rows {
		out[i] = sql.Row(r)
	}
	return sql.RowsToRowIter(out...), nil
}

// procedureError gives a procedure's error its MySQL code.
func procedureError(err error) error {
	var bad *storage.NameError
	switch {
	case errors.As(err, &bad):
		return mysqlerr.NameError(bad)
	case errors.Is(err, errors.ErrUnsupported):
		return mysqlerr.NotSupported("%s", err.Error())
	case errors.Is(err, storage.ErrConflict):
		return mysqlerr.Conflict("%s", err.Error())
	case errors.Is(err, procedures.ErrArgument):
		return mysqlerr.New(mysql.ERWrongArguments, "%s", err.Error())
	case errors.Is(err, catalog.ErrNoSuchTable):
		return mysqlerr.New(mysql.ERNoSuchTable, "%s", err.Error())
	case errors.Is(err, catalog.ErrTableAlreadyExists):
		return mysqlerr.New(mysql.ERTableExists, "%s", err.Error())
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		return mysqlerr.New(mysql.ERBadDb, "%s", err.Error())
	}
	return err
}

// interceptDo runs the planner's DO statement as a doNode.
func (p parser) interceptDo(stmt ast.Statement) (ast.Statement, bool) {
	inj, ok := stmt.(ast.InjectedStatement)
	if !ok {
		return stmt, false
	}
	do, ok := inj.Statement.(planner.Do)
	if !ok {
		return stmt, false
	}
	inj.Statement = &doNode{e: p.e, query: do.Query}
	return inj, true
}

// doNode is DO expr [, expr] ...: it runs the SELECT of the expressions on
// the statement's session, so they are evaluated exactly as a SELECT
// evaluates them (errors and warnings included), and returns OK.
type doNode struct {
	e     *Engine
	query string
}

var (
	_ sql.ExecSourceRel = (*doNode)(nil)
	_ ast.Injectable    = (*doNode)(nil)
)

func (n *doNode) WithResolvedChildren(context.Context, []any) (any, error) { return n, nil }
func (n *doNode) Resolved() bool                                           { return true }
func (n *doNode) IsReadOnly() bool                                         { return true }
func (n *doNode) String() string                                           { return "DO" }
func (n *doNode) Children() []sql.Node                                     { return nil }
func (n *doNode) Schema(*sql.Context) sql.Schema                           { return types.OkResultSchema }
func (n *doNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *doNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	if _, err := n.e.runQuery(ctx, n.query); err != nil { // merge.go
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

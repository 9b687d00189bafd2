package engine

import (
	"context"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/planner"
)

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

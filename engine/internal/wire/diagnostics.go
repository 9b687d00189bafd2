package wire

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// MySQL's diagnostics area holds the conditions of the last statement:
// its warnings and, when it failed, its error. go-mysql-server keeps the
// warnings in the session; icesql adds a failed statement's error to them
// (rememberError), as MySQL lists it in SHOW WARNINGS, and answers SHOW
// WARNINGS, SHOW ERRORS, SHOW COUNT(*) WARNINGS and SHOW COUNT(*) ERRORS
// (the last three go-mysql-server refuses) from the same list, in the
// order the conditions were raised. They leave the diagnostics area as it
// was.

// errorLevel is the Level of an error in SHOW WARNINGS and SHOW ERRORS.
const errorLevel = "Error"

// RememberError adds a failed statement's error to its session's
// diagnostics. err is what the client receives.
func RememberError(sess sql.Session, err *mysql.SQLError) {
	if sess == nil || err == nil {
		return
	}
	sess.Warn(&sql.Warning{Level: errorLevel, Code: err.Num, Message: err.Message})
}

// InterceptDiagnostics turns SHOW WARNINGS|ERRORS and SHOW COUNT(*)
// WARNINGS|ERRORS into a diagnosticsNode.
func InterceptDiagnostics(stmt ast.Statement) (ast.Statement, bool) {
	show, ok := stmt.(*ast.Show)
	if !ok {
		return stmt, false
	}
	kind := strings.ToLower(show.Type)
	if kind != "errors" && kind != "warnings" {
		return stmt, false
	}
	n := &diagnosticsNode{errorsOnly: kind == "errors", count: show.CountStar}
	var children ast.Exprs
	if show.Limit != nil {
		n.limited = true
		children = append(children, show.Limit.Rowcount)
		if show.Limit.Offset != nil {
			children = append(children, show.Limit.Offset)
		}
	}
	return ast.InjectedStatement{Statement: n, Children: children, Auth: show.Auth}, true
}

// diagnosticsNode is SHOW WARNINGS|ERRORS [LIMIT [offset,] n] (errorsOnly
// for ERRORS) or SHOW COUNT(*) WARNINGS|ERRORS (count). It lists the
// conditions in the order they were raised, as MySQL does; go-mysql-server's
// SHOW WARNINGS lists the newest first.
type diagnosticsNode struct {
	errorsOnly, count, limited bool
	limit                      []sql.Expression // row count, then offset
	// conditions are the session's diagnostics when the statement was
	// bound, before go-mysql-server cleared them for this statement.
	conditions []*sql.Warning
}

var (
	_ sql.ExecSourceRel = (*diagnosticsNode)(nil)
	_ ast.Injectable    = (*diagnosticsNode)(nil)
)

// WithResolvedChildren implements ast.Injectable. It runs while the
// statement is bound, when the session still holds the previous
// statement's conditions.
func (n *diagnosticsNode) WithResolvedChildren(ctx context.Context, children []any) (any, error) {
	out := *n
	for _, c := range children {
		e, ok := c.(sql.Expression)
		if !ok {
			return nil, fmt.Errorf("SHOW %s: LIMIT takes numbers", n.kind())
		}
		out.limit = append(out.limit, e)
	}
	if sctx, ok := ctx.(*sql.Context); ok && sctx.Session != nil {
		ws := sctx.Session.Warnings() // the most recent first
		for i := len(ws) - 1; i >= 0; i-- {
			out.conditions = append(out.conditions, ws[i])
		}
	}
	return &out, nil
}

func (n *diagnosticsNode) kind() string {
	switch {
	case n.count && n.errorsOnly:
		return "COUNT(*) ERRORS"
	case n.count:
		return "COUNT(*) WARNINGS"
	case n.errorsOnly:
		return "ERRORS"
	}
	return "WARNINGS"
}

func (n *diagnosticsNode) Resolved() bool       { return true }
func (n *diagnosticsNode) IsReadOnly() bool     { return true }
func (n *diagnosticsNode) String() string       { return "SHOW " + n.kind() }
func (n *diagnosticsNode) Children() []sql.Node { return nil }
func (n *diagnosticsNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *diagnosticsNode) Schema(*sql.Context) sql.Schema {
	switch {
	case n.count && n.errorsOnly:
		return sql.Schema{{Name: "@@session.error_count", Type: types.Int64}}
	case n.count:
		return sql.Schema{{Name: "@@session.warning_count", Type: types.Int64}}
	}
	return sql.Schema{
		{Name: "Level", Type: types.LongText},
		{Name: "Code", Type: types.Int32, Nullable: true},
		{Name: "Message", Type: types.LongText},
	}
}

// RowIter implements sql.ExecSourceRel. It puts the conditions back into
// the session, which go-mysql-server cleared before running the statement:
// a diagnostic statement leaves the diagnostics area as it was.
func (n *diagnosticsNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	var shown []*sql.Warning
	for _, w := range n.conditions {
		ctx.Session.Warn(w)
		if !n.errorsOnly || w.Level == errorLevel {
			shown = append(shown, w)
		}
	}
	ctx.ClearWarningCount() // as for SHOW WARNINGS: the conditions are not this statement's
	if n.count {
		return sql.RowsToRowIter(sql.Row{int64(len(shown))}), nil
	}
	if n.limited {
		count, offset, err := n.limits(ctx)
		if err != nil {
			return nil, err
		}
		shown = shown[min(offset, len(shown)):]
		shown = shown[:min(count, len(shown))]
	}
	rows := make([]sql.Row, len(shown))
	for i, w := range shown {
		rows[i] = sql.Row{w.Level, int32(w.Code), w.Message}
	}
	return sql.RowsToRowIter(rows...), nil
}

// limits evaluates LIMIT's row count and offset.
func (n *diagnosticsNode) limits(ctx *sql.Context) (count, offset int, err error) {
	vals := make([]int, len(n.limit))
	for i, e := range n.limit {
		v, err := e.Eval(ctx, nil)
		if err != nil {
			return 0, 0, err
		}
		i64, _, err := types.Int64.Convert(ctx, v)
		if err != nil || i64 == nil || i64.(int64) < 0 {
			return 0, 0, mysqlerr.New(mysql.ERWrongArguments, "Incorrect arguments to LIMIT of SHOW %s: %v", n.kind(), v)
		}
		vals[i] = int(i64.(int64))
	}
	if len(vals) > 1 {
		offset = vals[1]
	}
	return vals[0], offset, nil
}

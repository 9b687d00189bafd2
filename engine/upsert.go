package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// INSERT ... ON DUPLICATE KEY UPDATE inserts each new row, or, when a row
// of the table has its primary key, updates that row with the
// assignments. Iceberg keeps a primary key as the table's identifier
// fields and enforces nothing, so icesql runs the statement as a MERGE on
// those fields, as it runs REPLACE (replace.go): matched rows take the
// assignments, where VALUES(c), and new.c for the 8.0 form
// INSERT ... VALUES (...) AS new, are the new row's value and a plain c is
// the table's. MySQL applies the new rows one by one, so a row whose key
// an earlier row of the same statement repeats updates the row that one
// inserted or updated: the rows are merged in rounds, the k-th row of each
// key in round k. Affected rows count as MySQL's: 1 per row inserted, 2
// per row updated, 0 for a row the assignments leave as it was. A table
// without a primary key can have no duplicate, so the rows are inserted.

// interceptUpsert turns INSERT ... ON DUPLICATE KEY UPDATE into upsertNode.
func (p parser) interceptUpsert(stmt ast.Statement) (ast.Statement, bool) {
	ins, ok := stmt.(*ast.Insert)
	if !ok || ins.Action == ast.ReplaceStr || len(ins.OnDup) == 0 {
		return stmt, false
	}
	return ast.InjectedStatement{Statement: &upsertNode{e: p.e, ins: ins}, Children: sqlfunc.Placeholders(ins), Auth: ins.Auth}, true
}

type upsertNode struct {
	e   *Engine
	ins *ast.Insert
	// unbound: the statement is being prepared, its ? parameters have no
	// values yet (sqlfunc/arguments.go).
	unbound bool
}

// WithResolvedChildren implements ast.Injectable: the children are the
// values of the statement's ? parameters.
func (n *upsertNode) WithResolvedChildren(_ context.Context, children []any) (any, error) {
	stmt, bound, err := sqlfunc.BindArguments(n.ins, children)
	if err != nil {
		return nil, err
	}
	return &upsertNode{e: n.e, ins: stmt.(*ast.Insert), unbound: !bound}, nil
}

var (
	_ sql.ExecSourceRel = (*upsertNode)(nil)
	_ ast.Injectable    = (*upsertNode)(nil)
)

func (n *upsertNode) Resolved() bool                 { return true }
func (n *upsertNode) IsReadOnly() bool               { return false }
func (n *upsertNode) String() string                 { return ast.String(n.ins) }
func (n *upsertNode) Children() []sql.Node           { return nil }
func (n *upsertNode) Schema(*sql.Context) sql.Schema { return types.OkResultSchema }
func (n *upsertNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

const upsertRound = "__icesql_upsert_round"

// RowIter implements sql.ExecSourceRel: it runs the statement.
func (n *upsertNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	ins := n.ins
	switch {
	case n.unbound:
		return nil, sql.ErrUnboundPreparedStatementVariable.New(ast.String(sqlfunc.Placeholders(ins)[0]))
	case len(ins.Returning) > 0:
		return nil, mysqlerr.NotSupported("INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING is not supported")
	case len(ins.Partitions) > 0:
		return nil, mysqlerr.NotSupported("INSERT ... PARTITION (...) is not supported: Iceberg partitions are not MySQL partitions")
	case ins.With != nil:
		return nil, mysqlerr.NotSupported("WITH ... INSERT ... ON DUPLICATE KEY UPDATE is not supported; put the query after INSERT INTO t")
	}
	dbName := ins.Table.DbQualifier.String()
	if dbName == "" {
		dbName = ctx.GetCurrentDatabase()
	}
	if dbName == "" {
		return nil, sql.ErrNoDatabaseSelected.New()
	}
	t, err := n.e.mergeTarget(ctx, dbName, ins.Table.Name.String())
	if err != nil {
		return nil, err
	}
	keys := identifierColumns(t)
	if len(keys) == 0 {
		// No key, no duplicate: the INSERT alone.
		plain := *ins
		plain.OnDup = nil
		rows, err := n.e.runQuery(ctx, ast.String(&plain))
		if err != nil {
			return nil, err
		}
		return sql.RowsToRowIter(rows...), nil
	}
	// The new rows, numbered, with the round each is merged in.
	alias := ""
	plain := *ins
	if av, ok := ins.Rows.(*ast.AliasedValues); ok {
		if len(av.Columns) > 0 {
			return nil, mysqlerr.NotSupported("INSERT ... VALUES (...) AS alias(columns) is not supported; name the columns in the INSERT's column list")
		}
		alias = av.As.String()
		plain.Rows = av.Values
	}
	cols, err := replaceColumns(&plain, t)
	if err != nil {
		return nil, err
	}
	rows, err := replaceRows(&plain, cols)
	if err != nil {
		return nil, err
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = sqlval.QuoteIdent(c)
	}
	part := make([]string, len(keys))
	for i, k := range keys {
		part[i] = sqlval.QuoteIdent(k)
	}
	rounds := fmt.Sprintf("(SELECT *, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s) AS %s FROM (%s) AS `__icesql_rows`(%s, %s)) AS `__icesql_rounds`",
		strings.Join(part, ", "), replaceOrder, upsertRound, rows, strings.Join(quoted, ", "), replaceOrder)
	count, err := n.e.runQuery(ctx, fmt.Sprintf("SELECT COALESCE(MAX(%s), 0) FROM %s", upsertRound, rounds))
	if err != nil {
		return nil, err
	}
	last, _, err := types.Int64.Convert(ctx, count[0][0])
	if err != nil {
		return nil, err
	}
	given := map[string]bool{}
	for _, c := range cols {
		given[strings.ToLower(c)] = true
	}
	var sel []string
	for _, col := range t.schema {
		if given[strings.ToLower(col.Name)] {
			sel = append(sel, sqlval.QuoteIdent(col.Name))
		} else {
			sel = append(sel, "NULL AS "+sqlval.QuoteIdent(col.Name)) // Iceberg columns have no defaults
		}
	}
	update, err := upsertAssignments(ins, t, alias)
	if err != nil {
		return nil, err
	}
	var eq []string
	for _, k := range keys {
		eq = append(eq, fmt.Sprintf("%s.%s = %s.%s", sqlval.QuoteIdent(replaceTarget), sqlval.QuoteIdent(k), sqlval.QuoteIdent(replaceSource), sqlval.QuoteIdent(k)))
	}
	affected := 0
	for round := int64(1); round <= last.(int64); round++ {
		m := &planner.Merge{
			TargetDB:    dbName,
			Target:      ins.Table.Name.String(),
			TargetAlias: replaceTarget,
			Source:      fmt.Sprintf("(SELECT %s FROM %s WHERE %s = %d)", strings.Join(sel, ", "), rounds, upsertRound, round),
			SourceAlias: replaceSource,
			On:          strings.Join(eq, " AND "),
			Clauses:     []planner.MergeClause{update, {When: planner.WhenNotMatched, Action: planner.MergeInsertStar}},
		}
		q, err := n.e.merge(ctx, m, dbName, t)
		if err != nil {
			return nil, err
		}
		// A row updated counts twice, as in MySQL.
		affected += q.affected + q.matched
		if round < last.(int64) {
			// The next round reads what this one staged.
			if t, err = n.e.mergeTarget(ctx, dbName, ins.Table.Name.String()); err != nil {
				return nil, err
			}
		}
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(affected))), nil
}

// upsertAssignments is the MERGE clause of the statement's assignments:
// WHEN MATCHED, and only when an assignment changes the row (an unchanged
// row is not rewritten, and MySQL counts it as 0 rows affected).
func upsertAssignments(ins *ast.Insert, t *Table, alias string) (planner.MergeClause, error) {
	c := planner.MergeClause{When: planner.WhenMatched, Action: planner.MergeUpdate}
	table := ins.Table.Name.String()
	var err error
	format := func(buf *ast.TrackedBuffer, node ast.SQLNode) {
		switch e := node.(type) {
		case *ast.ValuesFuncExpr:
			buf.WriteString(sqlval.QuoteIdent(replaceSource) + "." + sqlval.QuoteIdent(e.Name.Name.String()))
			return
		case *ast.ColName:
			q := e.Qualifier.Name.String()
			switch {
			case q == "" || strings.EqualFold(q, table):
				buf.WriteString(sqlval.QuoteIdent(replaceTarget) + "." + sqlval.QuoteIdent(e.Name.String()))
			case alias != "" && strings.EqualFold(q, alias):
				buf.WriteString(sqlval.QuoteIdent(replaceSource) + "." + sqlval.QuoteIdent(e.Name.String()))
			default:
				err = mysqlerr.New(mysql.ERBadFieldError, "Unknown column '%s' in 'field list'", ast.String(e))
			}
			return
		case *ast.Subquery:
			err = mysqlerr.NotSupported("a subquery in ON DUPLICATE KEY UPDATE is not supported")
			return
		}
		node.Format(buf)
	}
	var changed []string
	for _, a := range ins.OnDup {
		name := a.Name.Name.String()
		if q := a.Name.Qualifier.Name.String(); q != "" && !strings.EqualFold(q, table) {
			return c, mysqlerr.New(mysql.ERBadFieldError, "Unknown column '%s' in 'field list'", ast.String(a.Name))
		}
		at := t.schema.IndexOfColName(name)
		if at < 0 {
			return c, mysqlerr.New(mysql.ERBadFieldError, "Unknown column '%s' in 'field list'", name)
		}
		buf := ast.NewTrackedBuffer(format)
		buf.Myprintf("%v", a.Expr)
		if err != nil {
			return c, err
		}
		col := t.schema[at].Name
		c.Columns = append(c.Columns, col)
		c.Values = append(c.Values, buf.String())
		changed = append(changed, fmt.Sprintf("%s.%s <=> (%s)", sqlval.QuoteIdent(replaceTarget), sqlval.QuoteIdent(col), buf.String()))
	}
	c.Cond = "NOT (" + strings.Join(changed, " AND ") + ")"
	return c, nil
}

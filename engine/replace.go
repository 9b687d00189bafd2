package engine

import (
	"context"
	"fmt"
	"strconv"
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

// REPLACE INTO is MySQL's insert that first deletes the rows whose primary
// key the new row repeats. Iceberg tables keep a primary key as their
// identifier fields and enforce nothing, so icesql runs REPLACE as a MERGE
// on those fields: a new row whose key a row of the table has replaces that
// row (both counted, as MySQL counts a delete and an insert), any other new
// row is inserted. Among new rows with the same key the last wins, as in
// MySQL. On a table without a primary key REPLACE inserts, as in MySQL.

// interceptReplace turns REPLACE INTO into icesql's replaceNode.
func (p parser) interceptReplace(stmt ast.Statement) (ast.Statement, bool) {
	ins, ok := stmt.(*ast.Insert)
	if !ok || ins.Action != ast.ReplaceStr {
		return stmt, false
	}
	return ast.InjectedStatement{Statement: &replaceNode{e: p.e, ins: ins}, Children: sqlfunc.Placeholders(ins), Auth: ins.Auth}, true
}

type replaceNode struct {
	e   *Engine
	ins *ast.Insert
	// unbound: the statement is being prepared, its ? parameters have no
	// values yet (sqlfunc/arguments.go).
	unbound bool
}

// WithResolvedChildren implements ast.Injectable: the children are the
// values of the statement's ? parameters.
func (n *replaceNode) WithResolvedChildren(_ context.Context, children []any) (any, error) {
	stmt, bound, err := sqlfunc.BindArguments(n.ins, children)
	if err != nil {
		return nil, err
	}
	return &replaceNode{e: n.e, ins: stmt.(*ast.Insert), unbound: !bound}, nil
}

var (
	_ sql.ExecSourceRel = (*replaceNode)(nil)
	_ ast.Injectable    = (*replaceNode)(nil)
)

func (n *replaceNode) Resolved() bool                 { return true }
func (n *replaceNode) IsReadOnly() bool               { return false }
func (n *replaceNode) String() string                 { return ast.String(n.ins) }
func (n *replaceNode) Children() []sql.Node           { return nil }
func (n *replaceNode) Schema(*sql.Context) sql.Schema { return types.OkResultSchema }
func (n *replaceNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// RowIter implements sql.ExecSourceRel: it runs the REPLACE.
func (n *replaceNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	ins := n.ins
	switch {
	case n.unbound:
		return nil, sql.ErrUnboundPreparedStatementVariable.New(ast.String(sqlfunc.Placeholders(ins)[0]))
	case ins.OnDup != nil:
		return nil, mysqlerr.NotSupported("REPLACE ... ON DUPLICATE KEY UPDATE is not valid SQL")
	case len(ins.Returning) > 0:
		return nil, mysqlerr.NotSupported("REPLACE ... RETURNING is not supported")
	case len(ins.Partitions) > 0:
		return nil, mysqlerr.NotSupported("REPLACE ... PARTITION (...) is not supported: Iceberg partitions are not MySQL partitions")
	case ins.With != nil:
		return nil, mysqlerr.NotSupported("WITH ... REPLACE is not supported; put the query after REPLACE INTO t")
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
	m, err := replaceMerge(ins, dbName, t)
	if err != nil {
		return nil, err
	}
	q, err := n.e.merge(ctx, m, dbName, t)
	if err != nil {
		return nil, err
	}
	// MySQL counts a replaced row twice (deleted, inserted), also a new row
	// that a later row of the same statement replaced; the MERGE saw only
	// the last row of each key. A query's rows are counted as merged.
	affected := q.affected + q.matched
	if values, ok := insertValues(ins); ok {
		affected += 2 * (len(values) - q.affected)
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(affected))), nil
}

// insertValues are the rows of an INSERT or REPLACE ... VALUES.
func insertValues(ins *ast.Insert) (ast.Values, bool) {
	switch rows := ins.Rows.(type) {
	case *ast.AliasedValues:
		return rows.Values, rows.As.IsEmpty()
	case ast.Values:
		return rows, true
	}
	return nil, false
}

const (
	replaceTarget = "__icesql_replace_target"
	replaceSource = "__icesql_replace_source"
	replaceOrder  = "__icesql_replace_order"
)

// replaceMerge is the MERGE that does what REPLACE asks of t.
func replaceMerge(ins *ast.Insert, dbName string, t *Table) (*planner.Merge, error) {
	cols, err := replaceColumns(ins, t)
	if err != nil {
		return nil, err
	}
	rows, err := replaceRows(ins, cols)
	if err != nil {
		return nil, err
	}
	keys := identifierColumns(t)
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = sqlval.QuoteIdent(c)
	}
	// The new rows in order, numbered, with the target's column names.
	numbered := fmt.Sprintf("(%s) AS `__icesql_rows`(%s, %s)", rows, strings.Join(quoted, ", "), replaceOrder)
	if len(keys) > 0 {
		// The last new row of each key.
		var part []string
		for _, k := range keys {
			part = append(part, sqlval.QuoteIdent(k))
		}
		numbered = fmt.Sprintf("(SELECT *, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s DESC) AS `__icesql_rank` FROM %s) AS `__icesql_ranked` WHERE `__icesql_rank` = 1",
			strings.Join(part, ", "), replaceOrder, numbered)
	}
	// Columns the statement leaves out are NULL: Iceberg columns have no defaults.
	given := map[string]bool{}
	for _, c := range cols {
		given[strings.ToLower(c)] = true
	}
	var sel []string
	for _, col := range t.schema {
		if given[strings.ToLower(col.Name)] {
			sel = append(sel, sqlval.QuoteIdent(col.Name))
		} else {
			sel = append(sel, "NULL AS "+sqlval.QuoteIdent(col.Name))
		}
	}
	on := "FALSE"
	if len(keys) > 0 {
		var eq []string
		for _, k := range keys {
			eq = append(eq, fmt.Sprintf("%s.%s = %s.%s", sqlval.QuoteIdent(replaceTarget), sqlval.QuoteIdent(k), sqlval.QuoteIdent(replaceSource), sqlval.QuoteIdent(k)))
		}
		on = strings.Join(eq, " AND ")
	}
	return &planner.Merge{
		TargetDB:    dbName,
		Target:      ins.Table.Name.String(),
		TargetAlias: replaceTarget,
		Source:      fmt.Sprintf("(SELECT %s FROM %s)", strings.Join(sel, ", "), numbered),
		SourceAlias: replaceSource,
		On:          on,
		Clauses: []planner.MergeClause{
			{When: planner.WhenMatched, Action: planner.MergeUpdateStar},
			{When: planner.WhenNotMatched, Action: planner.MergeInsertStar},
		},
	}, nil
}

// replaceColumns are the columns REPLACE gives values: its column list, or
// every column of t.
func replaceColumns(ins *ast.Insert, t *Table) ([]string, error) {
	if len(ins.Columns) == 0 {
		cols := make([]string, len(t.schema))
		for i, c := range t.schema {
			cols[i] = c.Name
		}
		return cols, nil
	}
	seen := map[int]bool{}
	cols := make([]string, len(ins.Columns))
	for i, c := range ins.Columns {
		at := t.schema.IndexOfColName(c.String())
		if at < 0 {
			return nil, mysqlerr.New(mysql.ERBadFieldError, "Unknown column '%s' in 'field list'", c.String())
		}
		if seen[at] {
			return nil, mysqlerr.New(mysql.ERFieldSpecifiedTwice, "Column '%s' specified twice", c.String())
		}
		seen[at] = true
		cols[i] = t.schema[at].Name
	}
	return cols, nil
}

// replaceRows is a query giving REPLACE's new rows, each followed by its
// place in the statement.
func replaceRows(ins *ast.Insert, cols []string) (string, error) {
	if rows, ok := insertValues(ins); ok {
		var out []string
		for i, tuple := range rows {
			if len(tuple) != len(cols) {
				return "", mysqlerr.New(mysql.ERWrongValueCountOnRow, "Column count doesn't match value count at row %d", i+1)
			}
			vals := make([]string, len(tuple)+1)
			for j, e := range tuple {
				if _, isDefault := e.(*ast.Default); isDefault {
					vals[j] = "NULL"
					continue
				}
				vals[j] = ast.String(e)
			}
			vals[len(tuple)] = strconv.Itoa(i)
			out = append(out, "ROW("+strings.Join(vals, ", ")+")")
		}
		return "VALUES " + strings.Join(out, ", "), nil
	}
	if rows, ok := ins.Rows.(ast.SelectStatement); ok {
		return fmt.Sprintf("SELECT `__icesql_query`.*, ROW_NUMBER() OVER () FROM (%s) AS `__icesql_query`", ast.String(rows)), nil
	}
	return "", mysqlerr.NotSupported("REPLACE with rows of the form %s is not supported", ast.String(ins.Rows))
}

// identifierColumns are t's primary key columns: its Iceberg identifier fields.
func identifierColumns(t *Table) []string {
	sc := t.tbl.Schema()
	var cols []string
	for _, id := range sc.IdentifierFieldIDs {
		if name, ok := sc.FindColumnName(id); ok {
			cols = append(cols, name)
		}
	}
	return cols
}

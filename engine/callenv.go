package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/ddl"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/procedures"
)

// procedureEnv is what a procedure called in ctx's session runs against.
func (e *Engine) procedureEnv(ctx *sql.Context) procedures.Env {
	return procedures.Env{
		Catalog:     e.catalog,
		CatalogName: e.cfg.CatalogName,
		Database:    ctx.GetCurrentDatabase(),
		RowFilter: func(_ context.Context, ident table.Identifier, where string) (iceberg.BooleanExpression, error) {
			return e.rowFilter(ctx, ident, where)
		},
		SortOrder: func(tbl *table.Table, text string) (table.SortOrder, error) {
			terms, err := planner.ParseSortOrder(text)
			if err != nil {
				return table.SortOrder{}, fmt.Errorf("%w: argument 'sort_order': %v", procedures.ErrArgument, err)
			}
			return ddl.SortOrder(tbl.Schema(), terms, strings.Join(tbl.Identifier(), "."))
		},
		Progress: e.cfg.Log,
		Warn: func(format string, args ...any) {
			ctx.Warn(mysqlerr.ErCantDeleteFile, format, args...)
		},
		Root: e.root,
	}
}

// callArgs evaluates a CALL's arguments and binds them to the procedure's
// parameters. A TIMESTAMP literal is a wall-clock time in the session time
// zone, as Spark reads it; map(...) and array(...) arrive as JSON
// documents (planner.Call) and go on as Go maps and slices.
func (c *callNode) callArgs(ctx *sql.Context, row sql.Row) (procedures.Args, error) {
	wall := func(t time.Time) (time.Time, error) {
		tz, err := function.SessionTimeZone(ctx)
		if err != nil {
			return time.Time{}, err
		}
		return sql.ConvertTimeToLocation(t, tz)
	}
	args := make([]procedures.Arg, len(c.args))
	for i, e := range c.args {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return nil, fmt.Errorf("CALL system.%s: argument %d: %w", c.proc.Name, i+1, err)
		}
		switch x := v.(type) {
		case time.Time:
			if v, err = wall(x); err != nil {
				return nil, err
			}
		case sql.JSONWrapper:
			if v, err = x.ToInterface(ctx); err != nil {
				return nil, fmt.Errorf("CALL system.%s: argument %d: %w", c.proc.Name, i+1, err)
			}
		}
		args[i] = procedures.Arg{Name: c.call.ArgNames[i], Value: v}
	}
	return procedures.BindIn(c.proc, args, wall)
}

// rowFilter turns a SQL predicate over a table's columns, as
// rewrite_data_files' where argument gives it, into an Iceberg row filter
// with the translation WHERE clauses use. Parts that do not translate
// widen the filter (more files qualify), as a pushed WHERE does.
func (e *Engine) rowFilter(ctx *sql.Context, ident table.Identifier, where string) (filter iceberg.BooleanExpression, err error) {
	if len(ident) != 2 {
		return nil, fmt.Errorf("%w: table %v", procedures.ErrArgument, ident)
	}
	db, err := e.provider.Database(ctx, ident[0])
	if err != nil {
		return nil, err
	}
	st, ok, err := db.GetTableInsensitive(ctx, ident[1])
	if err != nil {
		return nil, err
	}
	t, isTable := st.(*Table)
	if !ok || !isTable {
		return nil, sql.ErrTableNotFound.New(strings.Join(ident, "."))
	}
	parsed, err := ast.Parse("SELECT 1 FROM `" + strings.ReplaceAll(ident[0], "`", "``") + "`.`" + strings.ReplaceAll(ident[1], "`", "``") + "` WHERE " + where)
	if err != nil {
		return nil, fmt.Errorf("%w: argument 'where': '%s' is not a SQL predicate: %v", procedures.ErrArgument, where, err)
	}
	sel, ok := parsed.(*ast.Select)
	if !ok || sel.Where == nil || len(sel.From) != 1 {
		return nil, fmt.Errorf("%w: argument 'where': '%s' is not a single SQL predicate", procedures.ErrArgument, where)
	}
	defer func() {
		if r := recover(); r != nil {
			filter, err = nil, fmt.Errorf("%w: argument 'where': %v", procedures.ErrArgument, r)
		}
	}()
	b := planbuilder.New(ctx, e.sqle.Analyzer.Catalog, nil)
	expr := b.BuildScalarWithTable(sel.Where.Expr, sel.From[0])
	pushed := t.translate(ctx, expression.SplitConjunction(ctx, expr))
	if pushed == nil {
		return nil, fmt.Errorf("%w: argument 'where': '%s' has no condition Iceberg can evaluate on the files of %s (comparisons of columns with constants, IN, IS NULL, LIKE 'prefix%%')",
			procedures.ErrArgument, where, strings.Join(ident, "."))
	}
	return pushed.expr, nil
}

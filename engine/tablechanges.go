package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown"
)

// tableChanges is the table function
//
//	table_changes('db.t', start [, end])
//
// which returns the rows inserted and deleted between two snapshots, with
// the columns of Spark's changelog views: the table's columns, then
// _change_type (INSERT or DELETE), _change_ordinal (the commit's position in
// the range, from 0) and _commit_snapshot_id. start is exclusive and end
// inclusive, as Spark's start-snapshot-id and end-snapshot-id: each is a
// snapshot id, or a timestamp meaning the snapshot current at that time (in
// the session time zone). A NULL start, or a timestamp before the first
// snapshot, starts at the table's first snapshot; end defaults to the
// current snapshot.
type tableChanges struct {
	e    *Engine
	db   sql.Database
	args []sql.Expression

	// Set by NewInstance.
	name   string // db.t
	tbl    *table.Table
	schema sql.Schema
}

var (
	_ sql.TableFunction = (*tableChanges)(nil)
	_ sql.ExecSourceRel = (*tableChanges)(nil)
)

// TableFunction implements sql.TableFunctionProvider.
func (p *provider) TableFunction(_ *sql.Context, name string) (sql.TableFunction, bool) {
	if strings.EqualFold(name, "table_changes") {
		return &tableChanges{e: p.e}, true
	}
	return nil, false
}

// WithTableFunctions implements sql.TableFunctionProvider; icesql's table
// functions are fixed.
func (p *provider) WithTableFunctions(...sql.TableFunction) (sql.TableFunctionProvider, error) {
	return p, nil
}

func (t *tableChanges) Name() string { return "table_changes" }
func (t *tableChanges) String() string {
	return fmt.Sprintf("table_changes(%s)", t.name)
}
func (t *tableChanges) Resolved() bool {
	for _, a := range t.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (t *tableChanges) IsReadOnly() bool               { return true }
func (t *tableChanges) Children() []sql.Node           { return nil }
func (t *tableChanges) Schema(*sql.Context) sql.Schema { return t.schema }
func (t *tableChanges) Database() sql.Database         { return t.db }
func (t *tableChanges) Expressions() []sql.Expression  { return t.args }
func (t *tableChanges) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 0)
	}
	return t, nil
}
func (t *tableChanges) WithDatabase(db sql.Database) (sql.Node, error) {
	nt := *t
	nt.db = db
	return &nt, nil
}
func (t *tableChanges) WithExpressions(_ *sql.Context, exprs ...sql.Expression) (sql.Node, error) {
	if len(exprs) != len(t.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(exprs), len(t.args))
	}
	nt := *t
	nt.args = exprs
	return &nt, nil
}

// NewInstance implements sql.TableFunction. It resolves the table now,
// since the result's columns are the table's; the bounds are evaluated when
// the rows are read, so that they may be subqueries or variables.
func (t *tableChanges) NewInstance(ctx *sql.Context, db sql.Database, args []sql.Expression) (sql.Node, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, wrongArguments("table_changes takes 2 or 3 arguments (table, start [, end]), not %d", len(args))
	}
	var name any
	var err error
	if args[0].Resolved() {
		name, err = args[0].Eval(ctx, nil)
	}
	s, ok := name.(string)
	if err != nil || !ok {
		return nil, wrongArguments("table_changes: the first argument must name a table as a string constant, such as 'db.t'")
	}
	nt := &tableChanges{e: t.e, db: db, args: args}
	it, err := nt.resolveTable(ctx, db, s)
	if err != nil {
		return nil, err
	}
	nt.name, nt.tbl = it.db.name+"."+it.name, it.tbl
	for _, c := range it.schema {
		nc := *c
		nc.Source, nc.DatabaseSource = "table_changes", ""
		nt.schema = append(nt.schema, &nc)
	}
	nt.schema = append(nt.schema,
		&sql.Column{Name: "_change_type", Type: types.LongText, Source: "table_changes"},
		&sql.Column{Name: "_change_ordinal", Type: types.Int32, Source: "table_changes"},
		&sql.Column{Name: "_commit_snapshot_id", Type: types.Int64, Source: "table_changes"},
	)
	return nt, nil
}

// resolveTable finds the table a string such as 'db.t', 'icesql.db.t' or
// 't' (in the current database) names.
func (t *tableChanges) resolveTable(ctx *sql.Context, current sql.Database, name string) (*Table, error) {
	parts := strings.Split(name, ".")
	if len(parts) == 3 && strings.EqualFold(parts[0], t.e.cfg.CatalogName) {
		parts = parts[1:]
	}
	var dbName, tableName string
	switch len(parts) {
	case 1:
		if current == nil || current.Name() == "" {
			return nil, sql.ErrNoDatabaseSelected.New()
		}
		dbName, tableName = current.Name(), parts[0]
	case 2:
		dbName, tableName = parts[0], parts[1]
	default:
		return nil, wrongArguments("table_changes: %q is not a table name of the form db.table", name)
	}
	db, err := t.e.provider.Database(ctx, dbName)
	if err != nil {
		return nil, err
	}
	st, ok, err := db.GetTableInsensitive(ctx, tableName)
	if err != nil {
		return nil, err
	}
	if tt, isTemp := st.(*tempTable); isTemp {
		return nil, errTemporaryTable(dbName, tt.Name())
	}
	it, isTable := st.(*Table)
	if !ok || !isTable {
		return nil, sql.ErrTableNotFound.New(name)
	}
	return it, nil
}

// changeRange resolves table_changes' start and optional end.
func changeRange(ctx *sql.Context, tbl *table.Table, name string, bounds []any) (pushdown.ChangeRange, bool, error) {
	var r pushdown.ChangeRange
	current := tbl.CurrentSnapshot()
	if current == nil {
		return r, true, nil
	}
	r.To = current.SnapshotID
	if len(bounds) > 1 && bounds[1] != nil {
		end, found, err := changeBound(ctx, tbl, name, "end", bounds[1])
		if err != nil {
			return r, false, err
		}
		if !found {
			return r, true, nil // nothing was committed by then
		}
		r.To = end
	}
	if bounds[0] != nil {
		start, found, err := changeBound(ctx, tbl, name, "start", bounds[0])
		if err != nil {
			return r, false, err
		}
		if found {
			r.After = &start
		}
	}
	return r, false, nil
}

// changeBound resolves a bound: a snapshot id, or a timestamp in the session
// time zone meaning the snapshot current at that time. found is false for a
// time before the table's first snapshot.
func changeBound(ctx *sql.Context, tbl *table.Table, name, which string, v any) (int64, bool, error) {
	var ts time.Time
	switch v := v.(type) {
	case time.Time:
		ts = v
	case string:
		if id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return snapshotByID(tbl, name, which, id)
		}
		t, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if err != nil {
			return 0, false, wrongArguments("table_changes %s %q: neither a snapshot id nor a timestamp", which, v)
		}
		ts = t.(time.Time)
	default:
		id, err := sqlval.ToInt64(v)
		if err != nil {
			return 0, false, wrongArguments("table_changes %s %v: neither a snapshot id nor a timestamp", which, v)
		}
		return snapshotByID(tbl, name, which, id)
	}
	at, _, err := sessionMillis(ctx, ts)
	if err != nil {
		return 0, false, err
	}
	id, found := pushdown.SnapshotAsOf(tbl, at)
	return id, found, nil
}

func snapshotByID(tbl *table.Table, name, which string, id int64) (int64, bool, error) {
	if tbl.Metadata().SnapshotByID(id) == nil {
		return 0, false, wrongArguments("table_changes %s: table %s has no snapshot %d", which, name, id)
	}
	return id, true, nil
}

// RowIter implements sql.ExecSourceRel.
func (t *tableChanges) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	bounds := make([]any, 0, 2)
	for i, a := range t.args[1:] {
		v, err := a.Eval(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("table_changes argument %d: %w", i+2, err)
		}
		bounds = append(bounds, v)
	}
	rng, empty, err := changeRange(ctx, t.tbl, t.name, bounds)
	if err != nil || empty {
		return sql.RowsToRowIter(), err
	}
	tasks, err := pushdown.PlanChanges(ctx, t.tbl, rng)
	if errors.Is(err, pushdown.ErrNotAncestor) {
		return nil, wrongArguments("table_changes(%s): %v", t.name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("table_changes(%s): %w", t.name, err)
	}
	return &changeRowIter{tbl: t.tbl, tasks: tasks, width: len(t.schema) - 3, zone: sqlval.SessionZone(ctx)}, nil
}

// wrongArguments is MySQL error 1210 (ER_WRONG_ARGUMENTS).
func wrongArguments(format string, args ...any) error {
	return mysqlerr.New(mysql.ERWrongArguments, format, args...)
}

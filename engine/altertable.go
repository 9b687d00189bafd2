package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/storage"
)

// alterStatement replaces the ALTER TABLE statements icesql runs itself:
// the Spark/Iceberg forms the planner injected, and MySQL's column and
// comment changes. go-mysql-server would route the latter to
// sql.AlterableTable one change at a time, back-filling every row through
// an updater when a column gets a DEFAULT or NOT NULL; for Iceberg each is a
// metadata change, and all changes of one statement commit together.
// Other ALTER TABLE forms (RENAME TO, indexes) stay with go-mysql-server.
func (p parser) alterStatement(stmt ast.Statement) (ast.Statement, bool) {
	var name ast.TableName
	var steps []alterStep
	switch s := stmt.(type) {
	case ast.InjectedStatement:
		a, ok := s.Statement.(*planner.AlterTable)
		if !ok {
			return stmt, false
		}
		if ref, ok := a.Action.(*planner.RefDDL); ok {
			return p.refStatement(a.Table, ref), true
		}
		name, steps = a.Table, []alterStep{icebergAlterStep(a.Action)}
	case *ast.AlterTable:
		if len(s.PartitionSpecs) > 0 || len(s.Statements) == 0 {
			return stmt, false
		}
		var others int
		for _, ddl := range s.Statements {
			step := mysqlAlterStep(ddl)
			if step == nil {
				others++
				continue
			}
			steps = append(steps, step)
		}
		switch {
		case len(steps) == 0:
			return stmt, false
		case others > 0:
			steps = []alterStep{func(*alteration) error {
				return mysqlerr.NotSupported("ALTER TABLE %s mixes column changes with other changes; run them as separate statements", s.Table.Name)
			}}
		}
		name = s.Table
	default:
		return stmt, false
	}
	return ast.InjectedStatement{
		Statement: &alterTable{e: p.e, db: name.DbQualifier.String(), table: name.Name.String(), steps: steps},
		Auth: ast.AuthInformation{
			AuthType:    ast.AuthType_ALTER,
			TargetType:  ast.AuthTargetType_SingleTableIdentifier,
			TargetNames: []string{name.DbQualifier.String(), name.Name.String()},
		},
	}, true
}

// alterTable is an ALTER TABLE icesql runs as one Iceberg metadata commit.
type alterTable struct {
	e         *Engine
	db, table string
	steps     []alterStep
}

// alterStep stages one change of an ALTER TABLE on the transaction.
type alterStep func(*alteration) error

// alteration is an ALTER TABLE in progress: the table as loaded for this
// commit attempt and the transaction its changes are staged on.
type alteration struct {
	ctx  *sql.Context
	name string
	base *table.Table
	tx   *table.Transaction
}

var (
	_ sql.ExecSourceRel = (*alterTable)(nil)
	_ ast.Injectable    = (*alterTable)(nil)
)

func (a *alterTable) WithResolvedChildren(context.Context, []any) (any, error) { return a, nil }
func (a *alterTable) Resolved() bool                                           { return true }
func (a *alterTable) IsReadOnly() bool                                         { return false }
func (a *alterTable) String() string                                           { return "ALTER TABLE " + a.table }
func (a *alterTable) Children() []sql.Node                                     { return nil }
func (a *alterTable) Schema(*sql.Context) sql.Schema                           { return types.OkResultSchema }
func (a *alterTable) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 0)
	}
	return a, nil
}

// RowIter runs the change. As in MySQL, DDL first commits the open
// transaction, so files it staged land under the schema and spec they were
// written with.
func (a *alterTable) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	dbName := a.db
	if dbName == "" {
		dbName = ctx.GetCurrentDatabase()
	}
	if dbName == "" {
		return nil, sql.ErrNoDatabaseSelected.New()
	}
	db, err := a.e.provider.Database(ctx, dbName)
	if err != nil {
		return nil, err
	}
	d, ok := db.(*Database)
	if !ok {
		return nil, sql.ErrTableNotFound.New(a.table)
	}
	real, ok, err := d.resolveTable(ctx, a.table)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sql.ErrTableNotFound.New(a.table)
	}
	sess := sessionOf(ctx)
	if err := sess.CommitTransaction(ctx, nil); err != nil {
		return nil, err
	}
	ident := d.ident(real)
	_, err = storage.UpdateTable(ctx, a.e.catalog, ident, func(base *table.Table, tx *table.Transaction) error {
		alt := &alteration{ctx: ctx, name: real, base: base, tx: tx}
		for _, step := range a.steps {
			if err := step(alt); err != nil {
				return err
			}
		}
		return nil
	})
	sess.unpin(ident)
	if err != nil {
		return nil, mysqlerr.CatalogError(err, real)
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

// current is the table with the changes staged so far.
func (alt *alteration) current() (*table.Table, error) {
	st, err := alt.tx.StagedTable()
	if err != nil {
		return nil, fmt.Errorf("alter table %s: %w", alt.name, err)
	}
	return st.Table, nil
}

// hasRows reports whether the table holds any row, which decides whether a
// column may become NOT NULL without reading the data.
func (alt *alteration) hasRows() bool {
	snap := alt.base.CurrentSnapshot()
	if snap == nil || snap.Summary == nil {
		return false
	}
	return snap.Summary.Properties["total-records"] != "0"
}

// field finds a top-level column by name, ignoring case as MySQL does.
func (alt *alteration) field(tbl *table.Table, name string) (iceberg.NestedField, bool) {
	for _, f := range tbl.Schema().Fields() {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

// icebergAlterStep is the step of a Spark/Iceberg ALTER TABLE form.
func icebergAlterStep(action any) alterStep {
	switch a := action.(type) {
	case *planner.AddPartitionField:
		return func(alt *alteration) error { return alt.addPartitionField(a.Term, a.Name) }
	case *planner.DropPartitionField:
		return func(alt *alteration) error { return alt.replacePartitionField(&a.Term, nil, "") }
	case *planner.ReplacePartitionField:
		return func(alt *alteration) error { return alt.replacePartitionField(&a.From, &a.To, a.Name) }
	case *planner.WriteOrder:
		return func(alt *alteration) error { return alt.writeOrder(a) }
	case *planner.SetProperties:
		return func(alt *alteration) error { return alt.setProperties(a.Properties) }
	case *planner.UnsetProperties:
		return func(alt *alteration) error { return alt.unsetProperties(a.Keys, a.IfExists) }
	case *planner.AlterColumn:
		return func(alt *alteration) error { return alt.alterColumn(a) }
	}
	return func(*alteration) error { return fmt.Errorf("alter table: unknown action %T", action) }
}

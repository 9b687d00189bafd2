package engine

import (
	"context"
	"errors"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/storage"
)

// refError gives the errors of branch and tag changes their MySQL codes: a
// name taken is 1050 (as a table's), a ref missing is 1091 (as a missing
// column or key in ALTER TABLE ... DROP), a tag for a branch is 1347, and a
// change Iceberg forbids is 1210.
func refError(err error) error {
	switch {
	case errors.Is(err, storage.ErrRefExists):
		return mysqlerr.New(mysql.ERTableExists, "%s", err.Error())
	case errors.Is(err, storage.ErrNoSuchRef):
		return mysqlerr.New(mysql.ERCantDropFieldOrKey, "%s", err.Error())
	case errors.Is(err, storage.ErrRefKind):
		return mysqlerr.New(mysqlerr.ErWrongObject, "%s", err.Error())
	case errors.Is(err, storage.ErrRefChange):
		return mysqlerr.New(mysql.ERWrongArguments, "%s", err.Error())
	}
	return err
}

// refStatement is the node that runs a branch or tag DDL statement.
func (p parser) refStatement(name ast.TableName, ref *planner.RefDDL) ast.Statement {
	return ast.InjectedStatement{
		Statement: &refDDL{e: p.e, db: name.DbQualifier.String(), table: name.Name.String(), ref: ref},
		Auth: ast.AuthInformation{
			AuthType:    ast.AuthType_ALTER,
			TargetType:  ast.AuthTargetType_SingleTableIdentifier,
			TargetNames: []string{name.DbQualifier.String(), name.Name.String()},
		},
	}
}

// refDDL is ALTER TABLE ... CREATE/REPLACE/DROP BRANCH|TAG: one commit of
// the table's refs, no data written.
type refDDL struct {
	e         *Engine
	db, table string
	ref       *planner.RefDDL
}

var (
	_ sql.ExecSourceRel = (*refDDL)(nil)
	_ ast.Injectable    = (*refDDL)(nil)
)

func (r *refDDL) WithResolvedChildren(context.Context, []any) (any, error) { return r, nil }
func (r *refDDL) Resolved() bool                                           { return true }
func (r *refDDL) IsReadOnly() bool                                         { return false }
func (r *refDDL) String() string {
	return "ALTER TABLE " + r.table + " " + r.ref.Kind() + " " + r.ref.Name
}
func (r *refDDL) Children() []sql.Node           { return nil }
func (r *refDDL) Schema(*sql.Context) sql.Schema { return types.OkResultSchema }
func (r *refDDL) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 0)
	}
	return r, nil
}

// RowIter implements sql.ExecSourceRel.
func (r *refDDL) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	d, real, err := r.e.alterTarget(ctx, r.db, r.table)
	if err != nil {
		return nil, err
	}
	ident := d.ident(real)
	typ := table.BranchRef
	if r.ref.Tag {
		typ = table.TagRef
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	// DDL commits the open transaction first, as in MySQL.
	if err := sessionOf(ctx).CommitTransaction(ctx, nil); err != nil {
		return nil, err
	}
	if r.ref.Drop {
		err = storage.DropRef(ctx, r.e.catalog, ident, r.ref.Name, typ, r.ref.IfExists)
	} else {
		err = storage.ChangeRef(ctx, r.e.catalog, ident, storage.RefChange{
			Name: r.ref.Name, Type: typ, Create: r.ref.Create, Replace: r.ref.Replace,
			IfNotExists: r.ref.IfNotExists, SnapshotID: r.ref.SnapshotID,
			Retention: storage.RefRetention{
				MaxRefAgeMs:        r.ref.MaxRefAgeMs,
				MaxSnapshotAgeMs:   r.ref.MaxSnapshotAgeMs,
				MinSnapshotsToKeep: r.ref.MinSnapshotsToKeep,
			},
		})
	}
	sessionOf(ctx).unpin(ident)
	if err != nil {
		return nil, refError(mysqlerr.CatalogError(err, real))
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

// validate refuses retention values Iceberg does not allow, before anything
// is committed.
func (r *refDDL) validate() error {
	bad := func(what string) error {
		return mysqlerr.New(mysql.ERWrongArguments,
			"%s %s: %s must be greater than 0", r.ref.Kind(), r.ref.Name, what)
	}
	switch {
	case r.ref.MaxRefAgeMs != nil && *r.ref.MaxRefAgeMs <= 0:
		return bad("RETAIN")
	case r.ref.MaxSnapshotAgeMs != nil && *r.ref.MaxSnapshotAgeMs <= 0:
		return bad("the snapshot retention age")
	case r.ref.MinSnapshotsToKeep != nil && *r.ref.MinSnapshotsToKeep <= 0:
		return bad("the number of snapshots to keep")
	}
	return nil
}

// alterTarget finds the table an ALTER TABLE names (db may be empty: the
// current database).
func (e *Engine) alterTarget(ctx *sql.Context, db, name string) (*Database, string, error) {
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if db == "" {
		return nil, "", sql.ErrNoDatabaseSelected.New()
	}
	sdb, err := e.provider.Database(ctx, db)
	if err != nil {
		return nil, "", err
	}
	d, ok := sdb.(*Database)
	if !ok {
		return nil, "", sql.ErrTableNotFound.New(name)
	}
	real, ok, err := d.resolveTable(ctx, name)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", sql.ErrTableNotFound.New(name)
	}
	return d, real, nil
}

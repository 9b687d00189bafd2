package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// Views are Iceberg views: CREATE VIEW stores the SELECT text as the view's
// SQL representation, with the view's columns as its schema; every
// statement naming the view has go-mysql-server parse and plan it again, as
// MySQL does. The embedded catalog stores them (storage/views.go).

// viewCatalog is what a catalog needs for views. The embedded catalog has
// it; for the others iceberg-go v0.7.0 offers no way to replace a view in
// one step, so views there are refused rather than replaced non-atomically.
type viewCatalog interface {
	RenameView(ctx context.Context, from, to table.Identifier) (*view.View, error)
	LoadView(ctx context.Context, ident table.Identifier) (*view.View, error)
	CreateView(ctx context.Context, ident table.Identifier, version *view.Version, schema *iceberg.Schema, opts ...catalog.CreateViewOpt) (*view.View, error)
	ReplaceView(ctx context.Context, ident table.Identifier, version *view.Version, schema *iceberg.Schema) (*view.View, error)
	DropView(ctx context.Context, ident table.Identifier) error
	ListViews(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error]
}

// viewDialect names the SQL of icesql's views. It is neither Spark's nor
// MySQL's: the syntax is the one icesql parses, the meaning MySQL's (integer
// division, collations), so other engines must not take it for their own.
// Views another engine wrote in Spark SQL are read as icesql SQL.
const viewDialect = "icesql"

var readableDialects = []string{viewDialect, "spark"}

// pendingView is what the analyzer saw of a statement that
// Database.CreateView, given only text, needs: for CREATE VIEW the view's
// columns, and whether it replaces an existing view; for RENAME TABLE the
// view's old name. go-mysql-server replaces and renames a view by DropView
// then CreateView; icesql skips that DropView and does either in one commit.
type pendingView struct {
	schema     sql.Schema
	replace    bool
	renameFrom string
}

// viewStatements is an analyzer rule for the statements go-mysql-server
// runs on views in more than one step. It keeps, for Database.CreateView,
// what CREATE VIEW says beyond the text it is given (RENAME TABLE: rename.go), and it
// fails DROP TABLE of a view and DROP VIEW of a missing view before anything
// is dropped, as MySQL does (go-mysql-server skips the view silently, or
// drops the views listed before the missing one).
func viewStatements(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	switch n := n.(type) {
	case *plan.DropTable:
		for _, t := range n.Tables {
			if sa, ok := t.(*plan.SubqueryAlias); ok { // a view: tables resolve to ResolvedTable
				return nil, transform.SameTree, mysqlerr.New(mysql.ERBadTable,
					"Unknown table '%s': it is a view; DROP VIEW drops it", sa.Name())
			}
		}
	case *plan.DropView:
		if err := checkViewsExist(ctx, n); err != nil {
			return nil, transform.SameTree, err
		}
	case *plan.CreateView:
		if strings.Contains(n.CreateViewString, planner.AlterViewMarker) {
			if err := checkViewExists(ctx, n.Database(), n.Name); err != nil {
				if sql.ErrViewDoesNotExist.Is(err) {
					err = sql.ErrTableNotFound.New(n.Name) // MySQL's answer to ALTER VIEW of a missing view
				}
				return nil, transform.SameTree, err
			}
		}
		if n.Definition != nil {
			sessionOf(ctx).rememberView(ctx, n.Name, pendingView{schema: viewColumns(ctx, n.Definition), replace: n.IsReplace})
		}
	}
	return n, transform.SameTree, nil
}

// checkViewsExist fails a DROP VIEW (without IF EXISTS) naming a view that
// does not exist, before any view is dropped.
func checkViewsExist(ctx *sql.Context, n *plan.DropView) error {
	if n.IfExists {
		return nil
	}
	for _, c := range n.Children() {
		drop, ok := c.(*plan.SingleDropView)
		if !ok {
			continue
		}
		if err := checkViewExists(ctx, drop.Database(), drop.ViewName); err != nil {
			return err
		}
	}
	return nil
}

// checkViewExists fails when db has no view of that name.
func checkViewExists(ctx *sql.Context, db sql.Database, name string) error {
	vdb, ok := db.(sql.ViewDatabase)
	if !ok {
		return nil
	}
	if _, found, err := vdb.GetViewDefinition(ctx, name); err != nil {
		return err
	} else if !found {
		return sql.ErrViewDoesNotExist.New(db.Name(), name)
	}
	return nil
}

// errViewNotUpdatable is MySQL's 1288 (ER_NON_UPDATABLE_TABLE) for UPDATE,
// DELETE and MERGE into a view.
func errViewNotUpdatable(name string) error {
	return mysqlerr.New(mysql.ERNonUpdateableTable,
		"The target table %s of the UPDATE, DELETE or MERGE is not updatable: icesql views are read-only; change the tables the view reads", name)
}

// viewColumns are the columns a view shows. go-mysql-server lower-cases the
// names it takes from the SELECT list; MySQL keeps them as written, so the
// names come from the SELECT unless a column list renamed them.
func viewColumns(ctx *sql.Context, def *plan.SubqueryAlias) sql.Schema {
	outer := def.Schema(ctx)
	inner := def.Child.Schema(ctx)
	cols := make(sql.Schema, len(outer))
	for i, c := range outer {
		col := *c
		if i < len(inner) && c.Name == strings.ToLower(inner[i].Name) {
			col.Name = inner[i].Name
		}
		cols[i] = &col
	}
	return cols
}

func (d *Database) views() (viewCatalog, bool) {
	vc, ok := d.e.catalog.(viewCatalog)
	return vc, ok
}

// CreateView implements sql.ViewDatabase.
func (d *Database) CreateView(ctx *sql.Context, name, selectStatement, _ string) error {
	defer forgetCatalogReads(ctx)
	vc, ok := d.views()
	if !ok {
		return mysqlerr.NotSupported("views are stored by icesql's embedded catalog only; the %s catalog cannot hold view %s", d.e.catalog.CatalogType(), name)
	}
	pending, ok := sessionOf(ctx).takeView(ctx, name)
	if !ok {
		return fmt.Errorf("create view %s: its columns were not captured", name)
	}
	if pending.renameFrom != "" {
		_, err := vc.RenameView(ctx, d.ident(pending.renameFrom), d.ident(name))
		return viewError(err, d.name, name)
	}
	schema := viewSchema(pending.schema)
	version, err := view.NewVersion(1, schema.ID,
		view.Representations{view.NewRepresentation(selectStatement, viewDialect)},
		table.Identifier{d.name},
		view.WithDefaultViewCatalog(d.e.cfg.CatalogName),
		view.WithVersionSummary(view.VersionSummary{"engine-name": "icesql"}))
	if err != nil {
		return fmt.Errorf("create view %s: %w", name, err)
	}
	if pending.replace {
		_, err = vc.ReplaceView(ctx, d.ident(name), version, schema)
		if !errors.Is(err, catalog.ErrNoSuchView) {
			return viewError(err, d.name, name)
		}
	}
	_, err = vc.CreateView(ctx, d.ident(name), version, schema)
	return viewError(err, d.name, name)
}

// viewSchema is the Iceberg schema of a view's columns. A column whose type
// Iceberg cannot store (an unsigned or NULL-typed expression) is described
// as a string: the schema documents the view, and icesql itself plans the
// view's SQL again each time.
func viewSchema(cols sql.Schema) *iceberg.Schema {
	fields := make([]iceberg.NestedField, len(cols))
	for i, c := range cols {
		typ, err := sqlval.IcebergType(c)
		if err != nil {
			typ = iceberg.PrimitiveTypes.String
		}
		fields[i] = iceberg.NestedField{ID: i + 1, Name: c.Name, Type: typ, Required: !c.Nullable}
	}
	return iceberg.NewSchema(0, fields...)
}

func viewError(err error, db, name string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, catalog.ErrViewAlreadyExists):
		return sql.ErrExistingView.New(db, name)
	case errors.Is(err, catalog.ErrNoSuchView):
		return sql.ErrViewDoesNotExist.New(db, name)
	case errors.Is(err, catalog.ErrTableAlreadyExists):
		return sql.ErrTableAlreadyExists.New(name)
	case errors.Is(err, table.ErrCommitFailed):
		return mysqlerr.Conflict("view %s.%s changed while this statement ran: %v", db, name, err)
	}
	return mysqlerr.CatalogError(err, name)
}

// DropView implements sql.ViewDatabase. In CREATE OR REPLACE VIEW it does
// nothing: CreateView replaces the view in one commit.
func (d *Database) DropView(ctx *sql.Context, name string) error {
	defer forgetCatalogReads(ctx)
	vc, ok := d.views()
	if !ok {
		return sql.ErrViewDoesNotExist.New(d.name, name)
	}
	if sessionOf(ctx).keepsView(ctx, name) {
		return nil
	}
	return viewError(filesLeft(ctx, vc.DropView(ctx, d.ident(name))), d.name, name)
}

// loadViewDefinition reads a view from the catalog. go-mysql-server asks
// for a view before every table a statement names; GetViewDefinition
// (viewcache.go) calls this only for names that are views.
func (d *Database) loadViewDefinition(ctx *sql.Context, vc viewCatalog, name string) (sql.ViewDefinition, bool, error) {
	v, err := vc.LoadView(ctx, d.ident(name))
	if errors.Is(err, catalog.ErrNoSuchView) {
		return sql.ViewDefinition{}, false, nil
	}
	if err != nil {
		return sql.ViewDefinition{}, false, mysqlerr.CatalogError(err, name)
	}
	def, err := viewDefinition(v)
	return def, err == nil, err
}

// viewDefinition turns an Iceberg view into the CREATE VIEW statement
// go-mysql-server plans; the column list gives the columns their names.
// Names through the view's default catalog (Spark's catalog name, when
// Spark created the view) lose that part, as names through icesql's own do.
func viewDefinition(v *view.View) (sql.ViewDefinition, error) {
	name := v.Identifier()[len(v.Identifier())-1]
	text, err := viewSQL(v)
	if err != nil {
		return sql.ViewDefinition{}, err
	}
	text = planner.WithoutCatalog(text, v.CurrentVersion().DefaultCatalog)
	var b strings.Builder
	b.WriteString("CREATE VIEW ")
	b.WriteString(sqlval.QuoteIdent(name))
	if sc := v.CurrentSchema(); sc != nil && sc.NumFields() > 0 {
		b.WriteString(" (")
		for i, f := range sc.Fields() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(sqlval.QuoteIdent(f.Name))
		}
		b.WriteString(")")
	}
	b.WriteString(" AS ")
	b.WriteString(text)
	return sql.ViewDefinition{Name: name, TextDefinition: text, CreateViewStatement: b.String()}, nil
}

// viewSQL picks the representation icesql reads: its own, else Spark's.
func viewSQL(v *view.View) (string, error) {
	cur := v.CurrentVersion()
	if cur == nil {
		return "", fmt.Errorf("view %s has no current version", strings.Join(v.Identifier(), "."))
	}
	var dialects []string
	for _, want := range readableDialects {
		for _, r := range cur.Representations {
			if strings.EqualFold(r.Dialect, want) {
				return r.Sql, nil
			}
		}
	}
	for _, r := range cur.Representations {
		dialects = append(dialects, r.Dialect)
	}
	return "", mysqlerr.NotSupported("view %s has SQL in dialects %s only; icesql reads %s",
		strings.Join(v.Identifier(), "."), strings.Join(dialects, ", "), strings.Join(readableDialects, " or "))
}

// AllViews implements sql.ViewDatabase (information_schema.VIEWS, SHOW FULL
// TABLES).
func (d *Database) AllViews(ctx *sql.Context) ([]sql.ViewDefinition, error) {
	vc, ok := d.views()
	if !ok {
		return nil, nil
	}
	var defs []sql.ViewDefinition
	for id, err := range vc.ListViews(ctx, table.Identifier{d.name}) {
		if err != nil {
			return nil, mysqlerr.CatalogError(err, d.name)
		}
		v, err := vc.LoadView(ctx, id)
		if errors.Is(err, catalog.ErrNoSuchView) {
			continue // dropped meanwhile
		}
		if err != nil {
			return nil, mysqlerr.CatalogError(err, id[len(id)-1])
		}
		if def, err := viewDefinition(v); err == nil {
			defs = append(defs, def) // a view in SQL icesql cannot read is left out
		}
	}
	return defs, nil
}

// qualifyCreateView gives CREATE VIEW db.v the database its name names:
// go-mysql-server takes the view's database from the DDL's table, which the
// parser leaves empty for a view, and so refused CREATE VIEW d.v AS ... with
// "no database selected" when no database was current. Names in the view's
// SELECT still resolve as MySQL's do (unqualified ones in the current
// database).
func qualifyCreateView(stmt ast.Statement) {
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ViewSpec == nil || ddl.Table.DbQualifier.String() != "" {
		return
	}
	if ddl.Table.Name.String() == "" || strings.EqualFold(ddl.Table.Name.String(), ddl.ViewSpec.ViewName.Name.String()) {
		ddl.Table = ddl.ViewSpec.ViewName
	}
}

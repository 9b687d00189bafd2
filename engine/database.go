package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/ddl"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/storage"
)

// Database is one catalog namespace seen as a MySQL database.
type Database struct {
	e    *Engine
	name string
}

var (
	_ sql.Database                = (*Database)(nil)
	_ sql.TableCreator            = (*Database)(nil)
	_ sql.TableDropper            = (*Database)(nil)
	_ sql.TableRenamer            = (*Database)(nil)
	_ sql.TemporaryTableCreator   = (*Database)(nil)
	_ sql.ViewDatabase            = (*Database)(nil)
	_ sql.TriggerDatabase         = (*Database)(nil)
	_ sql.StoredProcedureDatabase = (*Database)(nil)
	_ sql.CollatedDatabase        = (*Database)(nil)
)

// Name implements sql.Nameable.
func (d *Database) Name() string { return d.name }

func (d *Database) ident(name string) table.Identifier { return table.Identifier{d.name, name} }

// tableNames lists the namespace's tables.
func (d *Database) tableNames(ctx *sql.Context) ([]string, error) {
	var names []string
	for id, err := range d.e.catalog.ListTables(ctx, table.Identifier{d.name}) {
		if err != nil {
			return nil, mysqlerr.CatalogError(err, d.name)
		}
		names = append(names, id[len(id)-1])
	}
	return names, nil
}

// resolveTable finds the Iceberg table a name means: the exact name, else
// the one equal ignoring case, as MySQL clients expect. A temporary table
// of that name hides it, and is no Iceberg table: 1235. The exact name is checked
// first because listing a namespace costs a listing per table.
func (d *Database) resolveTable(ctx *sql.Context, name string) (string, bool, error) {
	if err := d.refuseTemporary(ctx, name); err != nil {
		return "", false, err
	}
	if ok, err := d.e.catalog.CheckTableExists(ctx, d.ident(name)); err != nil || ok {
		return name, ok, err
	}
	return d.tableInOtherCase(ctx, name)
}

// tableInOtherCase finds the table whose name equals name ignoring case,
// name itself being none.
func (d *Database) tableInOtherCase(ctx *sql.Context, name string) (string, bool, error) {
	names, err := d.tableNames(ctx)
	if err != nil {
		return "", false, err
	}
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return n, true, nil
		}
	}
	return "", false, nil
}

// GetTableNames implements sql.Database.
func (d *Database) GetTableNames(ctx *sql.Context) ([]string, error) { return d.tableNames(ctx) }

// GetTableInsensitive implements sql.Database. The table is read at the
// snapshot the session pinned for the current statement.
func (d *Database) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	if base, o, ok, err := planner.OverwriteTarget(name); ok || err != nil {
		if err != nil {
			return nil, false, err
		}
		return d.overwriteTarget(ctx, base, o)
	}
	if t, ok := sessionOf(ctx).tempTableNamed(d.name, name); ok { // temptables.go
		return t, true, nil
	}
	if base, ok := strings.CutPrefix(name, rowIdentityPrefix); ok {
		if t, ok := sessionOf(ctx).tempTableNamed(d.name, base); ok {
			return t, true, nil // UPDATE and DELETE of a temporary table need no row identity
		}
		return d.rowIdentityTable(ctx, base)
	}
	// A table named in its own case is loaded (and pinned for the
	// statement) at once: resolving its name first read its link, and
	// the hidden mark of a table without one, a second time.
	real := name
	tbl, err := sessionOf(ctx).pinnedTable(ctx, d.e.catalog, d.ident(name))
	if err != nil {
		resolve := d.resolveTable
		if errors.Is(err, catalog.ErrNoSuchTable) {
			resolve = d.tableInOtherCase
		}
		var ok bool
		if real, ok, err = resolve(ctx, name); err != nil {
			return nil, false, err
		}
		if !ok {
			if t, ok, err := d.refTable(ctx, name); ok || err != nil {
				return t, ok, err
			}
			return d.metadataTable(ctx, name)
		}
		if tbl, err = sessionOf(ctx).pinnedTable(ctx, d.e.catalog, d.ident(real)); err != nil {
			if errors.Is(err, catalog.ErrNoSuchTable) {
				return nil, false, nil
			}
			return nil, false, err
		}
	}
	t := d.sessionTable(ctx, real, tbl)
	t.changes = sessionOf(ctx).stagedChanges(d.ident(real), writeTarget{branch: t.branch})
	sessionOf(ctx).noteScan(ctx, t) // scanmetrics.go
	return d.statementTable(ctx, t), true, nil
}

// CreateTable implements sql.TableCreator. The table comment carries the
// Spark clauses (TBLPROPERTIES, COMMENT, ...) that the planner moved there.
func (d *Database) CreateTable(ctx *sql.Context, name string, schema sql.PrimaryKeySchema, _ sql.CollationID, comment string) error {
	if comment == "" {
		comment = sessionOf(ctx).createComment(ctx, name)
	}
	opts, err := planner.DecodeTableOptions(comment)
	if err != nil {
		return err
	}
	if opts.Replace != "" {
		if done, err := d.replaceTable(ctx, name, schema, opts); done || err != nil {
			return err
		}
	}
	var createOpts []catalog.CreateTableOpt
	if opts.Location != "" {
		if _, ok := d.e.embedded(); ok {
			return mysqlerr.NotSupported("LOCATION is not supported: the embedded catalog places each table in its namespace folder")
		}
		createOpts = append(createOpts, catalog.WithLocation(opts.Location))
	}
	sc, err := icebergSchema(schema)
	if err != nil {
		return err
	}
	props := sqlval.DeclaredTypeProperties(sc, schema.Schema)
	for k, v := range opts.Properties {
		props[k] = v
	}
	if opts.Comment != "" {
		props["comment"] = opts.Comment
	}
	ddl.WarnForeignKeys(ctx, name, opts.Properties)
	ddl.DefaultTableProperties(props)
	if err := validateProperties(props); err != nil {
		return err
	}
	createOpts = append(createOpts, catalog.WithProperties(props))
	if len(opts.PartitionBy) > 0 {
		spec, err := ddl.PartitionSpec(sc, opts.PartitionBy, name)
		if err != nil {
			return err
		}
		createOpts = append(createOpts, catalog.WithPartitionSpec(spec))
	}
	if len(opts.WriteOrderedBy) > 0 {
		order, err := ddl.ParsedSortOrder(sc, opts.WriteOrderedBy, name)
		if err != nil {
			return err
		}
		createOpts = append(createOpts, catalog.WithSortOrder(order))
	}
	if _, err := d.e.catalog.CreateTable(ctx, d.ident(name), sc, createOpts...); err != nil {
		return mysqlerr.CatalogError(err, name)
	}
	sessionOf(ctx).createdInStatement(ctx, d.ident(name))
	return nil
}

// icebergSchema builds the Iceberg schema of a CREATE TABLE column list.
// Primary key columns become Iceberg identifier fields, in key order;
// Iceberg does not enforce their uniqueness, and neither does icesql.
func icebergSchema(schema sql.PrimaryKeySchema) (*iceberg.Schema, error) {
	fields := make([]iceberg.NestedField, 0, len(schema.Schema))
	keys := schema.PkOrdinals
	if len(keys) == 0 {
		keys = sql.NewPrimaryKeySchema(schema.Schema).PkOrdinals
	}
	ids := make([]int, 0, len(keys))
	for _, i := range keys {
		ids = append(ids, i+1)
	}
	for i, col := range schema.Schema {
		typ, err := sqlval.IcebergType(col)
		if err != nil {
			return nil, err
		}
		if col.AutoIncrement {
			return nil, mysqlerr.NotSupported("column %s: AUTO_INCREMENT is not supported by Iceberg tables", col.Name)
		}
		if col.Generated != nil {
			return nil, mysqlerr.NotSupported("column %s: generated columns are not supported by Iceberg tables", col.Name)
		}
		if col.Default != nil && !isNullDefault(col.Default) {
			return nil, mysqlerr.NotSupported("column %s: DEFAULT values are not supported yet; omit the DEFAULT clause", col.Name)
		}
		id := i + 1
		fields = append(fields, iceberg.NestedField{
			ID: id, Name: col.Name, Type: typ, Required: !col.Nullable, Doc: col.Comment,
		})
	}
	return iceberg.NewSchemaWithIdentifiers(0, ids, fields...), nil
}

func isNullDefault(def *sql.ColumnDefaultValue) bool {
	return def.Expr == nil || strings.EqualFold(def.String(), "NULL")
}

// validateProperties checks the table properties whose values icesql
// interprets, so a typo fails at CREATE TABLE rather than at the first write.
func validateProperties(props iceberg.Properties) error {
	ints := map[string]func(int) bool{
		"format-version":                       func(v int) bool { return v >= 1 && v <= 3 },
		"write.metadata.previous-versions-max": func(v int) bool { return v >= 1 },
		"write.target-file-size-bytes":         func(v int) bool { return v > 0 },
	}
	for key, ok := range ints {
		s, present := props[key]
		if !present {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || !ok(v) {
			return sql.ErrInvalidArgument.New(fmt.Sprintf("table property %s=%q: not a valid value", key, s))
		}
	}
	if s, present := props["write.metadata.delete-after-commit.enabled"]; present {
		if _, err := strconv.ParseBool(s); err != nil {
			return sql.ErrInvalidArgument.New(fmt.Sprintf("table property write.metadata.delete-after-commit.enabled=%q: want true or false", s))
		}
	}
	if s, present := props["write.metadata.compression-codec"]; present {
		switch strings.ToLower(s) {
		case "gzip", "none":
		default:
			return sql.ErrInvalidArgument.New(fmt.Sprintf("table property write.metadata.compression-codec=%q: want gzip or none", s))
		}
	}
	if s, present := props["write.parquet.compression-codec"]; present {
		switch strings.ToLower(s) {
		case "zstd", "snappy", "gzip", "lz4", "brotli", "uncompressed", "none":
		default:
			return sql.ErrInvalidArgument.New(fmt.Sprintf("table property write.parquet.compression-codec=%q: want zstd, snappy, gzip, lz4, brotli or uncompressed", s))
		}
	}
	return nil
}

// DropTable implements sql.TableDropper.
func (d *Database) DropTable(ctx *sql.Context, name string) error {
	if sessionOf(ctx).dropTempTable(d.name, name) { // DROP TABLE drops a temporary table first, as in MySQL
		return nil
	}
	real, ok, err := d.resolveTable(ctx, name)
	if err != nil {
		return err
	}
	if !ok {
		return sql.ErrTableNotFound.New(name)
	}
	return mysqlerr.CatalogError(filesLeft(ctx, d.e.catalog.DropTable(ctx, d.ident(real))), name)
}

// filesLeft turns storage.ErrFilesLeft, a drop that took effect but could
// not delete every file, into a warning on a statement that succeeded.
func filesLeft(ctx *sql.Context, err error) error {
	if errors.Is(err, storage.ErrFilesLeft) {
		ctx.Warn(mysqlerr.ErCantDeleteFile, "%v", err)
		return nil
	}
	return err
}

// RenameTable implements sql.TableRenamer (RENAME TABLE, ALTER TABLE ... RENAME TO).
func (d *Database) RenameTable(ctx *sql.Context, oldName, newName string) error {
	if temp, err := sessionOf(ctx).renameTempTable(d.name, oldName, newName); temp || err != nil {
		return err
	}
	real, ok, err := d.resolveTable(ctx, oldName)
	if err != nil {
		return err
	}
	if !ok {
		return sql.ErrTableNotFound.New(oldName)
	}
	if d.e.catalog.CatalogType() == catalog.Hadoop {
		return d.e.unsupportedByCatalog("RENAME TABLE")
	}
	// REST and Glue report a taken name in their own words, not as
	// catalog.ErrTableAlreadyExists; MySQL's answer is 1050.
	if _, taken, err := d.resolveTable(ctx, newName); err != nil {
		return err
	} else if taken && !strings.EqualFold(newName, real) {
		return sql.ErrTableAlreadyExists.New(newName)
	}
	_, err = d.e.catalog.RenameTable(ctx, d.ident(real), d.ident(newName))
	return mysqlerr.CatalogError(err, newName)
}

// Iceberg namespaces hold no triggers or stored procedures. The interfaces
// below answer "none" for reads (information_schema and SHOW ask for them,
// and go-mysql-server's privilege layer requires them once users exist) and
// a clear error for attempts to create one. Views are in views.go.

func (d *Database) GetTriggers(*sql.Context) ([]sql.TriggerDefinition, error) { return nil, nil }
func (d *Database) CreateTrigger(*sql.Context, sql.TriggerDefinition) error {
	return mysqlerr.NotSupported("triggers are not supported on Iceberg tables")
}
func (d *Database) DropTrigger(_ *sql.Context, name string) error {
	return sql.ErrTriggerDoesNotExist.New(name)
}

func (d *Database) GetStoredProcedure(*sql.Context, string) (sql.StoredProcedureDetails, bool, error) {
	return sql.StoredProcedureDetails{}, false, nil
}
func (d *Database) GetStoredProcedures(*sql.Context) ([]sql.StoredProcedureDetails, error) {
	return nil, nil
}
func (d *Database) SaveStoredProcedure(*sql.Context, sql.StoredProcedureDetails) error {
	return mysqlerr.NotSupported("stored procedures are not supported; icesql's procedures are CALL system.*")
}
func (d *Database) DropStoredProcedure(_ *sql.Context, name string) error {
	return sql.ErrStoredProcedureDoesNotExist.New(name)
}

// GetCollation implements sql.CollatedDatabase: Iceberg strings are UTF-8
// and compare by bytes.
func (d *Database) GetCollation(*sql.Context) sql.CollationID { return sql.Collation_Default }

// SetCollation implements sql.CollatedDatabase; CREATE DATABASE sets the
// default, and only the default can be honoured.
func (d *Database) SetCollation(_ *sql.Context, collation sql.CollationID) error {
	if collation == sql.Collation_Default || collation == sql.Collation_Unspecified {
		return nil
	}
	return mysqlerr.NotSupported("collation %s: Iceberg strings are UTF-8 compared byte by byte (%s)", collation, sql.Collation_Default)
}

package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
)

// provider presents the catalog's namespaces as MySQL databases.
type provider struct {
	e *Engine
}

var (
	_ sql.DatabaseProvider        = (*provider)(nil)
	_ sql.MutableDatabaseProvider = (*provider)(nil)
)

func newProvider(e *Engine) *provider { return &provider{e: e} }

// namespaces lists the catalog's namespaces, once per statement
// (viewcache.go).
func (p *provider) namespaces(ctx *sql.Context) ([]string, error) {
	list := func() ([]string, error) {
		ids, err := p.e.catalog.ListNamespaces(ctx, nil)
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(ids))
		for _, id := range ids {
			out = append(out, strings.Join(id, "."))
		}
		return out, nil
	}
	if sv := statementReadsOf(ctx); sv != nil {
		return sv.namespaces(ctx, list)
	}
	return list()
}

// resolve finds the namespace a database name means: the exact name, else
// the only one equal ignoring case (MySQL clients often change case).
func (p *provider) resolve(ctx *sql.Context, name string) (string, bool, error) {
	names, err := p.namespaces(ctx)
	if err != nil {
		return "", false, err
	}
	found := ""
	for _, n := range names {
		if n == name {
			return n, true, nil
		}
		if strings.EqualFold(n, name) {
			found = n
		}
	}
	return found, found != "", nil
}

// mysqlSchema is MySQL's schema of accounts and grants (mysql.user, db,
// tables_priv, ...): go-mysql-server's privilege tables. go-mysql-server
// resolves it itself while its privilege system is on; the provider
// serves the same tables while it is off (a loopback server whose
// warehouse has no accounts), so the schema is always there, as in MySQL.
// go-mysql-server lists it in SHOW DATABASES itself whenever it resolves,
// so AllDatabases leaves it out, in both cases.
const mysqlSchema = "mysql"

// Database implements sql.DatabaseProvider.
func (p *provider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	ns, ok, err := p.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		if sys, ok := p.e.systemDatabaseNamed(name); ok { // systemschemas.go
			return sys, nil
		}
		if strings.EqualFold(name, mysqlSchema) {
			return p.e.sqle.Analyzer.Catalog.MySQLDb, nil
		}
		return nil, sql.ErrDatabaseNotFound.New(name)
	}
	return &Database{e: p.e, name: ns}, nil
}

// HasDatabase implements sql.DatabaseProvider.
func (p *provider) HasDatabase(ctx *sql.Context, name string) bool {
	_, ok, err := p.resolve(ctx, name)
	if _, sys := p.e.systemDatabaseNamed(name); (sys || strings.EqualFold(name, mysqlSchema)) && err == nil {
		return true
	}
	return err == nil && ok
}

// AllDatabases implements sql.DatabaseProvider.
func (p *provider) AllDatabases(ctx *sql.Context) []sql.Database {
	names, err := p.namespaces(ctx)
	if err != nil {
		ctx.GetLogger().Warnf("list namespaces: %v", err)
		return nil
	}
	out := make([]sql.Database, 0, len(names)+len(systemSchemas))
	taken := map[string]bool{}
	for _, n := range names {
		out = append(out, &Database{e: p.e, name: n})
		taken[strings.ToLower(n)] = true
	}
	for _, n := range systemSchemaNames() {
		if !taken[n] {
			sys, _ := p.e.systemDatabaseNamed(n)
			out = append(out, sys)
		}
	}
	return out
}

// CreateDatabase implements sql.MutableDatabaseProvider (CREATE DATABASE,
// CREATE SCHEMA, and Spark's CREATE NAMESPACE).
func (p *provider) CreateDatabase(ctx *sql.Context, name string) error {
	return p.createDatabase(ctx, name, iceberg.Properties{})
}

// createDatabase creates namespace name with props (CREATE NAMESPACE ...
// WITH DBPROPERTIES, createnamespace.go).
func (p *provider) createDatabase(ctx *sql.Context, name string, props iceberg.Properties) error {
	defer forgetCatalogReads(ctx)
	// MySQL's limit on identifiers; go-mysql-server checks it for tables only.
	if utf8.RuneCountInString(name) > sql.MaxIdentifierLength {
		return mysqlerr.NameError(&storage.NameError{Kind: "database", Name: name, TooLong: true,
			Reason: fmt.Sprintf("it is longer than %d characters", sql.MaxIdentifierLength)})
	}
	if _, ok, err := p.resolve(ctx, name); err != nil {
		return err
	} else if ok {
		return sql.ErrDatabaseExists.New(name)
	}
	err := p.e.catalog.CreateNamespace(ctx, table.Identifier{name}, props)
	if errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return sql.ErrDatabaseExists.New(name)
	}
	return mysqlerr.CatalogError(err, name)
}

// DropDatabase implements sql.MutableDatabaseProvider. Like MySQL's DROP
// DATABASE it drops the tables in it.
func (p *provider) DropDatabase(ctx *sql.Context, name string) error {
	defer forgetCatalogReads(ctx)
	ns, ok, err := p.resolve(ctx, name)
	if err != nil {
		return err
	}
	if !ok {
		return sql.ErrDatabaseNotFound.New(name)
	}
	if err := p.e.dropTablesOf(ctx, ns); err != nil {
		return err
	}
	return mysqlerr.CatalogError(p.e.catalog.DropNamespace(ctx, table.Identifier{ns}), name)
}

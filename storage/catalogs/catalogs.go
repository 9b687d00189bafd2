// Package catalogs (part of storage) opens the Iceberg catalogs icesql can serve besides its
// embedded warehouse: a REST catalog (AIStor Tables, AWS S3 Tables, Polaris,
// Nessie, Lakekeeper, ...), AWS Glue, a SQL (JDBC-style) catalog on SQLite or
// PostgreSQL, and a Hadoop file-system catalog. They are configured with the
// property names Spark and PyIceberg users already know (type, uri,
// warehouse, rest.sigv4-enabled, s3.endpoint, ...), which this package
// translates where iceberg-go spells them differently.
package catalogs

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue" // registers type=glue
	"github.com/apache/iceberg-go/catalog/hadoop"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// data and metadata files
	_ "github.com/jackc/pgx/v5/stdlib"             // database/sql driver "pgx" for PostgreSQL
	_ "github.com/uptrace/bun/driver/sqliteshim"   // database/sql driver "sqliteshim": pure-Go SQLite
)

// Types lists the catalog types Load accepts.
var Types = []string{"rest", "glue", "sql", "hadoop"}

// Load opens the catalog the properties describe. name is the catalog's
// name (the SQL catalog keys its rows by it). Catalogs whose commits report
// lost races as plain errors are wrapped by Retryable; every catalog is
// wrapped by CheckNames, so that no name it would misread reaches it.
func Load(ctx context.Context, name string, props iceberg.Properties) (catalog.Catalog, error) {
	props, err := Translate(props)
	if err != nil {
		return nil, err
	}
	var cat catalog.Catalog
	switch typ := props["type"]; typ {
	case "rest":
		cat, err = openREST(ctx, name, props)
	case "glue":
		cat, err = openGlue(ctx, name, props)
	case "sql":
		cat, err = openSQL(name, props)
	case "hadoop":
		cat, err = openHadoop(name, props)
	default:
		return nil, fmt.Errorf("catalog type %q is not supported (use type=%s)", typ, strings.Join(Types, "|"))
	}
	if err != nil {
		return nil, fmt.Errorf("open %s catalog: %w", props["type"], err)
	}
	cat = CheckNames(cat)
	if props["type"] == "rest" {
		return cat, nil // the server reports lost races as 409, already ErrCommitFailed
	}
	return Retryable(cat), nil
}

// Translate checks the properties and rewrites the Java/PyIceberg spellings
// iceberg-go does not know into its own. The result is a new map.
func Translate(in iceberg.Properties) (iceberg.Properties, error) {
	p := maps.Clone(in)
	if p == nil {
		p = iceberg.Properties{}
	}
	typ := strings.ToLower(strings.TrimSpace(p["type"]))
	switch typ {
	case "":
		return nil, fmt.Errorf("catalog properties: type is required (type=%s)", strings.Join(Types, "|"))
	case "jdbc": // Java's name for the same tables
		typ = "sql"
	}
	p["type"] = typ

	// iceberg-go addresses buckets path-style whenever s3.endpoint is set and
	// knows no s3.path-style-access key; virtual-host addressing is its
	// s3.force-virtual-addressing.
	if v, ok := p["s3.path-style-access"]; ok {
		delete(p, "s3.path-style-access")
		switch strings.ToLower(v) {
		case "true":
			if p["s3.endpoint"] == "" {
				return nil, fmt.Errorf("catalog properties: s3.path-style-access=true needs s3.endpoint (AWS S3 itself is addressed virtual-host style)")
			}
		case "false":
			p["s3.force-virtual-addressing"] = "true"
		default:
			return nil, fmt.Errorf("catalog properties: s3.path-style-access=%q: want true or false", v)
		}
	}
	// The S3 client needs a region; the catalog's own region is the natural default.
	if p["s3.region"] == "" && p["client.region"] == "" {
		for _, k := range []string{"glue.region", "rest.signing-region"} {
			if r := p[k]; r != "" {
				p["s3.region"] = r
				break
			}
		}
	}
	if w := p["warehouse"]; w != "" && !strings.Contains(w, "://") && typ != "rest" {
		// A local folder: the location provider joins paths as URLs, so make it absolute.
		abs, err := filepath.Abs(w)
		if err != nil {
			return nil, fmt.Errorf("catalog properties: warehouse %q: %w", w, err)
		}
		p["warehouse"] = abs
	}
	switch typ {
	case "rest", "glue", "hadoop":
		if typ == "rest" && p["uri"] == "" {
			return nil, fmt.Errorf("catalog properties: type=rest needs uri (the REST catalog's base URL)")
		}
		if typ == "hadoop" && p["warehouse"] == "" {
			return nil, fmt.Errorf("catalog properties: type=hadoop needs warehouse (the folder holding the tables)")
		}
	case "sql":
		if err := translateSQL(p); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("catalog type %q is not supported (use type=%s)", typ, strings.Join(Types, "|"))
	}
	return p, nil
}

// translateSQL resolves the SQL catalog's driver and data source name from
// its uri, accepting PyIceberg's SQLAlchemy URLs (sqlite:///path.db,
// postgresql+psycopg2://user:pw@host/db) and Java's JDBC URLs
// (jdbc:postgresql://host/db with jdbc.user and jdbc.password).
func translateSQL(p iceberg.Properties) error {
	uri := strings.TrimPrefix(p["uri"], "jdbc:")
	if uri == "" {
		return fmt.Errorf("catalog properties: type=sql needs uri (sqlite:///path/catalog.db or postgresql://user:password@host:port/database)")
	}
	if p["warehouse"] == "" {
		return fmt.Errorf("catalog properties: type=sql needs warehouse (where new tables' files go: a folder or s3://bucket/prefix)")
	}
	scheme, rest, _ := strings.Cut(uri, ":")
	scheme, _, _ = strings.Cut(scheme, "+") // postgresql+psycopg2, sqlite+pysqlite
	switch strings.ToLower(scheme) {
	case "sqlite", "file":
		setDefault(p, sqlcat.DriverKey, "sqliteshim")
		setDefault(p, sqlcat.DialectKey, string(sqlcat.SQLite))
		p["uri"] = sqliteDSN(sqlitePath(strings.ToLower(scheme), rest))
	case "postgres", "postgresql":
		u, err := url.Parse("postgres:" + rest)
		if err != nil {
			return fmt.Errorf("catalog properties: uri: %w", err)
		}
		if user := p["jdbc.user"]; user != "" && u.User == nil {
			u.User = url.UserPassword(user, p["jdbc.password"])
		}
		setDefault(p, sqlcat.DriverKey, "pgx")
		setDefault(p, sqlcat.DialectKey, string(sqlcat.Postgres))
		p["uri"] = u.String()
	default:
		if p[sqlcat.DriverKey] == "" || p[sqlcat.DialectKey] == "" {
			return fmt.Errorf("catalog properties: uri %q: use sqlite:///path.db or postgresql://..., or name sql.driver and sql.dialect", p["uri"])
		}
	}
	return nil
}

// sqlitePath is the file an SQLite URI names. SQLAlchemy's sqlite:///x.db
// is relative and sqlite:////tmp/x.db absolute (an empty authority, then
// the path); file: URIs are SQLite's own and name the path as written.
func sqlitePath(scheme, rest string) string {
	if scheme == "file" {
		return rest
	}
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		return strings.TrimPrefix(after, "/")
	}
	return rest
}

// sqliteDSN adds a busy timeout so that writers on one catalog file wait
// for each other instead of failing with SQLITE_BUSY.
func sqliteDSN(path string) string {
	file, query, _ := strings.Cut(path, "?")
	if !strings.Contains(query, "busy_timeout") {
		if query != "" {
			query += "&"
		}
		query += "_pragma=busy_timeout(10000)"
	}
	return "file:" + file + "?" + query
}

func setDefault(p iceberg.Properties, k, v string) {
	if p[k] == "" {
		p[k] = v
	}
}

func openSQL(name string, p iceberg.Properties) (catalog.Catalog, error) {
	db, err := sql.Open(p[sqlcat.DriverKey], p["uri"])
	if err != nil {
		return nil, err
	}
	if p[sqlcat.DialectKey] == string(sqlcat.SQLite) {
		// One connection: SQLite serialises writers anyway, and a single
		// connection keeps the catalog's serializable transactions from
		// failing with "database is locked".
		db.SetMaxOpenConns(1)
	}
	cat, err := sqlcat.NewCatalog(name, db, sqlcat.SupportedDialect(p[sqlcat.DialectKey]), p)
	if err != nil {
		db.Close()
		return nil, err
	}
	return cat, nil
}

// openGlue goes through iceberg-go's registry: the glue package turns the
// glue.* properties into an AWS configuration there.
func openGlue(ctx context.Context, name string, p iceberg.Properties) (catalog.Catalog, error) {
	return catalog.Load(ctx, name, p)
}

// openHadoop creates a local warehouse folder first, as the embedded
// warehouse does: iceberg-go's Hadoop catalog requires it to exist.
func openHadoop(name string, p iceberg.Properties) (catalog.Catalog, error) {
	if w := p["warehouse"]; !strings.Contains(w, "://") || strings.HasPrefix(w, "file://") {
		if err := os.MkdirAll(strings.TrimPrefix(w, "file://"), 0o755); err != nil {
			return nil, fmt.Errorf("create warehouse folder: %w", err)
		}
	}
	return hadoop.NewCatalog(name, p["warehouse"], p)
}

// Package engine is icesql's public Go API and its bridge to
// go-mysql-server: it presents the namespaces and tables of an Iceberg
// catalog as MySQL databases and tables, runs sessions and transactions,
// serves the MySQL wire protocol, and registers the database/sql driver
// "icesql".
package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"

	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/storage"
)

// Version is icesql's release, shown by `icesql version` and SELECT VERSION().
var Version = "0.1.0-dev"

// Config says where the tables live and how they are named.
type Config struct {
	// Warehouse is a local folder (or file:// URI) holding the embedded catalog.
	Warehouse string
	// CatalogName is the catalog prefix accepted in three-part names such as
	// icesql.db.table; "icesql" when empty.
	CatalogName string
	// Store holds the warehouse's files; the local file system when nil.
	Store storage.Store
}

// Engine runs SQL over the Iceberg tables of one catalog. It is safe for
// concurrent use by many sessions.
type Engine struct {
	cfg      Config
	catalog  catalog.Catalog
	provider *provider
	sqle     *sqle.Engine
}

// Open opens the warehouse (creating its folder when absent) and builds the
// SQL engine over it.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.CatalogName == "" {
		cfg.CatalogName = "icesql"
	}
	if cfg.Warehouse == "" {
		return nil, fmt.Errorf("open engine: no warehouse given")
	}
	root := cfg.Warehouse
	if !strings.Contains(root, "://") {
		var err error
		if root, err = storage.LocalLocation(root); err != nil {
			return nil, err
		}
	}
	if cfg.Store == nil {
		cfg.Store = storage.LocalStore{}
	}
	wh, err := storage.OpenWarehouse(ctx, root, cfg.Store)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, catalog: wh}
	e.provider = newProvider(e)
	a := analyzer.NewBuilder(e.provider).
		AddPreAnalyzeRule(rememberCTASOptionsID, rememberCTASOptions).
		AddPreAnalyzeRule(bindScanIDsID, bindScanIDs).
		AddPostAnalyzeRule(countFromMetadataID, countFromMetadata).
		AddPostAnalyzeRule(minMaxFromMetadataID, minMaxFromMetadata).
		AddOverrides(sql.EngineOverrides{Builder: sql.BuilderOverrides{Parser: parser{Parser: planner.NewParser(cfg.CatalogName), e: e}}}).
		Build()
	e.sqle = sqle.New(a, &sqle.Config{VersionPostfix: "icesql-" + Version})
	a.ExecBuilder.PriorityBuilder = explainBuilder{base: a.ExecBuilder}
	return e, nil
}

// Catalog is the Iceberg catalog the engine serves.
func (e *Engine) Catalog() catalog.Catalog { return e.catalog }

// Close releases the engine.
func (e *Engine) Close() error { return e.sqle.Close() }

// newContext makes the go-mysql-server context for one statement of sess.
func (e *Engine) newContext(ctx context.Context, sess *Session) *sql.Context {
	return sql.NewContext(ctx, sql.WithSession(sess), sql.WithProcessList(e.sqle.ProcessList), sql.WithMemoryManager(e.sqle.MemoryManager))
}

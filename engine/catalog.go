package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/catalogs"
)

// useExternalCatalog reports whether cfg names a catalog other than the
// embedded warehouse.
func (cfg Config) useExternalCatalog() bool {
	return cfg.Catalog != nil || len(cfg.CatalogProperties) > 0
}

// openExternalCatalog opens the catalog cfg names. root is the catalog's
// warehouse location when it has one (it confines server-side file access),
// else "".
func openExternalCatalog(ctx context.Context, cfg Config) (cat catalog.Catalog, root string, err error) {
	if cfg.Catalog != nil {
		// The caller's catalog does not say where its files are; Warehouse,
		// when given, does (server-side files are confined to it).
		return cfg.Catalog, localRoot(cfg.Warehouse), nil
	}
	cat, err = catalogs.Load(ctx, cfg.CatalogName, cfg.CatalogProperties)
	if err != nil {
		return nil, "", err
	}
	if cfg.CatalogProperties["type"] == "rest" {
		// REST's warehouse is a name the server resolves, not a location:
		// server-side files are confined to Warehouse, when given.
		root = localRoot(cfg.Warehouse)
	} else {
		root = localRoot(cfg.CatalogProperties["warehouse"])
	}
	return cat, root, nil
}

// localRoot is a warehouse given as a location or a folder, as a location
// or an absolute path; "" when none is given or the folder cannot be made
// absolute.
func localRoot(w string) string {
	if w == "" || strings.Contains(w, "://") {
		return w
	}
	abs, err := filepath.Abs(w)
	if err != nil {
		return ""
	}
	return abs
}

// embedded returns the embedded warehouse when the engine serves it.
func (e *Engine) embedded() (*storage.Warehouse, bool) {
	wh, ok := e.catalog.(*storage.Warehouse)
	return wh, ok
}

// unsupportedByCatalog is error 1235 for a feature the engine's catalog
// lacks, naming the catalog type so users know which configuration to change.
func (e *Engine) unsupportedByCatalog(format string, args ...any) error {
	return mysqlerr.NotSupported("%s is not supported by the %s catalog", fmt.Sprintf(format, args...), e.catalog.CatalogType())
}

// closeCatalog releases what the catalog holds (the SQL catalog's database
// connections, the REST client's token refresher) when the engine opened
// it; a catalog passed in Config.Catalog belongs to the caller.
func (e *Engine) closeCatalog() error {
	if e.cfg.Catalog != nil {
		return nil
	}
	if c, ok := e.catalog.(catalog.Closer); ok {
		return c.Close()
	}
	return nil
}

// dropTablesOf drops the tables of namespace ns before the namespace itself,
// as MySQL's DROP DATABASE does. The embedded warehouse does it within
// DropNamespace; the other catalogs refuse to drop a namespace that holds
// tables.
func (e *Engine) dropTablesOf(ctx context.Context, ns string) error {
	if _, ok := e.embedded(); ok {
		return nil
	}
	var idents []table.Identifier
	for id, err := range e.catalog.ListTables(ctx, table.Identifier{ns}) {
		if err != nil {
			return mysqlerr.CatalogError(err, ns)
		}
		idents = append(idents, id)
	}
	for _, id := range idents {
		if err := e.catalog.DropTable(ctx, id); err != nil {
			return fmt.Errorf("drop database %s: drop table %s: %w", ns, strings.Join(id, "."), err)
		}
	}
	return nil
}

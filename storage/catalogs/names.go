package catalogs

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// checkedNames decorates an external catalog so that no name
// storage.ExternalName refuses reaches it, whatever the operation: it is
// the one place names are checked on their way to a REST, SQL, Glue or
// Hadoop catalog. A name refused in an existence check names nothing
// (false, as the embedded catalog answers); listings leave out objects
// whose names icesql could not address.
type checkedNames struct {
	catalog.Catalog
}

// CheckNames wraps cat (a catalog Load opened) with the name checks.
func CheckNames(cat catalog.Catalog) catalog.Catalog {
	switch cat.(type) {
	case checkedNames, checkedRegistering:
		return cat
	}
	c := checkedNames{Catalog: cat}
	if _, ok := cat.(registrar); ok {
		return checkedRegistering{c}
	}
	return c
}

var (
	_ catalog.PurgeableTable = checkedNames{}
	_ catalog.Closer         = checkedNames{}
)

// Unwrap returns the decorated catalog.
func (c checkedNames) Unwrap() catalog.Catalog { return c.Catalog }

// checkIdent checks a table identifier (its last part a table, the others
// namespace levels) or, with table false, a namespace.
func checkIdent(ident table.Identifier, isTable bool) error {
	for i, part := range ident {
		kind := "database"
		if isTable && i == len(ident)-1 {
			kind = "table"
		}
		if err := storage.ExternalName(kind, part); err != nil {
			return err
		}
	}
	return nil
}

func (c checkedNames) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	if err := checkIdent(ident, true); err != nil {
		return nil, err
	}
	if c.CatalogType() == catalog.REST {
		opts = namespaceLocation(ctx, c.Catalog, ident, opts)
	}
	return c.Catalog.CreateTable(ctx, ident, sc, opts...)
}

// namespaceLocation places a table without a location of its own below its
// namespace's "location" (CREATE NAMESPACE ... LOCATION), as the SQL and
// Glue catalogs do themselves; a REST server may place tables by its own
// rule instead (Iceberg's JDBC-backed server does), so the client asks.
func namespaceLocation(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts []catalog.CreateTableOpt) []catalog.CreateTableOpt {
	var cfg catalog.CreateTableCfg
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Location != "" || len(ident) < 2 {
		return opts
	}
	props, err := cat.LoadNamespaceProperties(ctx, ident[:len(ident)-1])
	if loc := strings.TrimRight(props["location"], "/"); err == nil && loc != "" {
		return append(opts, catalog.WithLocation(loc+"/"+ident[len(ident)-1]))
	}
	return opts // a missing namespace is CreateTable's error to report
}

func (c checkedNames) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if err := checkIdent(ident, true); err != nil {
		return nil, "", err
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, updates)
}

func (c checkedNames) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	if err := checkIdent(ns, false); err != nil {
		return func(yield func(table.Identifier, error) bool) { yield(nil, err) }
	}
	return func(yield func(table.Identifier, error) bool) {
		for ident, err := range c.Catalog.ListTables(ctx, ns) {
			if err == nil && checkIdent(ident, true) != nil {
				continue
			}
			if !yield(ident, err) {
				return
			}
		}
	}
}

func (c checkedNames) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if err := checkIdent(ident, true); err != nil {
		return nil, err
	}
	return c.Catalog.LoadTable(ctx, ident)
}

func (c checkedNames) DropTable(ctx context.Context, ident table.Identifier) error {
	if err := checkIdent(ident, true); err != nil {
		return err
	}
	return c.Catalog.DropTable(ctx, ident)
}

func (c checkedNames) RenameTable(ctx context.Context, from, to table.Identifier) (*table.Table, error) {
	if err := checkIdent(from, true); err != nil {
		return nil, err
	}
	if err := checkIdent(to, true); err != nil {
		return nil, err
	}
	return c.Catalog.RenameTable(ctx, from, to)
}

func (c checkedNames) CheckTableExists(ctx context.Context, ident table.Identifier) (bool, error) {
	if checkIdent(ident, true) != nil {
		return false, nil
	}
	return c.Catalog.CheckTableExists(ctx, ident)
}

func (c checkedNames) ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error) {
	if err := checkIdent(parent, false); err != nil {
		return nil, err
	}
	all, err := c.Catalog.ListNamespaces(ctx, parent)
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	for _, ns := range all {
		if checkIdent(ns, false) == nil {
			out = append(out, ns)
		}
	}
	return out, nil
}

func (c checkedNames) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	if err := checkIdent(ns, false); err != nil {
		return err
	}
	return c.Catalog.CreateNamespace(ctx, ns, props)
}

func (c checkedNames) DropNamespace(ctx context.Context, ns table.Identifier) error {
	if err := checkIdent(ns, false); err != nil {
		return err
	}
	return c.Catalog.DropNamespace(ctx, ns)
}

func (c checkedNames) CheckNamespaceExists(ctx context.Context, ns table.Identifier) (bool, error) {
	if checkIdent(ns, false) != nil {
		return false, nil
	}
	return c.Catalog.CheckNamespaceExists(ctx, ns)
}

func (c checkedNames) LoadNamespaceProperties(ctx context.Context, ns table.Identifier) (iceberg.Properties, error) {
	if err := checkIdent(ns, false); err != nil {
		return nil, err
	}
	return c.Catalog.LoadNamespaceProperties(ctx, ns)
}

func (c checkedNames) UpdateNamespaceProperties(ctx context.Context, ns table.Identifier, removals []string, updates iceberg.Properties) (catalog.PropertiesUpdateSummary, error) {
	if err := checkIdent(ns, false); err != nil {
		return catalog.PropertiesUpdateSummary{}, err
	}
	return c.Catalog.UpdateNamespaceProperties(ctx, ns, removals, updates)
}

// PurgeTable implements catalog.PurgeableTable when the decorated catalog does.
func (c checkedNames) PurgeTable(ctx context.Context, ident table.Identifier) error {
	if err := checkIdent(ident, true); err != nil {
		return err
	}
	p, ok := c.Catalog.(catalog.PurgeableTable)
	if !ok {
		return fmt.Errorf("purge table %s: the %s catalog cannot delete table files", strings.Join(ident, "."), c.CatalogType())
	}
	return p.PurgeTable(ctx, ident)
}

// Close closes the decorated catalog when it holds resources.
func (c checkedNames) Close() error {
	if cl, ok := c.Catalog.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

// checkedRegistering is checkedNames for a catalog that can register tables.
type checkedRegistering struct{ checkedNames }

// RegisterTable adopts the table whose metadata file is metadataLocation.
func (c checkedRegistering) RegisterTable(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error) {
	if err := checkIdent(ident, true); err != nil {
		return nil, err
	}
	return c.Catalog.(registrar).RegisterTable(ctx, ident, metadataLocation)
}

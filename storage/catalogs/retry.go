package catalogs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// retryable decorates a catalog whose CommitTable reports a lost race as a
// plain "requirement failed: ..." error (iceberg-go's SQL, Glue and Hadoop
// catalogs check the requirements themselves and do not wrap the failure in
// table.ErrCommitFailed). Without the mapping no caller ever retries there:
// neither storage.AppendFiles nor iceberg-go's own commit retry loop. Tables
// it returns commit through the decorator, so every commit path is covered.
type retryable struct {
	catalog.Catalog
}

// Retryable wraps cat so that commits which lost a race to another writer
// fail with table.ErrCommitFailed (the message is kept). Catalogs that
// already report races that way (REST, the embedded warehouse) need no
// wrapping, but wrapping them is harmless.
func Retryable(cat catalog.Catalog) catalog.Catalog {
	switch cat.(type) {
	case retryable, registering:
		return cat
	}
	r := retryable{Catalog: cat}
	if _, ok := cat.(registrar); ok {
		return registering{r} // Glue's; the SQL and Hadoop catalogs have no RegisterTable
	}
	return r
}

// registrar is a catalog that can adopt an existing table's metadata file.
type registrar interface {
	RegisterTable(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error)
}

// registering is retryable for a catalog that can register tables.
type registering struct{ retryable }

// RegisterTable adopts the table whose metadata file is metadataLocation.
func (r registering) RegisterTable(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error) {
	return r.rebind(r.Catalog.(registrar).RegisterTable(ctx, ident, metadataLocation))
}

var (
	_ catalog.PurgeableTable = retryable{}
	_ catalog.Closer         = retryable{}
)

// Unwrap returns the decorated catalog. Optional interfaces other than
// PurgeableTable and Closer are to be looked for on it (none of the
// catalogs wrapped has TransactionalCatalog, which only REST implements).
func (r retryable) Unwrap() catalog.Catalog { return r.Catalog }

// lostRace is a commit failure caused by a concurrent commit: it reads as the
// catalog's own message and matches table.ErrCommitFailed.
type lostRace struct{ err error }

func (l lostRace) Error() string { return l.err.Error() }
func (l lostRace) Unwrap() []error {
	return []error{l.err, table.ErrCommitFailed}
}

// asCommitFailed maps a catalog's requirement failure to table.ErrCommitFailed.
// iceberg-go's requirement checks all word their failure this way
// (table/requirements.go); any other error passes unchanged.
func asCommitFailed(err error) error {
	if err == nil || errors.Is(err, table.ErrCommitFailed) {
		return err
	}
	if strings.Contains(strings.ToLower(err.Error()), "requirement failed") {
		return lostRace{err: err}
	}
	return err
}

// CommitTable implements table.CatalogIO.
func (r retryable) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	meta, loc, err := r.Catalog.CommitTable(ctx, ident, reqs, updates)
	return meta, loc, asCommitFailed(err)
}

// rebind makes tbl commit through the decorator, and read and write its
// files through storage.TableIO.
func (r retryable) rebind(tbl *table.Table, err error) (*table.Table, error) {
	if err != nil || tbl == nil {
		return tbl, err
	}
	fsys := func(ctx context.Context) (icebergio.IO, error) {
		f, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return storage.TableIO(f), nil
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsys, r), nil
}

// LoadTable implements catalog.Catalog.
func (r retryable) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	return r.rebind(r.Catalog.LoadTable(ctx, ident))
}

// CreateTable implements catalog.Catalog.
func (r retryable) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	if err := plainNames(ident, "database", "table"); err != nil {
		return nil, err
	}
	return r.rebind(r.Catalog.CreateTable(ctx, ident, sc, opts...))
}

// RenameTable implements catalog.Catalog.
func (r retryable) RenameTable(ctx context.Context, from, to table.Identifier) (*table.Table, error) {
	if err := plainNames(to, "database", "table"); err != nil {
		return nil, err
	}
	return r.rebind(r.Catalog.RenameTable(ctx, from, to))
}

// CreateNamespace implements catalog.Catalog.
func (r retryable) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	if err := plainNames(ns, "database"); err != nil {
		return err
	}
	return r.Catalog.CreateNamespace(ctx, ns, props)
}

// plainNames refuses a new name that is not its own path segment
// (storage.NameSegment would escape it). The catalogs wrapped here (the
// Hadoop, SQL and Glue catalogs of iceberg-go) make a new object's folder of
// its raw name, so only names that mean nothing to a file system or a URI
// may reach them; the last kind applies to the remaining parts.
func plainNames(ident table.Identifier, kinds ...string) error {
	for i, part := range ident {
		kind := kinds[min(i, len(kinds)-1)]
		seg, err := storage.NameSegment(kind, part)
		if err != nil {
			return err
		}
		if seg != part {
			return &storage.NameError{Kind: kind, Name: part,
				Reason: "the catalog stores it as a folder name, so it may hold only letters, digits, '-', '_' and inner dots"}
		}
	}
	return nil
}

// Close closes the decorated catalog when it holds resources (the SQL
// catalog's database handle).
func (r retryable) Close() error {
	if c, ok := r.Catalog.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// PurgeTable implements catalog.PurgeableTable, which every catalog Load
// wraps (SQL, Glue, Hadoop) offers: drop the table and delete its files.
func (r retryable) PurgeTable(ctx context.Context, ident table.Identifier) error {
	p, ok := r.Catalog.(catalog.PurgeableTable)
	if !ok {
		return fmt.Errorf("purge table %s: the %s catalog cannot delete table files", strings.Join(ident, "."), r.CatalogType())
	}
	return p.PurgeTable(ctx, ident)
}

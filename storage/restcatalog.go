package storage

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// What the Iceberg REST catalog server (restserve) needs of the warehouse
// beyond catalog.Catalog: a create whose metadata the client built (a
// staged create, committed later), a drop that keeps the table's files, and
// the registration of a table folder such a drop left behind.

// ErrPlacement is what CreateTableFromMetadata refuses a location with that
// the warehouse did not choose for the new table.
var ErrPlacement = errors.New("the warehouse places new tables itself")

// PlaceTable checks that ident may name a new table and returns the
// location the table would get, for a client that builds the table's
// metadata itself (a staged create) before CreateTableFromMetadata.
func (w *Warehouse) PlaceTable(ctx context.Context, ident table.Identifier) (string, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return "", err
	}
	if err := w.checkNewName(ctx, ns, name); err != nil {
		return "", err
	}
	loc, _, err := w.placeTable(ctx, ns, name)
	return loc, err
}

// CreateTableFromMetadata creates table ident with meta, which a client
// built, as its first metadata. meta's location must be one PlaceTable
// gives for ident: the folder named after the table, or a fresh folder of
// the namespace's own when that one is taken.
func (w *Warehouse) CreateTableFromMetadata(ctx context.Context, ident table.Identifier, meta table.Metadata) (*table.Table, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, err
	}
	if err := w.checkNewName(ctx, ns, name); err != nil {
		return nil, err
	}
	loc := strings.TrimRight(meta.Location(), "/")
	linked := loc != w.tableFolder(ns, name)
	if linked {
		dir, base := path.Split(loc)
		if strings.TrimRight(dir, "/") != Join(w.hiddenDir(ns), "tables") || !strings.HasPrefix(base, seg(name)+"-") {
			return nil, fmt.Errorf("%w: create table %s.%s at %s: its location must be %s", ErrPlacement, ns, name, loc, w.tableFolder(ns, name))
		}
	}
	if err := Inside(w.nsFolder(ns), loc, true); err != nil {
		return nil, fmt.Errorf("create table %s.%s: %w", ns, name, err)
	}
	if v, err := w.latestVersion(ctx, loc); err != nil {
		return nil, err
	} else if v > 0 {
		return nil, fmt.Errorf("%w: create table %s.%s: %s holds another table", ErrPlacement, ns, name, loc)
	}
	if !linked {
		if err := w.store.Remove(ctx, w.hideMark(ns, name)); err != nil {
			return nil, fmt.Errorf("create table %s.%s: %w", ns, name, err)
		}
	}
	return w.createWith(ctx, table.Identifier{ns, name}, meta, linked)
}

// DetachTable makes ident stop resolving and keeps its files, as a REST
// client's drop without purge asks: the folder can be registered again
// (AdoptTable). The files stay until the namespace is dropped; no table's
// maintenance reaches them, since no table name leads to them.
func (w *Warehouse) DetachTable(ctx context.Context, ident table.Identifier) error {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return err
	}
	l, ok, err := w.lookup(ctx, ns, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchTable, ns, name)
	}
	if err := w.unbind(ctx, ns, name); err != nil {
		return fmt.Errorf("drop table %s.%s: %w", ns, name, err)
	}
	w.metas.forget(l.Location)
	return nil
}

// AdoptTable binds ident to a metadata file of a table folder inside the
// namespace that no table name leads to (one DetachTable left). A location
// outside the namespace's folder is refused with ErrOutside: tables from
// elsewhere are registered with RegisterTable, whose rules keep the
// warehouse's maintenance away from other writers' files. When the file is
// the folder's newest Hadoop-layout version the table is bound as a table
// of the warehouse; otherwise as a registered table, whose commits continue
// from that file.
func (w *Warehouse) AdoptTable(ctx context.Context, ident table.Identifier, file string) (*table.Table, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, err
	}
	if err := w.checkNewName(ctx, ns, name); err != nil {
		return nil, err
	}
	if err := Inside(w.nsFolder(ns), file, true); err != nil {
		return nil, fmt.Errorf("register %s.%s: %w", ns, name, err)
	}
	if !strings.HasSuffix(file, ".metadata.json") {
		return nil, fmt.Errorf("register %s.%s: %s is not a metadata file (…/metadata/*.metadata.json)", ns, name, file)
	}
	meta, err := w.readMetadata(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("register %s.%s: %w", ns, name, err)
	}
	loc := strings.TrimRight(meta.Location(), "/")
	if err := Inside(w.nsFolder(ns), loc, true); err != nil {
		return nil, fmt.Errorf("register %s.%s: the table's location: %w", ns, name, err)
	}
	if dir, _ := path.Split(file); strings.TrimRight(dir, "/") != Join(loc, "metadata") {
		return nil, fmt.Errorf("register %s.%s: %s is not in the metadata folder of its table %s", ns, name, file, loc)
	}
	others, err := w.tableNames(ctx, table.Identifier{ns})
	if err != nil {
		return nil, err
	}
	for _, o := range others {
		if l, ok, err := w.lookup(ctx, ns, o); err != nil {
			return nil, err
		} else if ok && strings.TrimRight(l.Location, "/") == loc {
			return nil, fmt.Errorf("%w: register %s.%s: %s is the folder of table %s.%s", catalog.ErrTableAlreadyExists, ns, name, loc, ns, o)
		}
	}
	l := link{Location: loc, Metadata: file}
	if v, latest, err := w.latestFile(ctx, loc); err != nil {
		return nil, err
	} else if v > 0 && file == latest {
		l.Metadata = ""
	}
	if err := w.bindLink(ctx, ns, name, l); err != nil {
		return nil, err
	}
	return w.LoadTable(ctx, table.Identifier{ns, name})
}

package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
)

// Views are Iceberg views (the view spec's metadata files), kept in the
// namespace's hidden folder: the Hadoop layout has no place for views, and
// other engines' Hadoop catalogs have no view support to confuse.
//
//	<root>/<ns>/.icesql/views/<key>.json                            {"name": ..., "location": <view root>}
//	<root>/<ns>/.icesql/views/<key>-<id>/metadata/v<N>.metadata.json  view metadata, version N
//
// key is the lower-cased name. go-mysql-server asks for a view before every
// table a statement names, so a name that is no view must cost one read, in
// whatever case the client wrote it. The link is created once and removed by
// DROP VIEW, so creating and dropping are atomic; a new version of a view is
// the create-if-absent of the next metadata file, as for tables.

type viewLink struct {
	Name     string `json:"name"`
	Location string `json:"location"`
}

func (w *Warehouse) viewsDir(ns string) string { return Join(w.hiddenDir(ns), "views") }

func (w *Warehouse) viewLinkFile(ns, name string) string {
	return Join(w.viewsDir(ns), viewKey(name)+".json")
}

// viewKey is the segment of a view's lower-cased name.
func viewKey(name string) string { return seg(strings.ToLower(name)) }

// validObjectName reports whether name can be stored in the layout.
func validObjectName(name string) bool {
	_, err := NameSegment("", name)
	return err == nil
}

// lookupView finds the view a name means, ignoring case.
func (w *Warehouse) lookupView(ctx context.Context, ns, name string) (viewLink, bool, error) {
	if !validObjectName(ns) || !validObjectName(name) {
		return viewLink{}, false, nil
	}
	var l viewLink
	ok, err := w.readLink(ctx, w.viewLinkFile(ns, name), "view", &l, func() bool { return l.Location != "" && l.Name != "" })
	if !ok || err != nil {
		return viewLink{}, false, err
	}
	return l, true, nil
}

// LoadView reads the current metadata of a view; its identifier carries the
// name as created.
func (w *Warehouse) LoadView(ctx context.Context, ident table.Identifier) (*view.View, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", catalog.ErrNoSuchView, strings.Join(ident, "."))
	}
	l, ok, err := w.lookupView(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchView, ns, name)
	}
	meta, metaLoc, _, err := w.loadViewMetadata(ctx, l.Location)
	if err != nil {
		return nil, fmt.Errorf("load view %s.%s: %w", ns, l.Name, err)
	}
	return view.New(table.Identifier{ns, l.Name}, meta, metaLoc), nil
}

func (w *Warehouse) loadViewMetadata(ctx context.Context, location string) (view.Metadata, string, int, error) {
	version, err := w.latestVersion(ctx, location)
	if err != nil {
		return nil, "", 0, err
	}
	if version == 0 {
		return nil, "", 0, fmt.Errorf("no metadata file under %s", location)
	}
	metaLoc := metadataFile(location, version)
	data, err := w.store.ReadFile(ctx, metaLoc)
	if err != nil {
		return nil, "", 0, fmt.Errorf("read %s: %w", metaLoc, err)
	}
	meta, err := view.ParseMetadataBytes(data)
	if err != nil {
		return nil, "", 0, fmt.Errorf("parse %s: %w", metaLoc, err)
	}
	return meta, metaLoc, version, nil
}

// CreateView creates a view whose current version is version, with the
// columns of schema. The name must be free of tables and views alike.
func (w *Warehouse) CreateView(ctx context.Context, ident table.Identifier, version *view.Version, schema *iceberg.Schema, opts ...catalog.CreateViewOpt) (*view.View, error) {
	cfg := catalog.NewCreateViewCfg()
	for _, o := range opts {
		o(&cfg)
	}
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, err
	}
	if cfg.Location != "" {
		return nil, fmt.Errorf("create view %s.%s: the embedded catalog places views itself; a location is not supported", ns, name)
	}
	if _, ok, err := w.lookupView(ctx, ns, name); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrViewAlreadyExists, ns, name)
	}
	if err := w.checkNewName(ctx, ns, name); err != nil {
		return nil, err
	}
	b, err := view.NewMetadataBuilder()
	if err != nil {
		return nil, err
	}
	loc := Join(w.viewsDir(ns), viewKey(name)+"-"+newID())
	built, err := b.SetLoc(loc).SetCurrentVersion(version, schema).SetProperties(cfg.Properties).Build()
	if err != nil {
		return nil, fmt.Errorf("create view %s.%s: %w", ns, name, err)
	}
	metaLoc := metadataFile(loc, 1)
	if err := w.writeViewMetadata(ctx, metaLoc, built); err != nil {
		return nil, fmt.Errorf("create view %s.%s: %w", ns, name, err)
	}
	if err := w.writeLink(ctx, w.viewLinkFile(ns, name), viewLink{Name: name, Location: loc}); err != nil {
		w.store.RemoveAll(ctx, loc)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s.%s", catalog.ErrViewAlreadyExists, ns, name)
		}
		return nil, fmt.Errorf("create view %s.%s: %w", ns, name, err)
	}
	return view.New(table.Identifier{ns, name}, built.Metadata, metaLoc), nil
}

// ReplaceView makes version the view's current version (CREATE OR REPLACE
// VIEW, ALTER VIEW), keeping the earlier versions in its history as the view
// spec asks. It fails with catalog.ErrNoSuchView when there is no such view,
// and with table.ErrCommitFailed when another writer replaced it first.
func (w *Warehouse) ReplaceView(ctx context.Context, ident table.Identifier, version *view.Version, schema *iceberg.Schema) (*view.View, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, err
	}
	l, ok, err := w.lookupView(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchView, ns, name)
	}
	mu := w.lockFor(l.Location)
	mu.Lock()
	defer mu.Unlock()
	base, _, n, err := w.loadViewMetadata(ctx, l.Location)
	if err != nil {
		return nil, fmt.Errorf("replace view %s.%s: %w", ns, l.Name, err)
	}
	b, err := view.MetadataBuilderFromBase(base)
	if err != nil {
		return nil, err
	}
	if id, ok := sameVersion(base, version, schema); ok {
		b.SetCurrentVersionID(id)
	} else {
		b.SetCurrentVersion(version, schema)
	}
	built, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("replace view %s.%s: %w", ns, l.Name, err)
	}
	metaLoc := metadataFile(l.Location, n+1)
	if err := w.writeViewMetadata(ctx, metaLoc, built); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: view %s.%s was replaced concurrently", table.ErrCommitFailed, ns, l.Name)
		}
		return nil, fmt.Errorf("replace view %s.%s: %w", ns, l.Name, err)
	}
	return view.New(table.Identifier{ns, l.Name}, built.Metadata, metaLoc), nil
}

// sameVersion finds a version of the view that is version with schema, as
// the spec asks a writer to reuse; iceberg-go v0.7.0's SetCurrentVersion
// would add it a second time under the same id.
func sameVersion(base view.Metadata, version *view.Version, schema *iceberg.Schema) (int64, bool) {
	for _, sc := range base.Schemas() {
		if !sc.Equals(schema) {
			continue
		}
		want := version.Clone()
		want.SchemaID = sc.ID
		for _, v := range base.Versions() {
			if v.SchemaID == sc.ID && v.Equals(want) {
				return v.VersionID, true
			}
		}
	}
	return 0, false
}

func (w *Warehouse) writeViewMetadata(ctx context.Context, location string, built *view.MetadataBuildResult) error {
	data, err := json.Marshal(built)
	if err != nil {
		return fmt.Errorf("encode view metadata: %w", err)
	}
	return w.store.CreateExclusive(ctx, location, data)
}

// DropView removes the view: its name stops resolving at once, then its
// metadata files are deleted.
func (w *Warehouse) DropView(ctx context.Context, ident table.Identifier) error {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return err
	}
	l, ok, err := w.lookupView(ctx, ns, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchView, ns, name)
	}
	if err := Inside(w.viewsDir(ns), l.Location, true); err != nil {
		return fmt.Errorf("drop view %s.%s: %w", ns, l.Name, err)
	}
	if err := w.store.Remove(ctx, w.viewLinkFile(ns, name)); err != nil {
		return fmt.Errorf("drop view %s.%s: %w", ns, l.Name, err)
	}
	if err := w.store.RemoveAll(ctx, l.Location); err != nil {
		return fmt.Errorf("%w: drop view %s.%s: remove metadata files: %w", ErrFilesLeft, ns, l.Name, err)
	}
	return nil
}

// ListViews lists the namespace's views by the names they were created with.
func (w *Warehouse) ListViews(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	return identifiers(ns, func() ([]string, error) { return w.viewNames(ctx, ns) })
}

func (w *Warehouse) viewNames(ctx context.Context, ns table.Identifier) ([]string, error) {
	name, err := checkNamespace(ns)
	if err != nil {
		return nil, err
	}
	entries, err := w.store.List(ctx, w.viewsDir(name))
	if err != nil {
		return nil, fmt.Errorf("list views of %s: %w", name, err)
	}
	var names []string
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name, ".json")
		if !ok || e.IsDir {
			continue
		}
		lower, ok := SegmentName(key)
		if !ok {
			continue
		}
		l, found, err := w.lookupView(ctx, name, lower)
		if err != nil {
			return nil, err
		}
		if found {
			names = append(names, l.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// RenameView renames a view within its namespace: the new name is linked to
// the view's metadata first, then the old link removed, so a crash in
// between leaves the view under both names, never none.
func (w *Warehouse) RenameView(ctx context.Context, from, to table.Identifier) (*view.View, error) {
	fns, fname, err := splitIdent(from)
	if err != nil {
		return nil, err
	}
	tns, tname, err := splitIdent(to)
	if err != nil {
		return nil, err
	}
	if fns != tns {
		return nil, fmt.Errorf("rename view %s.%s to %s.%s: views can be renamed within their namespace only", fns, fname, tns, tname)
	}
	l, ok, err := w.lookupView(ctx, fns, fname)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchView, fns, fname)
	}
	if strings.EqualFold(fname, tname) {
		return nil, fmt.Errorf("rename view %s.%s to %s: the names differ only in case", fns, fname, tname)
	}
	if err := w.checkNewName(ctx, tns, tname); err != nil {
		return nil, err
	}
	if err := w.writeLink(ctx, w.viewLinkFile(tns, tname), viewLink{Name: tname, Location: l.Location}); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s.%s", catalog.ErrViewAlreadyExists, tns, tname)
		}
		return nil, fmt.Errorf("rename view %s.%s: %w", fns, fname, err)
	}
	if err := w.store.Remove(ctx, w.viewLinkFile(fns, fname)); err != nil {
		return nil, fmt.Errorf("rename view %s.%s: %w", fns, fname, err)
	}
	return w.LoadView(ctx, to)
}

package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Warehouse is the embedded catalog: it keeps no state outside the warehouse
// folder, laid out as Iceberg's Hadoop catalog does, so Spark's hadoop
// catalog and DuckDB's iceberg_scan read it as is:
//
//	<root>/<namespace>/<table>/metadata/v<N>.metadata.json
//	<root>/<namespace>/<table>/metadata/version-hint.text   (a hint only)
//	<root>/<namespace>/<table>/metadata/snap-*.avro, *-m*.avro
//	<root>/<namespace>/<table>/data/*.parquet
//
// A commit is the create-if-absent of the next v<N>.metadata.json; readers
// find the newest version by listing metadata/.
//
// Renames never move files, since metadata records absolute paths. A renamed
// table keeps its folder; its new name is a link kept in the namespace's
// hidden .icesql folder, and its old folder name is marked hidden:
//
//	<root>/<namespace>/.icesql/links/<name>.json     {"location": "<table root>"}
//	<root>/<namespace>/.icesql/hidden/<folder>       the folder is not a table name
//	<root>/<namespace>/.icesql/tables/<name>-<id>/   tables created over a hidden folder
//	<root>/<namespace>/.icesql/namespace.json        namespace properties
//
// Other engines using the Hadoop layout see tables by folder name only.
type Warehouse struct {
	root  string
	store Store

	mu    sync.Mutex
	locks map[string]*sync.Mutex // per table location: commits queue here before racing other processes

	metas metaCache // newest parsed metadata per table location (metacache.go)

	buckets bucketMap // the buckets icesql serve served the folder as (servebucket.go)

	appends appendGroups // appends waiting to commit together (groupcommit.go)

	lists keptLists   // the manifest list each table's last fast append wrote (fastappend.go)
	avro  avroSchemas // iceberg-go's manifest and manifest list schemas (avrowrite.go)
	// fastAppends counts the commits the fast append made; slowAppends
	// turns it off (tests compare the two ways).
	fastAppends atomic.Int64
	slowAppends bool
}

var _ catalog.Catalog = (*Warehouse)(nil)

// CatalogType names the embedded catalog in iceberg-go's catalog registry terms.
const CatalogType catalog.Type = "icesql"

// OpenWarehouse opens (and creates, if absent) the warehouse at root, a
// location URI such as file:///srv/warehouse.
func OpenWarehouse(ctx context.Context, root string, store Store) (*Warehouse, error) {
	if err := store.MakeFolder(ctx, root); err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", root, err)
	}
	w := &Warehouse{root: strings.TrimRight(root, "/"), store: store, locks: map[string]*sync.Mutex{}}
	if ls, ok := store.(LocalStore); ok {
		ls.buckets = &w.buckets
		w.store = ls
	}
	if err := w.loadBuckets(ctx); err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", root, err)
	}
	return w, nil
}

// Root is the warehouse location.
func (w *Warehouse) Root() string { return w.root }

// Store is the file store under the warehouse.
func (w *Warehouse) Store() Store { return w.store }

func (w *Warehouse) CatalogType() catalog.Type { return CatalogType }

// Every path below is built from names through seg, that is NameSegment:
// the public methods refuse an invalid name (splitIdent, checkNamespace)
// before any path is made of it.
func (w *Warehouse) nsFolder(ns string) string       { return Join(w.root, seg(ns)) }
func (w *Warehouse) hiddenDir(ns string) string      { return Join(w.nsFolder(ns), ".icesql") }
func (w *Warehouse) tableFolder(ns, n string) string { return Join(w.nsFolder(ns), seg(n)) }
func (w *Warehouse) linkFile(ns, n string) string {
	return Join(w.hiddenDir(ns), "links", seg(n)+".json")
}
func (w *Warehouse) hideMark(ns, n string) string { return Join(w.hiddenDir(ns), "hidden", seg(n)) }

// seg is the path segment of a name already checked by splitIdent or
// checkNamespace. Should an unchecked name reach it, it answers "~", a name
// NameSegment never produces: the path then names nothing and stays in its
// folder, rather than the name's characters taking on a meaning.
func seg(name string) string {
	s, err := NameSegment("", name)
	if err != nil {
		return string(nameEscape)
	}
	return s
}

func splitIdent(ident table.Identifier) (ns, name string, err error) {
	if len(ident) != 2 || ident[0] == "" || ident[1] == "" {
		return "", "", fmt.Errorf("%w: table names have the form namespace.table, got %q",
			catalog.ErrNoSuchTable, strings.Join(ident, "."))
	}
	if _, err := NameSegment("database", ident[0]); err != nil {
		return "", "", err
	}
	if _, err := NameSegment("table", ident[1]); err != nil {
		return "", "", err
	}
	return ident[0], ident[1], nil
}

func checkNamespace(ns table.Identifier) (string, error) {
	if len(ns) != 1 || ns[0] == "" {
		return "", fmt.Errorf("%w: namespaces have one level, got %q", catalog.ErrNoSuchNamespace, strings.Join(ns, "."))
	}
	if _, err := NameSegment("database", ns[0]); err != nil {
		return "", err
	}
	return ns[0], nil
}

// ---- namespaces

func (w *Warehouse) CheckNamespaceExists(ctx context.Context, ns table.Identifier) (bool, error) {
	name, err := checkNamespace(ns)
	if err != nil {
		return false, nil
	}
	entries, err := w.store.List(ctx, w.root)
	if err != nil {
		return false, fmt.Errorf("list warehouse %s: %w", w.root, err)
	}
	for _, e := range entries {
		if e.IsDir && e.Name == seg(name) {
			return true, nil
		}
	}
	return false, nil
}

func (w *Warehouse) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	name, err := checkNamespace(ns)
	if err != nil {
		return err
	}
	exists, err := w.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return err
	}
	if exists {
		return fmt.Errorf("%w: %s", catalog.ErrNamespaceAlreadyExists, name)
	}
	others, err := w.ListNamespaces(ctx, nil)
	if err != nil {
		return err
	}
	for _, o := range others {
		if strings.EqualFold(o[0], name) {
			return fmt.Errorf("%w: %s (as %s)", catalog.ErrNamespaceAlreadyExists, name, o[0])
		}
	}
	folder := w.nsFolder(name)
	if err := Inside(w.root, folder, true); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	if err := w.checkNamespaceLocation(name, props); err != nil { // nslocation.go
		return err
	}
	if err := w.store.MakeFolder(ctx, folder); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	// The properties file also makes the namespace exist on object stores,
	// where a prefix exists only while an object lives under it.
	if props == nil {
		props = iceberg.Properties{}
	}
	if err := w.writeNamespaceProps(ctx, name, props); err != nil {
		// On a local disk the folder alone is the namespace: take it back,
		// so that a failed CREATE DATABASE leaves nothing behind.
		if rerr := w.store.RemoveAll(ctx, folder); rerr != nil {
			return fmt.Errorf("%w (the folder %s it made is left: %w)", err, folder, rerr)
		}
		return err
	}
	return nil
}

// DropNamespace drops the namespace with all its tables, as MySQL's DROP
// DATABASE does. Every table of a namespace lives under its folder, since
// renames stay within a namespace.
func (w *Warehouse) DropNamespace(ctx context.Context, ns table.Identifier) error {
	name, err := checkNamespace(ns)
	if err != nil {
		return err
	}
	exists, err := w.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchNamespace, name)
	}
	folder := w.nsFolder(name)
	if err := Inside(w.root, folder, true); err != nil {
		return fmt.Errorf("drop namespace %s: %w", name, err)
	}
	// Views and tables go one by one, each unreachable before its files
	// are deleted, so that a failure midway leaves every object either
	// whole or gone, never half-deleted; the folder goes last.
	views, err := w.viewNames(ctx, ns)
	if err != nil {
		return fmt.Errorf("drop namespace %s: %w", name, err)
	}
	for _, v := range views {
		if err := w.DropView(ctx, table.Identifier{name, v}); err != nil && !errors.Is(err, ErrFilesLeft) {
			return fmt.Errorf("drop namespace %s: %w", name, err)
		}
	}
	tables, err := w.tableNames(ctx, ns)
	if err != nil {
		return fmt.Errorf("drop namespace %s: %w", name, err)
	}
	for _, t := range tables {
		if err := w.DropTable(ctx, table.Identifier{name, t}); err != nil && !errors.Is(err, ErrFilesLeft) {
			return fmt.Errorf("drop namespace %s: %w", name, err)
		}
	}
	if err := w.store.RemoveAll(ctx, folder); err != nil {
		return fmt.Errorf("drop namespace %s: %w", name, err)
	}
	return nil
}

func (w *Warehouse) ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error) {
	if len(parent) > 0 {
		return nil, nil // namespaces have one level
	}
	entries, err := w.store.List(ctx, w.root)
	if err != nil {
		return nil, fmt.Errorf("list warehouse %s: %w", w.root, err)
	}
	var out []table.Identifier
	for _, e := range entries {
		if n, ok := SegmentName(e.Name); ok && e.IsDir {
			out = append(out, table.Identifier{n})
		}
	}
	return out, nil
}

// LoadNamespaceProperties is the namespace's properties, with its location
// as the warehouse keeps it (answeredProperties, nslocation.go).
func (w *Warehouse) LoadNamespaceProperties(ctx context.Context, ns table.Identifier) (iceberg.Properties, error) {
	props, err := w.storedNamespaceProperties(ctx, ns)
	if err != nil {
		return nil, err
	}
	return w.answeredProperties(ns[0], props), nil
}

// storedNamespaceProperties is the namespace's properties file as it is.
func (w *Warehouse) storedNamespaceProperties(ctx context.Context, ns table.Identifier) (iceberg.Properties, error) {
	name, err := checkNamespace(ns)
	if err != nil {
		return nil, err
	}
	exists, err := w.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("%w: %s", catalog.ErrNoSuchNamespace, name)
	}
	data, err := w.store.ReadFile(ctx, Join(w.hiddenDir(name), "namespace.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return iceberg.Properties{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read properties of namespace %s: %w", name, err)
	}
	props := iceberg.Properties{}
	if err := json.Unmarshal(data, &props); err != nil {
		return nil, fmt.Errorf("read properties of namespace %s: %w", name, err)
	}
	return props, nil
}

func (w *Warehouse) UpdateNamespaceProperties(ctx context.Context, ns table.Identifier, removals []string, updates iceberg.Properties) (catalog.PropertiesUpdateSummary, error) {
	props, err := w.storedNamespaceProperties(ctx, ns)
	if err != nil {
		return catalog.PropertiesUpdateSummary{}, err
	}
	if err := w.checkNamespaceLocation(ns[0], updates); err != nil { // nslocation.go
		return catalog.PropertiesUpdateSummary{}, err
	}
	var sum catalog.PropertiesUpdateSummary
	for _, k := range removals {
		if _, ok := props[k]; ok {
			delete(props, k)
			sum.Removed = append(sum.Removed, k)
		} else {
			sum.Missing = append(sum.Missing, k)
		}
	}
	for k, v := range updates {
		props[k] = v
		sum.Updated = append(sum.Updated, k)
	}
	return sum, w.writeNamespaceProps(ctx, ns[0], props)
}

func (w *Warehouse) writeNamespaceProps(ctx context.Context, ns string, props iceberg.Properties) error {
	data, err := json.Marshal(props)
	if err != nil {
		return err
	}
	if err := w.store.WriteFile(ctx, Join(w.hiddenDir(ns), "namespace.json"), data); err != nil {
		return fmt.Errorf("write properties of namespace %s: %w", ns, err)
	}
	return nil
}

// ---- resolving table names to locations

type link struct {
	Location string `json:"location"`
	// Metadata is set for a table registered with register_table: the
	// metadata file it was registered with, outside the Hadoop layout (see
	// register.go).
	Metadata string `json:"metadata,omitempty"`
}

// tableLocation resolves a table name to its root location; ok is false when
// no table has that name.
func (w *Warehouse) tableLocation(ctx context.Context, ns, name string) (loc string, ok bool, err error) {
	l, ok, err := w.lookup(ctx, ns, name)
	return l.Location, ok, err
}

// lookup resolves a table name to its link: the folder named after it, a
// link left by a rename, or a registered metadata file.
func (w *Warehouse) lookup(ctx context.Context, ns, name string) (l link, ok bool, err error) {
	if ok, err := w.readLink(ctx, w.linkFile(ns, name), "table", &l, func() bool { return l.Location != "" }); ok || err != nil {
		return l, ok, err
	}
	hidden, err := w.exists(ctx, w.hideMark(ns, name))
	if err != nil || hidden {
		return link{}, false, err
	}
	folder := w.tableFolder(ns, name)
	if _, cached := w.cachedCurrent(ctx, folder); cached {
		return link{Location: folder}, true, nil
	}
	v, err := w.latestVersion(ctx, folder)
	if err != nil {
		return link{}, false, err
	}
	return link{Location: folder}, v > 0, nil
}

func (w *Warehouse) exists(ctx context.Context, location string) (bool, error) {
	_, err := w.store.ReadFile(ctx, location)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

var metadataFileName = regexp.MustCompile(`^v(\d+)(\.gz)?\.metadata\.json$`)

// latestVersion lists <location>/metadata and returns the highest N of
// v<N>.metadata.json (or v<N>.gz.metadata.json, metagzip.go), or 0 when
// there is none. It does not trust version-hint.text, which a crashed
// writer may have left behind.
func (w *Warehouse) latestVersion(ctx context.Context, location string) (int, error) {
	v, _, err := w.latestFile(ctx, location)
	return v, err
}

// latestFile is latestVersion with the version's metadata file.
func (w *Warehouse) latestFile(ctx context.Context, location string) (latest int, file string, err error) {
	entries, err := w.store.List(ctx, Join(location, "metadata"))
	if err != nil {
		return 0, "", fmt.Errorf("list metadata of %s: %w", location, err)
	}
	gz := false
	for _, e := range entries {
		if m := metadataFileName.FindStringSubmatch(e.Name); m != nil {
			// Both names of one version (left by engines that disagree on
			// the codec): the plain one, as Java's Hadoop catalog looks.
			if v, err := strconv.Atoi(m[1]); err == nil && (v > latest || v == latest && gz && m[2] == "") {
				latest, gz = v, m[2] != ""
			}
		}
	}
	if latest == 0 {
		return 0, "", nil
	}
	return latest, metadataFileFor(location, latest, gz), nil
}

// metadataFile is the Hadoop layout's plain metadata file of version.
func metadataFile(location string, version int) string {
	return Join(location, "metadata", fmt.Sprintf("v%d.metadata.json", version))
}

// metadataFileFor is the metadata file of version, gzip-compressed or not.
func metadataFileFor(location string, version int, gz bool) string {
	if gz {
		return Join(location, "metadata", fmt.Sprintf("v%d.gz.metadata.json", version))
	}
	return metadataFile(location, version)
}

func (w *Warehouse) lockFor(location string) *sync.Mutex {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, ok := w.locks[location]
	if !ok {
		l = &sync.Mutex{}
		w.locks[location] = l
	}
	return l
}

// ---- tables

func (w *Warehouse) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	return identifiers(ns, func() ([]string, error) { return w.tableNames(ctx, ns) })
}

// identifiers yields namespace ns's objects of the names list returns.
func identifiers(ns table.Identifier, list func() ([]string, error)) iter.Seq2[table.Identifier, error] {
	return func(yield func(table.Identifier, error) bool) {
		names, err := list()
		if err != nil {
			yield(nil, err)
			return
		}
		for _, n := range names {
			if !yield(table.Identifier{ns[0], n}, nil) {
				return
			}
		}
	}
}

func (w *Warehouse) tableNames(ctx context.Context, ns table.Identifier) ([]string, error) {
	name, err := checkNamespace(ns)
	if err != nil {
		return nil, err
	}
	entries, err := w.store.List(ctx, w.nsFolder(name))
	if err != nil {
		return nil, fmt.Errorf("list namespace %s: %w", name, err)
	}
	set := map[string]bool{}
	for _, e := range entries {
		n, ok := SegmentName(e.Name)
		if !ok || !e.IsDir {
			continue
		}
		if _, ok, err := w.tableLocation(ctx, name, n); err != nil {
			return nil, err
		} else if ok {
			set[n] = true
		}
	}
	links, err := w.store.List(ctx, Join(w.hiddenDir(name), "links"))
	if err != nil {
		return nil, fmt.Errorf("list table links of %s: %w", name, err)
	}
	for _, e := range links {
		if key, ok := strings.CutSuffix(e.Name, ".json"); ok && !e.IsDir {
			if n, ok := SegmentName(key); ok {
				set[n] = true
			}
		}
	}
	names := slices.Collect(maps.Keys(set))
	sort.Strings(names)
	return names, nil
}

func (w *Warehouse) CheckTableExists(ctx context.Context, ident table.Identifier) (bool, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return false, nil
	}
	_, ok, err := w.tableLocation(ctx, ns, name)
	return ok, err
}

func (w *Warehouse) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, err
	}
	l, ok, err := w.lookup(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchTable, ns, name)
	}
	cur, err := w.loadLink(ctx, l)
	meta, metaLoc := cur.meta, cur.file
	if err != nil {
		return nil, fmt.Errorf("load table %s.%s: %w", ns, name, err)
	}
	if meta == nil {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchTable, ns, name)
	}
	return w.newTable(ident, meta, metaLoc), nil
}

func (w *Warehouse) newTable(ident table.Identifier, meta table.Metadata, metaLoc string) *table.Table {
	fsys := withRawLocation(TableIO(w.store.IO()), meta.Location())
	return table.New(ident, w.served(meta), metaLoc, func(context.Context) (icebergio.IO, error) { return fsys, nil }, w)
}

// loadCurrent reads the newest metadata under a table root; meta is nil when
// the table has no metadata yet.
func (w *Warehouse) loadCurrent(ctx context.Context, location string) (meta table.Metadata, metaLoc string, version int, err error) {
	if cm, ok := w.cachedCurrent(ctx, location); ok {
		return cm.meta, cm.metaLoc, cm.version, nil
	}
	version, metaLoc, err = w.latestFile(ctx, location)
	if err != nil || version == 0 {
		return nil, "", version, err
	}
	data, err := w.store.ReadFile(ctx, metaLoc)
	if err != nil {
		return nil, "", 0, fmt.Errorf("read %s: %w", metaLoc, err)
	}
	meta, err = ParseMetadata(data)
	if err != nil {
		return nil, "", 0, fmt.Errorf("parse %s: %w", metaLoc, err)
	}
	meta = share(meta)
	w.remember(ctx, location, version, metaLoc, meta)
	return meta, metaLoc, version, nil
}

func (w *Warehouse) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	var cfg catalog.CreateTableCfg
	for _, o := range opts {
		o(&cfg)
	}
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, err
	}
	if err := w.checkNewName(ctx, ns, name); err != nil {
		return nil, err
	}
	if cfg.Location != "" {
		return nil, fmt.Errorf("create table %s.%s: the embedded catalog places tables itself; LOCATION is not supported", ns, name)
	}

	loc, linked, err := w.placeTable(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	meta, err := table.NewMetadata(sc, cfg.PartitionSpec, cfg.SortOrder, loc, cfg.Properties)
	if err != nil {
		return nil, fmt.Errorf("create table %s.%s: %w", ns, name, err)
	}
	return w.createWith(ctx, ident, meta, linked)
}

// placeTable is the location a new table ns.name gets: the folder named
// after it, unless that folder still holds a table renamed away from it;
// then the new table gets a folder of its own and linked is true.
func (w *Warehouse) placeTable(ctx context.Context, ns, name string) (loc string, linked bool, err error) {
	loc = w.tableFolder(ns, name)
	if v, err := w.latestVersion(ctx, loc); err != nil {
		return "", false, err
	} else if v > 0 {
		loc = Join(w.hiddenDir(ns), "tables", seg(name)+"-"+newID())
		linked = true
	} else if err := w.store.Remove(ctx, w.hideMark(ns, name)); err != nil {
		// A mark a failed DROP TABLE left behind would hide the new table.
		return "", false, fmt.Errorf("create table %s.%s: %w", ns, name, err)
	}
	if err := Inside(w.nsFolder(ns), loc, true); err != nil {
		return "", false, fmt.Errorf("create table %s.%s: %w", ns, name, err)
	}
	return loc, linked, nil
}

// createWith creates the table ident with meta as its first metadata, at
// meta's location, which placeTable chose.
func (w *Warehouse) createWith(ctx context.Context, ident table.Identifier, meta table.Metadata, linked bool) (*table.Table, error) {
	ns, name := ident[0], ident[1]
	loc := meta.Location()
	metaLoc := metadataFileFor(loc, 1, gzipCodec(meta))
	meta, err := w.writeMetadata(ctx, metaLoc, meta)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s.%s", catalog.ErrTableAlreadyExists, ns, name)
		}
		return nil, fmt.Errorf("create table %s.%s: %w", ns, name, err)
	}
	if linked {
		if err := w.bind(ctx, ns, name, loc); err != nil {
			w.store.RemoveAll(ctx, loc)
			return nil, err
		}
	}
	w.writeVersionHint(ctx, loc, 1)
	return w.newTable(ident, meta, metaLoc), nil
}

// checkNewName checks that name may name a new table in namespace ns: the
// namespace exists, the name is a valid folder name, and no table has it.
func (w *Warehouse) checkNewName(ctx context.Context, ns, name string) error {
	if exists, err := w.CheckNamespaceExists(ctx, table.Identifier{ns}); err != nil {
		return err
	} else if !exists {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchNamespace, ns)
	}
	if _, ok, err := w.tableLocation(ctx, ns, name); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %s.%s", catalog.ErrTableAlreadyExists, ns, name)
	}
	if err := w.checkNoCaseTwin(ctx, ns, name, ""); err != nil {
		return err
	}
	return w.checkNoView(ctx, ns, name)
}

// checkNoCaseTwin fails when another table's name equals name but for case
// (except, the table being renamed, aside): names resolve ignoring case, and
// a case-insensitive file system would give both one folder.
func (w *Warehouse) checkNoCaseTwin(ctx context.Context, ns, name, except string) error {
	names, err := w.tableNames(ctx, table.Identifier{ns})
	if err != nil {
		return err
	}
	for _, n := range names {
		if n != except && n != name && strings.EqualFold(n, name) {
			return fmt.Errorf("%w: %s.%s (as %s)", catalog.ErrTableAlreadyExists, ns, name, n)
		}
	}
	return nil
}

// checkNoView fails when a view has the name: tables and views share names.
func (w *Warehouse) checkNoView(ctx context.Context, ns, name string) error {
	if _, ok, err := w.lookupView(ctx, ns, name); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %s.%s is a view", catalog.ErrTableAlreadyExists, ns, name)
	}
	return nil
}

// bind makes name resolve to location: a link, or nothing when location is
// the folder named after the table (then only a hidden mark is cleared).
func (w *Warehouse) bind(ctx context.Context, ns, name, location string) error {
	return w.bindLink(ctx, ns, name, link{Location: location})
}

// bindLink makes name resolve to l.
func (w *Warehouse) bindLink(ctx context.Context, ns, name string, l link) error {
	if l.Metadata == "" && l.Location == w.tableFolder(ns, name) {
		return w.store.Remove(ctx, w.hideMark(ns, name))
	}
	if err := w.writeLink(ctx, w.linkFile(ns, name), l); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s.%s", catalog.ErrTableAlreadyExists, ns, name)
		}
		return fmt.Errorf("link table %s.%s: %w", ns, name, err)
	}
	return nil
}

// unbind makes name stop resolving, leaving the table's files where they
// are. The folder named after the table is marked hidden before the link
// goes: the mark is ignored while a link exists, and the link's removal is
// the one step that makes the name stop resolving. A failure before it
// changes nothing a reader sees.
func (w *Warehouse) unbind(ctx context.Context, ns, name string) error {
	if v, err := w.latestVersion(ctx, w.tableFolder(ns, name)); err != nil {
		return err
	} else if v > 0 {
		if err := w.store.WriteFile(ctx, w.hideMark(ns, name), nil); err != nil {
			return err
		}
	}
	return w.store.Remove(ctx, w.linkFile(ns, name))
}

// writeMetadata writes meta at location and returns the metadata as
// written: where iceberg-go escaped the table's location in the locations
// it made (rawlocation.go), the file names them as they are, and so does
// the metadata returned.
func (w *Warehouse) writeMetadata(ctx context.Context, location string, meta table.Metadata) (table.Metadata, error) {
	return w.writeMetadataThen(ctx, location, meta, nil)
}

// writeMetadataThen is writeMetadata that runs linked, when set, as soon as
// the file exists (see createOnceParts).
func (w *Warehouse) writeMetadataThen(ctx context.Context, location string, meta table.Metadata, linked func()) (table.Metadata, error) {
	// Field defaults live in the schemas, before the snapshot list.
	defaultsChanged := false
	parts, err := w.metas.snaps.encodeMetadata(meta, func(head []byte) ([]byte, error) {
		out, err := specDefaults(head)
		defaultsChanged = err == nil && (!bytes.Equal(out, head) || specFormDefaults(head))
		return out, err
	})
	if err != nil {
		return nil, fmt.Errorf("encode table metadata: %w", err)
	}
	locationsChanged := false
	if _, _, escaped := escapedLocation(meta.Location()); escaped {
		data := bytes.Join(parts, nil)
		raw, err := rawMetadataJSON(data, meta.Location())
		if err != nil {
			return nil, fmt.Errorf("encode table metadata: %w", err)
		}
		parts, locationsChanged = [][]byte{raw}, !bytes.Equal(raw, data)
	}
	file := parts
	if gzipMetadataFile(location) {
		file = w.metas.snaps.gzipParts(meta.TableUUID(), parts)
	}
	if err := createOnceParts(ctx, w.store, location, file, linked); err != nil {
		return nil, err
	}
	if !defaultsChanged && !locationsChanged {
		return meta, nil
	}
	raw := bytes.Join(parts, nil)
	// Read back as loading reads it: the locations as written, and field
	// defaults a client sent in the spec's form as the values iceberg-go
	// reads (defaults.go).
	written, err := ParseMetadata(raw)
	if err != nil {
		return nil, fmt.Errorf("read back table metadata %s: %w", location, err)
	}
	return share(written), nil
}

// writeVersionHint keeps version-hint.text current for readers that use it
// (Spark's hadoop catalog, DuckDB). It is a hint: a failure is harmless.
func (w *Warehouse) writeVersionHint(ctx context.Context, location string, version int) {
	loc, data := Join(location, "metadata", "version-hint.text"), []byte(strconv.Itoa(version))
	if h, ok := w.store.(hintWriter); ok {
		_ = h.WriteHint(ctx, loc, data)
		return
	}
	_ = w.store.WriteFile(ctx, loc, data)
}

// DropTable removes the table and its files, as Iceberg's Hadoop catalog
// does: in this layout the folder is the catalog entry.
func (w *Warehouse) DropTable(ctx context.Context, ident table.Identifier) error {
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
	loc := l.Location
	if l.Metadata == "" {
		if err := Inside(w.nsFolder(ns), loc, true); err != nil {
			return fmt.Errorf("drop table %s.%s: %w", ns, name, err)
		}
	}
	// The name stops resolving first, in one step; only then are files
	// deleted. A failure before that step leaves the table as it was; a
	// failure after it leaves unreachable files, never half a table.
	if err := w.unbind(ctx, ns, name); err != nil {
		return fmt.Errorf("drop table %s.%s: %w", ns, name, err)
	}
	w.metas.forget(l.Location)
	if l.Metadata != "" {
		return nil // a registered table's files belong to whoever wrote it
	}
	if err := w.store.RemoveAll(ctx, loc); err != nil {
		return fmt.Errorf("%w: drop table %s.%s: the table is dropped, but deleting its files under %s failed: %w", ErrFilesLeft, ns, name, loc, err)
	}
	// The folder's name is free again once its own files are gone; a linked
	// table's name may hide another table's folder, which must stay hidden.
	// A mark left by a failure here is cleared by the next CREATE TABLE.
	if loc == w.tableFolder(ns, name) {
		if err := w.store.Remove(ctx, w.hideMark(ns, name)); err != nil {
			return fmt.Errorf("%w: drop table %s.%s: %w", ErrFilesLeft, ns, name, err)
		}
	}
	return nil
}

// ErrFilesLeft says an object was dropped, and so is gone for every reader,
// but some of its files could not be deleted; remove_orphan_files or a
// later DROP DATABASE deletes them. Callers report it as a warning.
var ErrFilesLeft = errors.New("dropped, but files were left behind")

// RenameTable renames within a namespace without moving a file: the new name
// is bound to the table's location first, then the old name unbound, so a
// crash in between leaves the table reachable under both names, never none.
func (w *Warehouse) RenameTable(ctx context.Context, from, to table.Identifier) (*table.Table, error) {
	fns, fname, err := splitIdent(from)
	if err != nil {
		return nil, err
	}
	tns, tname, err := splitIdent(to)
	if err != nil {
		return nil, err
	}
	if fns != tns {
		return nil, fmt.Errorf("rename %s.%s to %s.%s: tables can be renamed within their namespace only, "+
			"because a table's folder stays in its namespace", fns, fname, tns, tname)
	}
	l, ok, err := w.lookup(ctx, fns, fname)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchTable, fns, fname)
	}
	if _, exists, err := w.tableLocation(ctx, tns, tname); err != nil {
		return nil, err
	} else if exists {
		return nil, fmt.Errorf("%w: %s.%s", catalog.ErrTableAlreadyExists, tns, tname)
	}
	if err := w.checkNoCaseTwin(ctx, tns, tname, fname); err != nil {
		return nil, err
	}
	if err := w.checkNoView(ctx, tns, tname); err != nil {
		return nil, err
	}
	if err := w.bindLink(ctx, tns, tname, l); err != nil {
		return nil, err
	}
	if err := w.unbind(ctx, fns, fname); err != nil {
		return nil, fmt.Errorf("rename %s.%s: %w", fns, fname, err)
	}
	return w.LoadTable(ctx, to)
}

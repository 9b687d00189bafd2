package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// A local warehouse that icesql serve has served through its S3 API has
// two spellings for each of its files: file://<root>/KEY and
// s3://BUCKET/KEY. Other engines reach the warehouse through the REST
// catalog and the S3 API, and the manifests and manifest lists they write
// name their files by the second. icesql reads both (the store and its
// file IO map the served buckets to the folder) and compares files by one
// spelling (FileLocation). It writes the second only when asked to
// (icesql serve --s3-locations; locationOverlay), so that a client with
// only an S3 file IO reads every table: such names cannot be read by the
// engines that open the folder directly, which the Hadoop layout promises.
//
// The metadata files keep the table's file:// location, so the
// warehouse's placement and containment checks, and engines that open the
// folder directly, see what they always saw; the REST catalog translates
// it at its edge (restserve.S3).
//
// Which buckets the warehouse was served as is recorded in it, so that
// every later opening of the folder (icesql sql, a server with another
// --bucket) reads and writes the same names:
//
//	<root>/.icesql/buckets/<name>   every bucket ever served (read)
//	<root>/.icesql/bucket           the one icesql's writes name (the last served with
//	                                writeNames; absent when the last serving did not ask)

// bucketMap holds the served buckets of one warehouse. The warehouse's
// store and file IO share it, so that a bucket served while tables are in
// use is seen by every later opening of a file.
type bucketMap struct {
	cur atomic.Pointer[servedBuckets]
}

type servedBuckets struct {
	remap *PathRemap // s3://NAME/ to the folder, for every recorded bucket
	write string     // the bucket icesql's writes name; "" for none
}

// apply maps a served bucket's location to the folder's file.
func (b *bucketMap) apply(location string) string {
	if b == nil {
		return location
	}
	if s := b.cur.Load(); s != nil {
		return s.remap.Apply(location)
	}
	return location
}

// writeBucket is the bucket icesql's writes name, or "".
func (b *bucketMap) writeBucket() string {
	if s := b.cur.Load(); s != nil {
		return s.write
	}
	return ""
}

// ServeBucket makes the S3 locations of bucket, the one icesql serve's S3
// API serves over this (local) warehouse folder, name the folder's files:
// s3://BUCKET/KEY is <root>/KEY. With writeNames, tables loaded afterwards
// write files under such names (see locationOverlay); without, icesql
// writes file:// names (again). The choice is recorded in the warehouse.
// It does nothing for a warehouse that is not on the local file system,
// and may be called while tables are in use.
func (w *Warehouse) ServeBucket(ctx context.Context, bucket string, writeNames bool) error {
	if _, err := osPath(w.root); err != nil || bucket == "" {
		return nil
	}
	if err := w.store.WriteFile(ctx, Join(w.bucketsDir(), seg(bucket)), nil); err != nil {
		return fmt.Errorf("record the served bucket %s: %w", bucket, err)
	}
	if writeNames {
		if err := w.store.WriteFile(ctx, w.bucketFile(), []byte(bucket+"\n")); err != nil {
			return fmt.Errorf("record the served bucket %s: %w", bucket, err)
		}
	} else if err := w.store.Remove(ctx, w.bucketFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("record that icesql writes file:// names: %w", err)
	}
	return w.loadBuckets(ctx)
}

func (w *Warehouse) bucketsDir() string { return Join(w.root, ".icesql", "buckets") }
func (w *Warehouse) bucketFile() string { return Join(w.root, ".icesql", "bucket") }

// WriteBucket is the bucket whose s3:// names icesql writes into this
// warehouse's tables ("" when it was never served).
func (w *Warehouse) WriteBucket() string { return w.buckets.writeBucket() }

// loadBuckets maps every bucket recorded in the warehouse (ServeBucket).
func (w *Warehouse) loadBuckets(ctx context.Context) error {
	if _, err := osPath(w.root); err != nil {
		return nil
	}
	entries, err := w.store.List(ctx, w.bucketsDir())
	if err != nil {
		return fmt.Errorf("read the served buckets: %w", err)
	}
	data, err := w.store.ReadFile(ctx, w.bucketFile())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the served bucket: %w", err)
	}
	write := strings.TrimSpace(string(data))
	if len(entries) == 0 && write == "" {
		return nil
	}
	m := map[string]string{}
	for _, e := range entries {
		if !e.IsDir {
			m["s3://"+e.Name+"/"] = w.root + "/"
		}
	}
	if write != "" {
		m["s3://"+write+"/"] = w.root + "/"
	}
	w.buckets.cur.Store(&servedBuckets{remap: NewPathRemap(m), write: write})
	return nil
}

// served is meta as icesql's writers see it: under a served bucket, with
// the table's location in the bucket (locationOverlay); otherwise meta.
func (w *Warehouse) served(meta table.Metadata) table.Metadata {
	bucket := w.buckets.writeBucket()
	if meta == nil || bucket == "" {
		return meta
	}
	if o, ok := meta.(*locationOverlay); ok {
		meta = o.Metadata
	}
	rest, ok := strings.CutPrefix(strings.TrimRight(meta.Location(), "/"), w.root+"/")
	if !ok {
		return meta // a table placed outside the warehouse folder keeps its names
	}
	loc := "s3://" + bucket + "/" + rest
	// iceberg-go joins file names to the location as a URL: a location it
	// would escape would name other keys, so such a table keeps its names.
	if u, err := url.Parse(loc); err != nil || u.JoinPath("x").String() != loc+"/x" {
		return meta
	}
	return &locationOverlay{Metadata: meta, location: loc}
}

// storedUpdates is updates with a set-location to the served bucket's
// spelling of a location (a client's replace transaction sends back the
// location it was given) turned into the warehouse's.
func (w *Warehouse) storedUpdates(updates []table.Update) []table.Update {
	if w.buckets.writeBucket() == "" {
		return updates
	}
	var out []table.Update
	for i, u := range updates {
		if u.Action() != table.UpdateSetLocation {
			continue
		}
		data, err := json.Marshal(u)
		if err != nil {
			continue
		}
		var set struct {
			Location string `json:"location"`
		}
		if json.Unmarshal(data, &set) != nil {
			continue
		}
		if loc := w.buckets.apply(set.Location); loc != set.Location {
			if out == nil {
				out = slices.Clone(updates)
			}
			out[i] = table.NewSetLocationUpdate(strings.TrimRight(loc, "/"))
		}
	}
	if out == nil {
		return updates
	}
	return out
}

// locationOverlay is a table's metadata with its location in the served
// bucket: iceberg-go names the data files, delete files, manifests and
// manifest lists it writes after the table's location, so they carry
// s3://BUCKET/ names. The stored metadata keeps its own location: the
// overlay is never written (MarshalJSON writes what is underneath), and a
// commit sends the catalog updates, not the location.
type locationOverlay struct {
	table.Metadata
	location string
}

func (m *locationOverlay) Location() string { return m.location }

// Equals compares the metadata underneath, with or without the overlay.
func (m *locationOverlay) Equals(other table.Metadata) bool {
	if o, ok := other.(*locationOverlay); ok {
		other = o.Metadata
	}
	return m.Metadata.Equals(other)
}

// MarshalJSON writes the metadata underneath, with its own location.
func (m *locationOverlay) MarshalJSON() ([]byte, error) { return json.Marshal(m.Metadata) }

// StoredLocation is a table's location as its metadata file records it,
// whatever spelling the table is handed out with (locationOverlay).
func StoredLocation(tbl *table.Table) string {
	meta := tbl.Metadata()
	if o, ok := meta.(*propertiesOverlay); ok {
		meta = o.Metadata
	}
	if o, ok := meta.(*locationOverlay); ok {
		return o.Metadata.Location()
	}
	return meta.Location()
}

// FileLocation is the one spelling of the file location names in fsys (a
// table's file IO), for comparing two locations: a served bucket's
// s3://BUCKET/KEY is the folder's file, and file:///x, file:/x and /x are
// file:///x, cleaned. Locations in other stores are returned as they are.
func FileLocation(fsys icebergio.IO, location string) string {
	for {
		switch x := fsys.(type) {
		case rawLocationIO:
			location, fsys = x.name(location), x.IO
		case manifestRepairIO:
			fsys = x.IO
		case remapIO:
			location, fsys = x.remap.Apply(location), x.io
		case localIO:
			return localFileLocation(x.buckets.apply(location))
		default:
			return location
		}
	}
}

// localFileLocation is a local location as file:///x, cleaned; a location
// that is not local, or not absolute, is returned as it is.
func localFileLocation(location string) string {
	p, err := osPath(location)
	if err != nil || !filepath.IsAbs(p) {
		return location
	}
	return "file://" + path.Clean(filepath.ToSlash(p))
}

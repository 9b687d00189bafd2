package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/apache/iceberg-go/table"
)

// A small commit used to read its table's newest metadata three times
// (the statement's pinned snapshot, the append's base, the commit's
// requirement check), and each read listed metadata/ and parsed the whole
// JSON, whose snapshot list grows with every commit. metaCache keeps the
// parsed metadata of each table's newest version, so a load costs three stats
// while nothing changed.
//
// A cached version N is current when its file (v<N>.metadata.json or
// v<N>.gz.metadata.json) still carries the stamp (size, modification time)
// it had when read, and v<N+1> exists under neither name. Versions are
// contiguous: every writer, this one and the Hadoop catalogs of other
// engines, publishes N+1 only after reading N, so a newer
// version cannot exist without N+1. The stamp catches a table dropped and
// re-created at the same location up to the same version.

// FileStamp identifies one version of a file well enough to tell it from a
// file written later at the same location.
type FileStamp struct {
	Size    int64
	ModTime time.Time
}

// Stater is implemented by stores that can stat a file cheaply; the
// warehouse caches parsed metadata only on such stores.
type Stater interface {
	// Stat returns the stamp of the file at location; fs.ErrNotExist when absent.
	Stat(ctx context.Context, location string) (FileStamp, error)
}

func (s LocalStore) Stat(_ context.Context, location string) (FileStamp, error) {
	p, err := s.path(location)
	if err != nil {
		return FileStamp{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return FileStamp{}, err
	}
	return FileStamp{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

type cachedMeta struct {
	version int
	metaLoc string
	meta    table.Metadata // never modified: iceberg-go builds new metadata from a clone
	stamp   FileStamp
}

// metaCache maps a table location to its newest metadata seen. The zero
// value is ready to use.
type metaCache struct {
	mu sync.Mutex
	m  map[string]cachedMeta

	snaps snapshotEncodings // encoded snapshots per table, for writing the next version (metaencode.go)
}

func (c *metaCache) get(location string) (cachedMeta, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, ok := c.m[location]
	return cm, ok
}

func (c *metaCache) put(location string, cm cachedMeta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedMeta{}
	}
	// Concurrent loads may finish out of order; never go back a version.
	if old, ok := c.m[location]; ok && old.version > cm.version {
		return
	}
	c.m[location] = cm
}

func (c *metaCache) forget(location string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cm, ok := c.m[location]; ok {
		c.snaps.forget(cm.meta.TableUUID())
	}
	delete(c.m, location)
}

// cachedCurrent returns the table's newest metadata from the cache when it
// is provably still the newest.
func (w *Warehouse) cachedCurrent(ctx context.Context, location string) (cachedMeta, bool) {
	st, ok := w.store.(Stater)
	if !ok {
		return cachedMeta{}, false
	}
	cm, ok := w.metas.get(location)
	if !ok {
		return cachedMeta{}, false
	}
	for _, gz := range []bool{gzipCodec(cm.meta), !gzipCodec(cm.meta)} {
		if _, err := st.Stat(ctx, metadataFileFor(location, cm.version+1, gz)); !errors.Is(err, fs.ErrNotExist) {
			return cachedMeta{}, false
		}
	}
	stamp, err := st.Stat(ctx, cm.metaLoc)
	if err != nil || !stamp.ModTime.Equal(cm.stamp.ModTime) || stamp.Size != cm.stamp.Size {
		w.metas.forget(location)
		return cachedMeta{}, false
	}
	return cm, true
}

// remember caches meta as version of the table at location, read from (or
// just written to) metaLoc.
func (w *Warehouse) remember(ctx context.Context, location string, version int, metaLoc string, meta table.Metadata) {
	st, ok := w.store.(Stater)
	if !ok || meta == nil {
		return
	}
	stamp, err := st.Stat(ctx, metaLoc)
	if err != nil {
		return
	}
	w.metas.put(location, cachedMeta{version: version, metaLoc: metaLoc, meta: meta, stamp: stamp})
}

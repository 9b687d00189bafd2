package storage

import (
	"context"
	"fmt"

	icebergio "github.com/apache/iceberg-go/io"
)

// ServeBucket makes the S3 locations of bucket, the one icesql serve's S3
// API serves over this (local) warehouse folder, name the folder's files:
// s3://BUCKET/KEY is <root>/KEY. Other engines reach the warehouse through
// the REST catalog and the S3 API, and the manifests and manifest lists they
// write name their files so; icesql reads those tables through the same
// mapping. The bucket's name is recorded in the warehouse
// (<root>/.icesql/buckets/<name>), so that every later opening of the
// folder (icesql sql, a server with another --bucket) reads those tables
// too. Locations icesql writes stay file:// ones. It does nothing for a
// warehouse that is not on the local file system, and may be called while
// tables are in use (tables loaded afterwards see the mapping).
func (w *Warehouse) ServeBucket(ctx context.Context, bucket string) error {
	if _, err := osPath(w.root); err != nil || bucket == "" {
		return nil
	}
	if err := w.store.WriteFile(ctx, Join(w.bucketsDir(), seg(bucket)), nil); err != nil {
		return fmt.Errorf("record the served bucket %s: %w", bucket, err)
	}
	return w.loadBuckets(ctx)
}

func (w *Warehouse) bucketsDir() string { return Join(w.root, ".icesql", "buckets") }

// loadBuckets maps every bucket recorded in the warehouse (ServeBucket).
func (w *Warehouse) loadBuckets(ctx context.Context) error {
	if _, err := osPath(w.root); err != nil {
		return nil
	}
	entries, err := w.store.List(ctx, w.bucketsDir())
	if err != nil {
		return fmt.Errorf("read the served buckets: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, e := range entries {
		if !e.IsDir {
			m["s3://"+e.Name+"/"] = w.root + "/"
		}
	}
	w.bucket.Store(NewPathRemap(m))
	return nil
}

// tableStoreIO is the store's file IO, with the served buckets' mapping
// (ServeBucket) for a local store.
func (w *Warehouse) tableStoreIO() icebergio.IO {
	fsys := w.store.IO()
	if l, ok := fsys.(localIO); ok {
		l.bucket = w.bucket.Load()
		return l
	}
	return fsys
}

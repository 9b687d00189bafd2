package storage

import icebergio "github.com/apache/iceberg-go/io"

// ServeBucket makes the S3 locations of bucket, the one icesql serve's S3
// API serves over this (local) warehouse folder, name the folder's files:
// s3://BUCKET/KEY is <root>/KEY. Other engines reach the warehouse through
// the REST catalog and the S3 API, and the manifests and manifest lists they
// write name their files so; icesql reads those tables through the same
// mapping. Locations icesql writes stay file:// ones. It does nothing for
// a warehouse that is not on the local file system, and may be called
// while tables are in use (tables loaded afterwards see the mapping).
func (w *Warehouse) ServeBucket(bucket string) {
	if _, err := osPath(w.root); err != nil || bucket == "" {
		return
	}
	w.bucket.Store(NewPathRemap(map[string]string{"s3://" + bucket + "/": w.root + "/"}))
}

// tableStoreIO is the store's file IO, with the served bucket's mapping
// (ServeBucket) for a local store.
func (w *Warehouse) tableStoreIO() icebergio.IO {
	fsys := w.store.IO()
	if l, ok := fsys.(localIO); ok {
		l.bucket = w.bucket.Load()
		return l
	}
	return fsys
}

package storage

import "os"

// BackgroundSyncs syncs closed files in the background and lets a later
// write wait for every sync started before it: how a commit is durable
// without waiting for each file it names as that file is written
// (durable.go). The S3 API over a local warehouse (storage/s3serve) shares
// the warehouse store's, so that a file PUT through it is on disk before
// any commit after the PUT, through the REST catalog or SQL, is
// acknowledged.
type BackgroundSyncs struct{ d *deferredSyncs }

// NewBackgroundSyncs returns background syncs of their own (an S3 API
// without a warehouse catalog).
func NewBackgroundSyncs() *BackgroundSyncs { return &BackgroundSyncs{d: newDeferredSyncs()} }

// BackgroundSyncs is the background syncs that the warehouse's commits
// wait for, or nil when its store syncs each file as it closes (every
// write must then sync at once).
func (w *Warehouse) BackgroundSyncs() *BackgroundSyncs {
	if ls, ok := w.store.(LocalStore); ok && ls.syncs != nil {
		return &BackgroundSyncs{d: ls.syncs}
	}
	return nil
}

// Start syncs f's contents, closes it and syncs the folder dir (which
// holds its name: f may have been renamed since it was opened), in the
// background.
func (b *BackgroundSyncs) Start(f *os.File, dir string) { b.d.startIn(f, dir) }

// Wait returns when every sync started before it has finished, with the
// first sync failure of its life if there was one (ErrSyncFailed: nothing
// may be acknowledged after it).
func (b *BackgroundSyncs) Wait() error { return b.d.wait() }

// SyncFolder syncs a folder's entries, so that the names created in it
// outlive a crash.
func SyncFolder(dir string) error { return syncDir(dir) }

// MkdirAllSynced makes the folder dir and its missing parents, syncing the
// parent of each folder it creates.
func MkdirAllSynced(dir string) error { return mkdirSynced(dir) }

package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// A commit is acknowledged only when what it names is on disk: a machine
// that crashes after COMMIT returns must come back with the table's new
// metadata file, and every manifest list, manifest and data file that
// metadata reaches. On a local disk that takes, for each file, an fsync of
// its contents and one of the folder holding its name (a new name lives
// in the folder, which the file's own fsync does not write). Data files,
// manifests and manifest lists are written through localIO, whose files
// sync when they close; the metadata file is linked into place by
// CreateExclusive, which syncs the folder after the link.
//
// Done one after the other, a single-row INSERT waited for eight syncs
// (data file, manifest and manifest list, each with its folder, then the
// metadata file and its folder), and on a busy disk each costs more than
// the rest of the commit. A LocalStore made by NewLocalStore therefore
// syncs closed files in the background (deferredSyncs): Close starts the
// sync of the file's contents and returns, and CreateExclusive, while the
// metadata file's contents sync, syncs the folders those files were
// created in (each once) and waits for every sync started before it; then
// it links the metadata file and syncs its folder. A commit waits for two
// syncs' time, one after the other, and still publishes nothing that is
// not on disk: everything the metadata file names is durable, contents
// and names, before the link that makes it the table's newest version,
// and the link is durable before the commit is acknowledged. Two is the
// least a create-exclusive by link(2) allows: the link must follow the
// syncs of what it publishes and be synced itself.

// syncedFile is a file created for writing that syncs its contents and its
// folder's entry for it when it is closed: at once, or in the background
// when syncs is set.
//
// With etag set, the bytes written are hashed and their MD5 is recorded as
// the file's ETag when it closes (etag.go).
type syncedFile struct {
	*os.File
	syncs *deferredSyncs
	etag  *etagHash
}

func (f syncedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if f.etag != nil {
		f.etag.Write(p[:n])
	}
	return n, err
}

func (f syncedFile) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// ReadFrom copies through Write, so that the bytes are hashed.
func (f syncedFile) ReadFrom(r io.Reader) (int64, error) {
	if f.etag == nil {
		return f.File.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{f}, r)
}

func (f syncedFile) Close() error {
	if f.etag != nil {
		f.etag.record(f.File)
	}
	if f.syncs != nil {
		f.syncs.start(f.File)
		return nil
	}
	return syncAndClose(f.File)
}

// syncAndClose syncs f's contents, closes it and syncs its folder. A
// folder that is gone by then was deleted with the file in it (a DROP
// TABLE or DROP DATABASE while a background sync was pending): nothing of
// it is left to make durable, and that is no failure.
func syncAndClose(f *os.File) error { return syncAndCloseIn(f, filepath.Dir(f.Name())) }

// syncAndCloseIn is syncAndClose of a file whose name is in the folder dir.
func syncAndCloseIn(f *os.File, dir string) error {
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// createSynced creates (or truncates) the file at p, making its folders.
// With syncs set, its Close syncs it in the background; with etag, it
// records its ETag.
func createSynced(p string, syncs *deferredSyncs, etag bool) (syncedFile, error) {
	if err := mkdirSynced(filepath.Dir(p)); err != nil {
		return syncedFile{}, err
	}
	f, err := os.Create(p)
	if err != nil {
		return syncedFile{}, err
	}
	sf := syncedFile{File: f, syncs: syncs}
	if etag {
		sf.etag = newETagHash()
	}
	return sf, nil
}

// mkdirSynced makes folder dir and its missing parents, syncing the parent
// of each folder it creates, so that the folders outlive a crash too.
func mkdirSynced(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// syncDir syncs a folder's entries.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// deferredSyncs runs the syncs of closed files in the background and lets a
// commit wait for those started before it.
//
// A file's contents and its folder's entry for it are synced separately,
// and need not be in order: both must be on disk before the metadata file
// that names the file is linked into place, and nothing before that link
// reaches the file, so a crash between the two syncs leaves an unreferenced
// file at worst, as a crash before either does. The contents sync as soon
// as the file closes; the folders are synced by the commit that waits
// (wait), once for all the files created in each since the last such sync:
// a single-row INSERT's manifest and manifest list share the metadata
// folder, so two of its syncs become one, run alongside the others.
//
// A failed sync cannot be retried: after fsync reports an error, Linux
// may have dropped the dirty pages it could not write and marked them
// clean, so a second fsync succeeds with the data lost. The first failure
// is therefore kept, and every later wait (every later commit of the
// process through this store) fails with it.
type deferredSyncs struct {
	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan struct{}
	// dirs holds the folders that have gained entries for files started
	// since their last sync began.
	dirs   map[string]bool
	failed error
}

func newDeferredSyncs() *deferredSyncs {
	return &deferredSyncs{pending: map[uint64]chan struct{}{}, dirs: map[string]bool{}}
}

// start syncs f's contents and closes it in the background; the next wait
// syncs its folder.
func (d *deferredSyncs) start(f *os.File) { d.startIn(f, filepath.Dir(f.Name())) }

// startIn is start of a file whose name is in the folder dir (an S3 PUT
// writes a temporary file that is renamed into dir).
func (d *deferredSyncs) startIn(f *os.File, dir string) {
	d.mu.Lock()
	d.dirs[dir] = true
	d.run(f.Name(), func() error {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	d.mu.Unlock()
}

// run runs sync in the background as a pending sync of name. d.mu is held.
func (d *deferredSyncs) run(name string, sync func() error) {
	done := make(chan struct{})
	id := d.next
	d.next++
	d.pending[id] = done
	go func() {
		err := sync()
		d.mu.Lock()
		if err != nil && d.failed == nil {
			d.failed = fmt.Errorf("%w: syncing %s: %v", ErrSyncFailed, name, err)
		}
		delete(d.pending, id)
		d.mu.Unlock()
		close(done)
	}()
}

// wait syncs the folders of the files started before it, and returns when
// those syncs and every sync started before it have finished, with the
// first sync failure of the store's life if there was one. A folder that
// is gone by then was deleted with the files in it (a DROP TABLE or DROP
// DATABASE while their syncs were pending): nothing of it is left to make
// durable, and that is no failure.
func (d *deferredSyncs) wait() error {
	d.mu.Lock()
	for dir := range d.dirs {
		d.run(dir, func() error {
			if err := syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		})
	}
	clear(d.dirs)
	waits := make([]chan struct{}, 0, len(d.pending))
	for _, c := range d.pending {
		waits = append(waits, c)
	}
	d.mu.Unlock()
	for _, c := range waits {
		<-c
	}
	return d.err()
}

// err is the first sync failure, if any.
func (d *deferredSyncs) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failed
}

// ErrSyncFailed says a file could not be made durable. Data the kernel
// failed to write may be lost for good, so no later commit of the process
// is acknowledged: restart it once the disk is healthy.
var ErrSyncFailed = errors.New("a file could not be synced to disk; no commit is accepted until icesql restarts")

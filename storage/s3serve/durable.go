package s3serve

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/icesql/icesql/storage"
)

// When is an object on disk? S3 acknowledges a PUT once the object is
// durable. Syncing each object before the answer costs a PUT an fsync of
// its content and one of its folder, and an engine writing a table PUTs
// many files: data files, delete files, manifests, a manifest list, and
// only then the one file that publishes them, a metadata file (created
// with If-None-Match: * by catalogs on object storage, or written by the
// REST catalog's commit). Nothing reaches the bulk files but through that
// publishing file, written after them. So:
//
//   - The bulk files of an Iceberg table, keys ending in .parquet, .avro,
//     .orc or .puffin, are answered once they are in place (readable by
//     every later request), and their content and folder sync in the
//     background at once.
//   - Every other object (metadata files, any key the S3 API does not know
//     the role of) and every PUT with If-None-Match: * is a barrier: it
//     waits for every background sync started before it, syncs its own
//     content before it becomes visible and its folder after, and only
//     then is acknowledged.
//   - The commits of the warehouse's catalog (REST or SQL) wait for the
//     same background syncs (storage.Warehouse.BackgroundSyncs) before
//     they publish.
//
// So a crash can lose a bulk file acknowledged a moment before (the time
// of its fsync), never one that a durable metadata file, and so a table,
// names: the file that would name it is acknowledged after it is synced.
// A background sync that fails fails every later barrier and commit of
// the process (storage.ErrSyncFailed), since its data may be gone.
// Multipart parts are not synced at all: a part lost in a crash fails its
// upload's completion (its ETag no longer matches), and the completed
// object is synced as a PUT of its key is.
//
// Without background syncs shared with the catalog (a store that syncs
// each file as it closes), every PUT is a barrier.

// deferrable says a PUT of key may sync in the background.
func deferrable(key string) bool {
	for _, ext := range []string{".parquet", ".avro", ".orc", ".puffin"} {
		if strings.HasSuffix(key, ext) {
			return true
		}
	}
	return false
}

// put moves the received file f to p (see place) and makes it durable as
// above; f is closed and its staged name removed.
func (s *Server) put(key string, f *os.File, p string, exclusive bool) (fs.FileInfo, error) {
	tmp := f.Name()
	defer os.Remove(tmp) // gone after a rename; the staged name after a link
	if s.syncs != nil && !exclusive && deferrable(key) {
		fi, err := s.place(key, tmp, p, exclusive)
		if err != nil {
			f.Close()
			return nil, err
		}
		s.syncs.Start(f, filepath.Dir(p))
		return fi, nil
	}
	defer f.Close()
	if s.syncs != nil {
		if err := s.syncs.Wait(); err != nil {
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	fi, err := s.place(key, tmp, p, exclusive)
	if err != nil {
		return nil, err
	}
	return fi, storage.SyncFolder(filepath.Dir(p))
}

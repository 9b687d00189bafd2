package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// Position deletes name their data file by a path string, and readers
// match it exactly (Java Iceberg and iceberg-go alike). Tables moved between
// file systems can spell one file two ways: Impala's test tables list data
// files as /test-warehouse/... in their manifests while their position
// delete files say hdfs://localhost:20500/test-warehouse/... — the same
// HDFS file, qualified with the default file system. iceberg-go then
// attaches no delete file to the data file and returns deleted rows.
//
// alignPositionDeletes finds such pairs through the store's canonical paths
// (storage.CanonicalPath: the same file after path remapping) and attaches
// the delete files to the task, with the data file presented under the
// spelling the delete file uses, so that iceberg-go's exact match applies
// them. Tables whose spellings agree are returned unchanged.
type alignedTasks struct {
	once  sync.Once
	tasks []table.FileScanTask
	err   error
}

func (a *alignedTasks) align(ctx context.Context, e *Engine, tbl *table.Table, snap *table.Snapshot, tasks []table.FileScanTask) ([]table.FileScanTask, error) {
	a.once.Do(func() { a.tasks, a.err = alignPositionDeletes(ctx, e.cfg.Store, &e.deletePaths, tbl, snap, tasks) })
	return a.tasks, a.err
}

// deletePathCache remembers the data file paths each position delete file
// names. Iceberg files are immutable and never reuse a path, so an entry
// stays true; the cache is emptied when it grows past its bound.
type deletePathCache struct {
	mu    sync.Mutex
	paths map[string]map[string]bool
}

const deletePathCacheMax = 10000

func (c *deletePathCache) get(location string) (map[string]bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	names, ok := c.paths[location]
	return names, ok
}

func (c *deletePathCache) put(location string, names map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paths == nil || len(c.paths) >= deletePathCacheMax {
		c.paths = map[string]map[string]bool{}
	}
	c.paths[location] = names
}

type positionDelete struct {
	file iceberg.DataFile
	seq  int64
	ref  string // the data file path as the delete file writes it
}

func alignPositionDeletes(ctx context.Context, store storage.Store, cache *deletePathCache, tbl *table.Table, snap *table.Snapshot, tasks []table.FileScanTask) ([]table.FileScanTask, error) {
	if snap == nil || len(tasks) == 0 {
		return tasks, nil
	}
	if snap.Summary != nil {
		if n, err := strconv.ParseInt(snap.Summary.Properties["total-position-deletes"], 10, 64); err == nil && n == 0 {
			return tasks, nil
		}
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	byCanonical := map[string][]positionDelete{}
	err = storage.EachLiveDeleteFile(ctx, tbl, snap, func(e iceberg.ManifestEntry) {
		df := e.DataFile()
		if df.ContentType() != iceberg.EntryContentPosDeletes || df.FileFormat() == iceberg.PuffinFile {
			return
		}
		if ref := referencedPath(df); ref != "" {
			c := storage.CanonicalPath(store, ref)
			byCanonical[c] = append(byCanonical[c], positionDelete{file: df, seq: e.SequenceNum(), ref: ref})
		}
	})
	if err != nil {
		return nil, err
	}
	if len(byCanonical) == 0 {
		return alignAttachedDeletes(ctx, store, cache, fsys, tasks)
	}
	out := make([]table.FileScanTask, len(tasks))
	copy(out, tasks)
	for i := range out {
		t := &out[i]
		path := t.File.FilePath()
		var extra []iceberg.DataFile
		spelling := ""
		for _, d := range byCanonical[storage.CanonicalPath(store, path)] {
			if d.ref == path || hasFile(t.DeleteFiles, d.file.FilePath()) {
				continue
			}
			if t.DataSequenceNumber != nil && d.seq >= 0 && d.seq < *t.DataSequenceNumber {
				continue // deletes apply to data files of their sequence number or older
			}
			if spelling != "" && spelling != d.ref {
				return nil, fmt.Errorf("position deletes name data file %s as both %s and %s", path, spelling, d.ref)
			}
			spelling = d.ref
			extra = append(extra, d.file)
		}
		if len(extra) == 0 {
			continue
		}
		if len(t.DeleteFiles) > 0 {
			return nil, fmt.Errorf("position deletes name data file %s as both %s and %s", path, path, spelling)
		}
		t.File = spelledDataFile{DataFile: t.File, path: spelling}
		t.DeleteFiles = extra
	}
	return alignAttachedDeletes(ctx, store, cache, fsys, out)
}

// alignAttachedDeletes handles the delete files iceberg-go did attach to a
// task but whose rows spell the data file differently: it reads their
// file_path column and presents the data file under the spelling found
// there. The file_path bounds in the manifest cannot decide it: Impala's
// loader rewrote them to the manifests' spelling and left the files' rows
// as written. Reading one dictionary-encoded column per delete file, once
// per file (deletePathCache), is the cost.
func alignAttachedDeletes(ctx context.Context, store storage.Store, cache *deletePathCache, fsys icebergio.IO, tasks []table.FileScanTask) ([]table.FileScanTask, error) {
	var out []table.FileScanTask
	for i, t := range tasks {
		if len(t.DeleteFiles) == 0 {
			continue
		}
		path := t.File.FilePath()
		canonical := storage.CanonicalPath(store, path)
		spelling, exact := "", false
		for _, d := range t.DeleteFiles {
			// Keyed by the file it names in the store: relative paths of
			// two registered tables may be spelled alike.
			key := storage.CanonicalPath(store, d.FilePath())
			names, ok := cache.get(key)
			if !ok {
				var err error
				if names, err = storage.PositionDeleteFilePaths(ctx, fsys, d.FilePath()); err != nil {
					return nil, err
				}
				cache.put(key, names)
			}
			if names[path] {
				exact = true
				continue
			}
			for n := range names {
				if storage.CanonicalPath(store, n) == canonical {
					if spelling != "" && spelling != n {
						return nil, fmt.Errorf("position deletes name data file %s as both %s and %s", path, spelling, n)
					}
					spelling = n
				}
			}
		}
		if spelling == "" {
			continue
		}
		if exact {
			return nil, fmt.Errorf("position deletes name data file %s as both %s and %s", path, path, spelling)
		}
		if out == nil {
			out = make([]table.FileScanTask, len(tasks))
			copy(out, tasks)
		}
		out[i].File = spelledDataFile{DataFile: t.File, path: spelling}
	}
	if out == nil {
		return tasks, nil
	}
	return out, nil
}

func hasFile(files []iceberg.DataFile, path string) bool {
	for _, f := range files {
		if f.FilePath() == path {
			return true
		}
	}
	return false
}

// referencedPath is the one data file a position delete file applies to:
// its referenced_data_file, else its file_path bounds when they are equal.
func referencedPath(df iceberg.DataFile) string {
	if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
		return *ref
	}
	f, _ := iceberg.PositionalDeleteSchema.FindFieldByName("file_path")
	lo, hi := df.LowerBoundValues()[f.ID], df.UpperBoundValues()[f.ID]
	if len(lo) == 0 || string(lo) != string(hi) {
		return ""
	}
	return string(lo)
}

// spelledDataFile is a data file presented under another spelling of its path.
type spelledDataFile struct {
	iceberg.DataFile
	path string
}

func (f spelledDataFile) FilePath() string { return f.path }

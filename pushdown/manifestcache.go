package pushdown

import (
	"container/list"
	"fmt"
	"sync"
	"unsafe"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
)

// A table of many small commits has many manifests, and iceberg-go decodes
// every one of them (Avro schema and all) each time it plans a scan: a point
// lookup on a table of 1,000 single-row commits took 7 to 11 times its time
// on the same rows in one file, three quarters of it decoding manifests.
//
// ManifestCache keeps decoded manifest lists and manifests, keyed by path.
// Both are immutable: every writer names a new manifest or manifest list
// with a fresh UUID, and nothing rewrites one in place. So what is kept is
// right for as long as anyone asks for it: a commit adds new paths,
// rewrite_manifests writes new manifests and lists, a delete writes new
// manifests (with the file's entry DELETED) or delete manifests, and
// expire_snapshots removes files that no live snapshot names, so no plan
// asks for them again. The entries a manifest yields also depend on what its
// manifest-list entry gives them to inherit (sequence number, snapshot id,
// first row id), and those are part of the key.
//
// It holds at most limit bytes by estimated size, the least recently used
// leaving first. It belongs to an engine; its methods are safe for
// concurrent use.
type ManifestCache struct {
	mu     sync.Mutex
	limit  int64
	size   int64
	order  *list.List // of *keptManifest, most recently used first
	byKey  map[string]*list.Element
	hits   int64
	misses int64
}

type keptManifest struct {
	key     string
	files   []iceberg.ManifestFile // a manifest list's
	entries []keptEntry            // a manifest's live entries
	bytes   int64
}

// keptEntry is a live manifest entry with its data file's statistics read
// out once: iceberg-go's accessors copy the maps on every call, and a plan
// judges every file of the table.
type keptEntry struct {
	iceberg.ManifestEntry
	stats fileStats
}

type fileStats struct {
	values, nulls map[int]int64
	lower, upper  map[int][]byte
}

func statsOf(df iceberg.DataFile) fileStats {
	return fileStats{values: df.ValueCounts(), nulls: df.NullValueCounts(),
		lower: df.LowerBoundValues(), upper: df.UpperBoundValues()}
}

// NewManifestCache returns a cache holding at most limit bytes.
func NewManifestCache(limit int64) *ManifestCache {
	return &ManifestCache{limit: limit, order: list.New(), byKey: map[string]*list.Element{}}
}

// Stats reports the cache's hits and misses.
func (c *ManifestCache) Stats() (hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// manifestList returns the manifests the manifest list at path lists.
func (c *ManifestCache) manifestList(fsys icebergio.IO, path string) ([]iceberg.ManifestFile, error) {
	key := "list\x00" + path
	if k, ok := c.get(key); ok {
		return k.files, nil
	}
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open manifest list %s: %w", path, err)
	}
	defer f.Close()
	files, err := iceberg.ReadManifestList(f)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", path, err)
	}
	n := int64(len(path)) + planBytes
	for _, m := range files {
		n += manifestFileBytes + int64(len(m.FilePath()))
	}
	c.put(&keptManifest{key: key, files: files, bytes: n})
	return files, nil
}

// liveEntries returns the entries of manifest m that are not DELETED, as
// iceberg-go's planning reads them. They are shared: callers do not change
// them.
func (c *ManifestCache) liveEntries(fsys icebergio.IO, m iceberg.ManifestFile) ([]keptEntry, error) {
	var firstRowID int64 = -1
	if id := m.FirstRowID(); id != nil {
		firstRowID = *id
	}
	key := fmt.Sprintf("manifest\x00%s\x00%d\x00%d\x00%d\x00%d", m.FilePath(), m.SequenceNum(), m.MinSequenceNum(), m.SnapshotID(), firstRowID)
	if k, ok := c.get(key); ok {
		return k.entries, nil
	}
	//lint:ignore SA1019 the whole manifest at once through ReadManifest, the reader the legacy-manifest and codec tests cover; Entries streams through another decoder
	entries, err := m.FetchEntries(fsys, true)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
	}
	n := int64(len(key)) + planBytes
	kept := make([]keptEntry, len(entries))
	for i, e := range entries {
		df := e.DataFile()
		kept[i] = keptEntry{ManifestEntry: e, stats: statsOf(df)}
		// The statistics are held twice: in the data file and read out.
		n += int64(unsafe.Sizeof(kept[i])) + fileBytes + int64(len(df.FilePath())) + 2*columnBytes*int64(len(kept[i].stats.values))
	}
	c.put(&keptManifest{key: key, entries: kept, bytes: n})
	return kept, nil
}

// manifestFileBytes is a manifest list entry's heap without its path.
const manifestFileBytes = 512

func (c *ManifestCache) get(key string) (*keptManifest, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		c.misses++
		return nil, false
	}
	c.hits++
	c.order.MoveToFront(el)
	return el.Value.(*keptManifest), true
}

// put keeps k, unless it alone would take more than a quarter of the cache.
func (c *ManifestCache) put(k *keptManifest) {
	if k.bytes > c.limit/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k.key]; ok {
		return // a concurrent plan read it too
	}
	c.byKey[k.key] = c.order.PushFront(k)
	c.size += k.bytes
	for c.size > c.limit {
		last := c.order.Back()
		old := last.Value.(*keptManifest)
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.size -= old.bytes
	}
}

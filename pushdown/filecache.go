package pushdown

import (
	"container/list"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// A statement over a table of many small files (one per INSERT, a few per
// partition) spent most of its time opening them: each file's footer is
// parsed, its schema matched to the table's, a column reader set up per
// column and row group, its pages decompressed, and the result converted to
// the table's types, for a few hundred rows. A shapes-run query over three
// 3,000-row tables of 40-66 files each spent a quarter of its CPU there and
// much of the rest collecting what it allocated.
//
// A data file never changes once written (a rewrite writes a new file under
// a new name), so what it decodes to stays true: the engine keeps small
// files decoded (Caches), whole and before any delete or filter, under a key
// of the file's location and size and the shape of the read: the table
// schema's fields it was read for (ids, names, types, defaults), the name
// mapping and the table properties the reader consults. A statement reading
// such a file takes its batches from memory, projects the columns it reads,
// and applies the delete files its plan attached to the file (position
// deletes, deletion vectors: decodedread.go); a file with equality deletes is
// read by iceberg-go as before. A table changed by another writer has a new
// snapshot whose plan names new files, which the cache does not hold yet; the
// files it still holds are the same bytes as before.
//
// The cache holds at most a bound of bytes (SetDecodedLimit: a share of the
// engine's memory limit), least recently used files leaving first. Its
// batches are live heap and so count against the statements' budget
// (engine/internal/memlimit); when the budget's live heap passes half of it,
// the cache empties itself and keeps nothing more until the pressure ends.

// decodedBytes is the default bound of the decoded-file cache.
const decodedBytes = 64 << 20

// smallFileBytes is the largest data file (on disk) kept decoded: larger ones
// are decoded in pieces in parallel (split.go) and cost little to open for
// what they hold.
const smallFileBytes = 2 << 20

// decodedKey names one decoded file.
type decodedKey struct {
	path  string
	size  int64
	shape string // decodedShape of the read
}

// decodedFile is a data file decoded whole: every column of the read's
// schema, every row, in file order.
type decodedFile struct {
	key     decodedKey
	batches []arrow.RecordBatch
	rows    int64
	bytes   int64
}

func (f *decodedFile) release() {
	for _, b := range f.batches {
		b.Release()
	}
	f.batches = nil
}

type fileCache struct {
	mu       sync.Mutex
	limit    int64 // bytes; 0 keeps nothing
	size     int64
	order    *list.List
	byKey    map[decodedKey]*list.Element
	pressure func() bool // nil: none

	hits, misses int64

	shapes map[shapeKey]string // decodedShape of the reads so far (shapeOf)
	seen   map[decodedKey]bool // files native scans read once (wanted)
}

// maxSeen bounds the files wanted remembers; past it, it starts again.
const maxSeen = 4096

// wanted says a native scan is to read the file k names through the cache:
// the cache holds it, or a scan read it before.
func (c *fileCache) wanted(k decodedKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok || c.seen[k] {
		delete(c.seen, k)
		return true
	}
	if len(c.seen) >= maxSeen {
		clear(c.seen)
	}
	c.seen[k] = true
	return false
}

// shapeKey names what a read's shape is made of: a table's metadata file
// (its schemas, name mapping and properties) and the schema read.
type shapeKey struct {
	metadata string
	updated  int64 // a table dropped and made again may reuse the file's name
	schema   int
	fields   int // a whole scan reads every field of its schema
}

// maxShapes bounds the shapes kept; past it they are made again.
const maxShapes = 1024

func newFileCache(limit int64) *fileCache {
	return &fileCache{limit: limit, order: list.New(), byKey: map[decodedKey]*list.Element{}, shapes: map[shapeKey]string{}, seen: map[decodedKey]bool{}}
}

// get returns the batches of the file k names, each retained for the
// caller, who releases them; nil when the cache does not hold it.
func (c *fileCache) get(k decodedKey) []arrow.RecordBatch {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[k]
	if !ok {
		c.misses++
		return nil
	}
	c.hits++
	c.order.MoveToFront(el)
	f := el.Value.(*decodedFile)
	out := make([]arrow.RecordBatch, len(f.batches))
	for i, b := range f.batches {
		b.Retain()
		out[i] = b
	}
	return out
}

// put keeps f, taking over its batches (it releases them when it does not
// keep them).
func (c *fileCache) put(f *decodedFile) {
	if c.pressure != nil && c.pressure() {
		c.purge()
		f.release()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[f.key]; ok || f.bytes > c.limit/8 {
		f.release()
		return
	}
	c.byKey[f.key] = c.order.PushFront(f)
	c.size += f.bytes
	c.evict(c.limit)
}

// evict drops the least recently used files until at most limit bytes
// are held. c.mu is held.
func (c *fileCache) evict(limit int64) {
	for c.size > limit {
		last := c.order.Back()
		old := last.Value.(*decodedFile)
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.size -= old.bytes
		old.release()
	}
}

// purge drops every file.
func (c *fileCache) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evict(0)
}

// SetDecodedLimit bounds the decoded-file cache to limit bytes (0 keeps
// nothing) and gives it the memory pressure to yield to: while pressure
// reports true, the cache holds nothing.
func (c *Caches) SetDecodedLimit(limit int64, pressure func() bool) {
	if c == nil {
		return
	}
	f := c.files
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limit, f.pressure = limit, pressure
	f.evict(limit)
}

// PurgeDecoded drops every decoded file the caches hold.
func (c *Caches) PurgeDecoded() {
	if c != nil {
		c.files.purge()
	}
}

func (c *Caches) fileCache() *fileCache {
	if c == nil {
		return nil
	}
	return c.files
}

// batchBytes is the memory rec's buffers hold.
func batchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += dataBytes(col.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	if d == nil {
		return 0
	}
	if ad, ok := d.(*array.Data); ok && ad == nil {
		return 0 // Dictionary() of an array without one
	}
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Cap())
		}
	}
	for _, child := range d.Children() {
		n += dataBytes(child)
	}
	return n + dataBytes(d.Dictionary())
}

// decodedShape says what a whole-file read of proj over tbl's files
// decodes them to, beside the files themselves.
func decodedShape(proj *iceberg.Schema, tbl *table.Table) (string, error) {
	byID, err := iceberg.IndexByID(proj)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range proj.Fields() {
		fmt.Fprintf(&b, "%d,", f.ID) // the top-level order
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		f := byID[id]
		fmt.Fprintf(&b, "|%d %q %s %t %#v %#v", f.ID, f.Name, f.Type, f.Required, f.InitialDefault, f.WriteDefault)
	}
	meta := tbl.Metadata()
	mapping, err := json.Marshal(meta.NameMapping())
	if err != nil {
		return "", err
	}
	b.WriteString("|mapping ")
	b.Write(mapping)
	props := meta.Properties()
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "|%q=%q", k, props[k])
	}
	return b.String(), nil
}

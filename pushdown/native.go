package pushdown

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Native decoding is the vector path's own Parquet reader. Through
// iceberg-go and pqarrow, a decimal(15,2) column is converted value by value
// from big-endian bytes to Arrow's 128-bit decimals, strings are copied out
// of their dictionary, and every batch is filtered row by row with Arrow's
// take kernel before the vector path evaluates the same filter again: on
// TPC-H Q1 that was three quarters of the CPU. The vector kernels compute on
// int64s, so this reader hands them what they use: decimals of precision up
// to 18 as their unscaled int64s, dates and integers as they are stored,
// strings as dictionary indices into the few distinct values of a batch. It
// reads column chunks with arrow-go's typed column readers into pooled
// buffers, row groups in parallel.
//
// It reads only what it can read exactly as iceberg-go would: tasks without
// delete files of any kind, Parquet files whose columns carry the Iceberg
// field ids of the projected columns (no name mapping, no column missing
// from the file) in a physical type the column's Iceberg type maps to
// without conversion beyond widening. Every other task goes through
// iceberg-go's reader (Open), in the same stream, after the native ones.

// Native is what a native scan needs besides the iceberg-go scan: the
// table's file IO, its schema, and the row filter whose column statistics
// skip row groups (nil: none). Rows are not filtered: the vector path
// evaluates the whole WHERE clause itself.
type Native struct {
	FS     icebergio.IO
	Schema *iceberg.Schema
	Filter iceberg.BooleanExpression
	Stats  *NativeStats // counts what was read; nil: not counted
	Caches *Caches      // keep the files' footers; nil: none kept
	// Select, when set, gives each reading goroutine the consumer's
	// predicate; batches then hold only the rows where it is TRUE
	// (nativeselect.go).
	Select func() (RowSelector, error)
}

// NativeStats is what native decoding read, for EXPLAIN ANALYZE: tasks
// decoded natively, their row groups decoded and skipped by statistics,
// and tasks handed to iceberg-go's reader.
type NativeStats struct {
	Tasks, RowGroupsRead, RowGroupsSkipped, Fallback atomic.Int64
	// Rows read with the consumer's predicate (Native.Select), and those
	// of them it kept: the other columns were decoded for these only.
	SelectedOf, Selected atomic.Int64
}

// NativeStats is where the native scans of this planning count.
func (p *Planned) NativeStats() *NativeStats { return &p.native }

func (s *NativeStats) add(c *atomic.Int64, n int64) {
	if s != nil {
		c.Add(n)
	}
}

// nativeBatchRows is the rows per batch: a batch of Q1's seven columns
// stays within a core's L2 cache.
const nativeBatchRows = 32 * 1024

// NativeBatches streams the batches of a native scan. Batches arrive in no
// particular order. Read it with Next, or split it with Split so that each
// consumer goroutine decodes what it consumes.
type NativeBatches struct {
	ctx    context.Context
	cancel context.CancelFunc
	read   Read // for the tasks iceberg-go's reader reads
	n      Native
	cols   []nativeColumn
	prune  *rowGroupPruner

	mu       sync.Mutex
	units    []table.FileScanTask // tasks not yet taken
	fallback []table.FileScanTask // tasks for iceberg-go's reader
	active   int                  // cursors still reading units

	started    bool
	sequential func() (arrow.RecordBatch, error) // Next's part
	prev       arrow.RecordBatch
	closers    []func()
}

// OpenNative starts a native scan of tasks, or returns nil when no task
// can be read natively (or the projection has a column type it does not
// decode), for the caller to use Open.
func OpenNative(ctx context.Context, n Native, r Read, tasks []table.FileScanTask) (*NativeBatches, error) {
	sc, err := r.Scan.Projection()
	if err != nil {
		return nil, err
	}
	cols, ok := nativeColumns(sc)
	if !ok {
		return nil, nil
	}
	var native, fallback []table.FileScanTask
	decodes := r.nativeDecodes() // decodedread.go
	for _, t := range tasks {
		if nativeTask(t) && !decodes(t) {
			native = append(native, t)
		} else {
			fallback = append(fallback, t)
		}
	}
	if len(native) == 0 {
		return nil, nil
	}
	n.Stats.add(&n.Stats.Fallback, int64(len(fallback)))
	ctx, cancel := context.WithCancel(ctx)
	return &NativeBatches{ctx: ctx, cancel: cancel, read: r, n: n, cols: cols,
		prune: newRowGroupPruner(n.Schema, n.Filter), units: splitForCores(native), fallback: fallback}, nil
}

// nativeTask says the task has no deletes to apply.
func nativeTask(t table.FileScanTask) bool {
	return t.File.FileFormat() == iceberg.ParquetFile && len(t.DeleteFiles) == 0 &&
		len(t.EqualityDeleteFiles) == 0 && len(t.DeletionVectorFiles) == 0
}

// take hands out the next task, or reports none is left.
func (b *NativeBatches) take() (table.FileScanTask, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.units) == 0 {
		return table.FileScanTask{}, false
	}
	t := b.units[0]
	b.units = b.units[1:]
	return t, true
}

func (b *NativeBatches) addFallback(t table.FileScanTask) {
	b.n.Stats.add(&b.n.Stats.Fallback, 1)
	b.mu.Lock()
	b.fallback = append(b.fallback, t)
	b.mu.Unlock()
}

// finish marks a cursor done and says whether it was the last, which then
// reads the fallback tasks.
func (b *NativeBatches) finish() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active--
	return b.active == 0
}

func (b *NativeBatches) newCursor() *nativeCursor {
	b.mu.Lock()
	b.active++
	b.mu.Unlock()
	return &nativeCursor{b: b, r: &nativeReader{cols: b.cols, prune: b.prune, stats: b.n.Stats, pre: newPrefilter(b.n, b.cols)}}
}

// Split divides the scan among n consumers, each reading its part on its
// own goroutine: the returned functions decode as they are called, taking
// tasks from a common queue; each batch they return is the caller's to
// release; io.EOF ends a part. The last part to run out of tasks also
// reads the tasks that need iceberg-go's reader. Split is used instead of
// Next, and Close still ends the scan.
func (b *NativeBatches) Split(n int) []func() (arrow.RecordBatch, error) {
	b.started = true
	parts := make([]func() (arrow.RecordBatch, error), n)
	for i := range parts {
		c := b.newCursor()
		b.closers = append(b.closers, c.close)
		parts[i] = c.next
	}
	return parts
}

// Next returns the next batch, or io.EOF after the last. A batch stays valid
// until the following call to Next or Close. Next decodes on the caller's
// goroutine, one task after another: a consumer with goroutines of its
// own to spare uses Split instead.
func (b *NativeBatches) Next() (arrow.RecordBatch, error) {
	if b.prev != nil {
		b.prev.Release()
		b.prev = nil
	}
	if b.sequential == nil {
		if b.started {
			return nil, errors.New("native scan: Next after Split")
		}
		b.sequential = b.Split(1)[0]
	}
	rec, err := b.sequential()
	if err != nil {
		return nil, err
	}
	b.prev = rec
	return rec, nil
}

// Close stops the scan and releases its memory. It is safe to call twice.
func (b *NativeBatches) Close() {
	if b.prev != nil {
		b.prev.Release()
		b.prev = nil
	}
	b.cancel()
	b.mu.Lock()
	closers := b.closers
	b.closers = nil
	b.mu.Unlock()
	for _, c := range closers {
		c()
	}
}

// nativeCursor is one consumer's position: the task and row group it is
// decoding, then the fallback stream if it finished last.
type nativeCursor struct {
	b        *NativeBatches
	r        *nativeReader
	mu       sync.Mutex // between next and close
	pf       *file.Reader
	path     string
	pruneBy  map[int]int // topLevelColumns of the open file
	leaves   []int
	groups   []int // row groups of the task left to read
	readers  []columnReader
	strs     []file.RecordReader // per column: the file's string record readers, reused across its row groups
	left     int64               // rows left in the current row group
	finished bool
	rest     *Batches
}

// next decodes the cursor's next batch; the caller releases it.
func (c *nativeCursor) next() (arrow.RecordBatch, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if err := c.b.ctx.Err(); err != nil {
			return nil, err
		}
		if c.rest != nil {
			rec, err := c.rest.Next()
			if err == nil {
				rec.Retain() // the caller releases it; c.rest releases its own hold
			}
			return rec, err
		}
		if c.finished {
			return nil, io.EOF
		}
		if c.left > 0 {
			n := min(c.left, nativeBatchRows)
			rec, err := c.r.read(c.readers, int(n))
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", c.path, err)
			}
			c.left -= n
			if rec == nil {
				continue // the predicate kept no row
			}
			if rows := c.b.read.Rows; rows != nil {
				rows.Add(rec.NumRows()) // the fallback stream (c.rest) counts its own
			}
			return rec, nil
		}
		if err := c.advance(); err != nil {
			return nil, err
		}
	}
}

// advance moves to the next row group to read, of this task or the next;
// when the tasks are all taken it finishes, the last cursor starting the
// fallback stream.
func (c *nativeCursor) advance() error {
	c.closeReaders()
	for len(c.groups) > 0 {
		rg := c.groups[0]
		c.groups = c.groups[1:]
		if !c.r.prune.mightMatch(c.pf.MetaData().RowGroup(rg), c.pruneBy) {
			c.r.stats.add(&c.r.stats.RowGroupsSkipped, 1)
			continue
		}
		c.r.stats.add(&c.r.stats.RowGroupsRead, 1)
		rgr := c.pf.RowGroup(rg)
		for i, leaf := range c.leaves {
			cr, err := c.columnReader(rgr, i, leaf)
			if err != nil {
				return fmt.Errorf("read %s row group %d: %w", c.path, rg, err)
			}
			c.readers = append(c.readers, cr)
		}
		c.left = rgr.NumRows()
		return nil
	}
	c.closeFile()
	t, ok := c.b.take()
	if !ok {
		c.finished = true
		if c.b.finish() && len(c.b.fallback) > 0 {
			rest, err := Open(c.b.ctx, c.b.read, c.b.fallback)
			if err != nil {
				return err
			}
			c.rest = rest
		}
		return nil
	}
	return c.open(t)
}

func (c *nativeCursor) open(t table.FileScanTask) error {
	pf, err := openParquet(c.b.n.Caches.footerCache(), c.b.n.FS, t.File.FilePath(), t.File.FileSizeBytes(), true) // footers.go
	if err != nil {
		return err
	}
	leaves, ok := matchColumns(pf.MetaData(), c.r.cols)
	if !ok {
		pf.Close()
		c.b.addFallback(t)
		return nil
	}
	c.r.stats.add(&c.r.stats.Tasks, 1)
	c.pf, c.path, c.leaves, c.pruneBy, c.groups = pf, t.File.FilePath(), leaves, topLevelColumns(pf.MetaData()), taskRowGroups(pf.MetaData(), t)
	return nil
}

// columnReader opens column i (the file's leaf column leaf) of a row group:
// a string column through a record reader of the file, which gives
// dictionary indices as the pages store them.
func (c *nativeCursor) columnReader(rgr *file.RowGroupReader, i, leaf int) (columnReader, error) {
	if cr, ok, err := c.filterColumnReader(rgr, i, leaf); ok || err != nil {
		return cr, err // nativeselect.go
	}
	descr := c.pf.MetaData().Schema.Column(leaf)
	if c.r.cols[i].kind == nativeDecimal && descr.PhysicalType() == parquet.Types.FixedLenByteArray {
		cc, err := rgr.MetaData().ColumnChunk(leaf)
		if err != nil {
			return columnReader{}, err
		}
		if flbaPagesFit(cc) {
			pages, err := rgr.GetColumnPageReader(leaf)
			if err != nil {
				return columnReader{}, err
			}
			return columnReader{flba: newFlbaPages(pages, descr.TypeLength(), descr.MaxDefinitionLevel())}, nil
		}
	}
	if c.r.cols[i].kind != nativeString {
		cr, err := rgr.Column(leaf)
		return columnReader{chunk: cr}, err
	}
	if s, ok, err := openStrPages(rgr, leaf, descr); ok || err != nil {
		return columnReader{str: s}, err
	}
	pages, err := rgr.GetColumnPageReader(leaf)
	if err != nil {
		return columnReader{}, err
	}
	if c.strs == nil {
		c.strs = make([]file.RecordReader, len(c.leaves))
	}
	rr := c.strs[i]
	if rr == nil {
		info := file.LevelInfo{NullSlotUsage: 1, DefLevel: descr.MaxDefinitionLevel()}
		rr = file.NewRecordReader(descr, info, nativeDictType, pool, nil)
		c.strs[i] = rr
	}
	if err := setPages(rr, pages); err != nil {
		return columnReader{}, err
	}
	return columnReader{records: rr.(file.BinaryRecordReader)}, nil
}

func setPages(rr file.RecordReader, pages file.PageReader) error {
	if re, ok := rr.(file.RecordReaderWithError); ok {
		return re.SetPageReaderWithError(pages)
	}
	rr.SetPageReader(pages)
	return nil
}

func (c *nativeCursor) closeReaders() {
	for _, cr := range c.readers {
		if cr.chunk != nil {
			cr.chunk.Close()
		}
		if cr.flba != nil {
			cr.flba.close()
		}
		if cr.str != nil {
			cr.str.close()
		}
	}
	c.readers = c.readers[:0]
	c.left = 0
}

func (c *nativeCursor) closeFile() {
	c.closeReaders()
	for _, rr := range c.strs {
		if rr != nil {
			rr.Release()
		}
	}
	c.strs = nil
	if c.pf != nil {
		c.pf.Close()
		c.pf = nil
	}
	c.groups = nil
}

func (c *nativeCursor) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeFile()
	if c.rest != nil {
		c.rest.Close()
		c.rest = nil
	}
	c.finished = true
}

// nativeReader decodes batches for one cursor, reusing its scratch space.
type nativeReader struct {
	cols  []nativeColumn
	prune *rowGroupPruner
	stats *NativeStats
	bufs  columnBuffers
	pre   *prefilter // nil: every row is read
}

// taskRowGroups lists the row groups a task covers, as iceberg-go selects
// them: all for a whole-file task, else those whose first page (by the
// planning's split offsets when they give one valid offset per row group,
// else by the footer) starts in [Start, Start+Length).
func taskRowGroups(meta *metadata.FileMetaData, t table.FileScanTask) []int {
	n := meta.NumRowGroups()
	out := make([]int, 0, n)
	whole := t.Start == 0 && (t.Length == 0 || t.Length == t.File.FileSizeBytes())
	if whole {
		for i := range n {
			out = append(out, i)
		}
		return out
	}
	size := meta.GetSourceFileSize()
	start, length := t.Start, t.Length
	if size > 0 && start >= 0 && start <= size && length > size-start {
		length = size - start
	}
	offsets := t.File.SplitOffsets()
	if !validOffsets(offsets, n, size) {
		offsets = nil
	}
	for i := range n {
		var off int64
		if offsets != nil {
			off = offsets[i]
		} else {
			off = firstPageOffset(meta.RowGroup(i))
		}
		if off >= start && off < start+length {
			out = append(out, i)
		}
	}
	return out
}

func validOffsets(offsets []int64, n int, size int64) bool {
	if len(offsets) != n {
		return false
	}
	for i, o := range offsets {
		if o < 0 || o >= size || (i > 0 && o <= offsets[i-1]) {
			return false
		}
	}
	return true
}

// errNativeType is a column whose values the native reader met in a form
// it did not expect from the file's schema.
var errNativeType = errors.New("unexpected column reader type")

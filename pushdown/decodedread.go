package pushdown

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
)

// Reading tasks through the decoded-file cache (filecache.go). A file the
// cache lacks is read by iceberg-go whole, with every column of the scan's
// schema, no filter and no deletes, and kept; a file it holds is taken from
// memory. Either way the statement then gets the columns it projects, less
// the rows its delete files delete: a deletion vector's positions, else the
// position-delete files' rows naming the file, as iceberg-go applies them.
// The scan's row filter is not applied: it only ever drops rows early, and
// the SQL layer evaluates the whole WHERE clause above every scan (lookup.go
// in engine; a pushed filter may keep more rows, never fewer).

// decodedRead is the part of a read the decoded-file cache serves.
type decodedRead struct {
	cache *fileCache
	whole *table.Scan // every column, no filter
	shape string
	fs    icebergio.IO
	tasks []table.FileScanTask
	patch Patch // nil: none
}

// Patch changes a batch of a task's rows before the reader gets it.
type Patch func(rec arrow.RecordBatch, t table.FileScanTask) (arrow.RecordBatch, error)

// OpenDecoded starts reading the tasks the decoded-file cache serves, each
// batch changed by patch with its task (vecexec sets the columns an
// identity partition stands for so, which otherwise opens each file on its
// own), and returns the other tasks for the caller to read; nil Batches
// when the cache serves none.
func OpenDecoded(ctx context.Context, r Read, tasks []table.FileScanTask, patch Patch) (*Batches, []table.FileScanTask, error) {
	plain, lacking, err := r.classify(tasks)
	if err != nil {
		return nil, nil, err
	}
	plain, plainUUID, err := r.splitPlainUUID(plain)
	if err != nil {
		return nil, nil, err
	}
	plain, decoded, err := r.decoded(plain)
	if err != nil || decoded == nil {
		return nil, tasks, err
	}
	rest := append(plain, plainUUID...)
	for _, l := range lacking {
		rest = append(rest, l.task)
	}
	schema, none, err := r.Scan.ReadTasks(ctx, nil) // the projection's Arrow schema
	if err != nil {
		return nil, nil, err
	}
	for rec := range none {
		if rec != nil {
			rec.Release()
		}
	}
	decoded.patch = patch
	ctx, cancel := context.WithCancel(ctx)
	next, stop := iter.Pull2(decoded.batches(ctx, schema))
	return &Batches{schema: schema, next: next, stop: stop, cancel: cancel, rows: r.Rows}, rest, nil
}

// decoded separates from tasks those the decoded-file cache serves: whole-file
// Parquet tasks of small files without equality deletes. It returns the
// others and the cached part, nil when the cache is not to be used.
func (r Read) decoded(tasks []table.FileScanTask) ([]table.FileScanTask, *decodedRead, error) {
	decodes := r.decodes()
	var cached, rest []table.FileScanTask
	for _, t := range tasks {
		if decodes(t) {
			cached = append(cached, t)
		} else {
			rest = append(rest, t)
		}
	}
	if len(cached) == 0 {
		return tasks, nil, nil
	}
	whole, err := r.Whole()
	if err != nil {
		return nil, nil, err
	}
	proj, err := whole.Projection()
	if err != nil {
		return nil, nil, err
	}
	cache := r.Caches.fileCache()
	shape, ok, err := cache.shapeOf(proj, r.Table)
	if err != nil || !ok {
		return tasks, nil, err
	}
	// A file storing a uuid column without its annotation is read through
	// a view of the table (plainuuid.go), which a whole read is not.
	cached, plainUUID, err := r.plainUUIDIn(proj, cached)
	if err != nil {
		return nil, nil, err
	}
	if rest = append(rest, plainUUID...); len(cached) == 0 {
		return tasks, nil, nil
	}
	return rest, &decodedRead{cache: cache, whole: whole, shape: shape, fs: r.FS, tasks: cached}, nil
}

// shapeOf is the decodedShape of a whole scan's projection proj over tbl;
// ok is false when the scan's batches are not the files' alone (row lineage
// columns are made from the task). Shapes are kept by the table's metadata
// file and the schema read: every statement over an unchanged table asks
// for the same.
func (c *fileCache) shapeOf(proj *iceberg.Schema, tbl *table.Table) (shape string, ok bool, err error) {
	if slices.ContainsFunc(proj.Fields(), func(f iceberg.NestedField) bool {
		return f.ID == iceberg.RowIDFieldID || f.ID == iceberg.LastUpdatedSequenceNumberFieldID
	}) {
		return "", false, nil
	}
	key := shapeKey{metadata: tbl.MetadataLocation(), updated: tbl.Metadata().LastUpdatedMillis(), schema: proj.ID, fields: len(proj.Fields())}
	c.mu.Lock()
	shape, ok = c.shapes[key]
	c.mu.Unlock()
	if ok || key.metadata == "" {
		return shape, true, nil
	}
	if shape, err = decodedShape(proj, tbl); err != nil {
		return "", false, err
	}
	c.mu.Lock()
	if len(c.shapes) >= maxShapes {
		clear(c.shapes)
	}
	c.shapes[key] = shape
	c.mu.Unlock()
	return shape, true, nil
}

// nativeDecodes says which tasks a native scan (native.go) leaves to the
// decoded-file cache: those it holds, since taking a file's batches from
// memory costs less than decoding it natively, and those read before, which
// it is to keep. A file read once (a point lookup among many files) is
// decoded natively, which costs less than decoding it through iceberg-go.
func (r Read) nativeDecodes() func(table.FileScanTask) bool {
	decodes := r.decodes()
	cache := r.Caches.fileCache()
	resolved, usable, shape := false, false, ""
	return func(t table.FileScanTask) bool {
		if !decodes(t) {
			return false
		}
		if !resolved {
			resolved = true
			if whole, err := r.Whole(); err == nil {
				if proj, err := whole.Projection(); err == nil {
					shape, usable, err = cache.shapeOf(proj, r.Table)
					usable = usable && err == nil
				}
			}
		}
		return usable && cache.wanted(decodedKey{path: t.File.FilePath(), size: t.File.FileSizeBytes(), shape: shape})
	}
}

// decodes says which tasks r reads through the decoded-file cache.
func (r Read) decodes() func(table.FileScanTask) bool {
	cache := r.Caches.fileCache()
	if r.Whole == nil || r.Table == nil || r.FS == nil || cache == nil {
		return func(table.FileScanTask) bool { return false }
	}
	cache.mu.Lock()
	limit := cache.limit
	cache.mu.Unlock()
	return func(t table.FileScanTask) bool { return cacheable(t, limit) }
}

// cacheable says the decoded-file cache may serve t.
func cacheable(t table.FileScanTask, limit int64) bool {
	size := t.File.FileSizeBytes()
	return limit > 0 && t.File.FileFormat() == iceberg.ParquetFile && size > 0 && size <= smallFileBytes &&
		len(t.EqualityDeleteFiles) == 0 && t.Start == 0 && (t.Length == 0 || t.Length == size)
}

// decodedSlot is one task's batches, or why they could not be had.
type decodedSlot struct {
	done    chan struct{}
	batches []arrow.RecordBatch // whole-file batches, retained for the reader
	err     error
}

// batches streams the tasks' batches in task order, with schema's columns
// (the projected scan's). Files the cache lacks are decoded ahead of the
// consumer, a few at a time.
func (d *decodedRead) batches(ctx context.Context, schema *arrow.Schema) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		workers := max(runtime.GOMAXPROCS(0), 1)
		ahead := make(chan struct{}, 2*workers) // slots handed out, not yet consumed
		decoding := make(chan struct{}, workers)
		slots := make(chan *decodedSlot, len(d.tasks))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(slots)
			for _, t := range d.tasks {
				select {
				case ahead <- struct{}{}:
				case <-ctx.Done():
					return
				}
				s := &decodedSlot{done: make(chan struct{})}
				slots <- s
				key := decodedKey{path: t.File.FilePath(), size: t.File.FileSizeBytes(), shape: d.shape}
				if s.batches = d.cache.get(key); s.batches != nil {
					close(s.done)
					continue
				}
				select {
				case decoding <- struct{}{}:
				case <-ctx.Done():
					s.err = ctx.Err()
					close(s.done)
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-decoding }()
					s.batches, s.err = d.decode(ctx, t, key)
					close(s.done)
				}()
			}
		}()
		defer func() {
			cancel()
			for s := range slots {
				<-s.done
				releaseBatches(s.batches)
			}
			wg.Wait()
		}()
		dels := deleteReader{fs: d.fs, posFiles: map[string]map[string][]int64{}}
		i := 0
		for s := range slots {
			t := d.tasks[i]
			i++
			<-s.done
			<-ahead
			if s.err != nil {
				yield(nil, s.err)
				return
			}
			ok, err := d.serve(ctx, schema, t, s.batches, &dels, yield)
			s.batches = nil
			if err != nil {
				yield(nil, err)
				return
			}
			if !ok {
				return
			}
		}
		if err := ctx.Err(); err != nil && i < len(d.tasks) {
			yield(nil, err)
		}
	}
}

// decode reads t's file whole through iceberg-go and keeps it; it returns
// the batches retained for the caller.
func (d *decodedRead) decode(ctx context.Context, t table.FileScanTask, key decodedKey) ([]arrow.RecordBatch, error) {
	whole := t
	whole.DeleteFiles, whole.EqualityDeleteFiles, whole.DeletionVectorFiles = nil, nil, nil
	whole.Residual = nil
	_, seq, err := d.whole.ReadTasks(ctx, []table.FileScanTask{whole})
	if err != nil {
		return nil, err
	}
	f := &decodedFile{key: key}
	for rec, err := range seq {
		if err != nil {
			f.release()
			return nil, err
		}
		f.batches = append(f.batches, rec)
		f.rows += rec.NumRows()
		f.bytes += batchBytes(rec)
	}
	out := make([]arrow.RecordBatch, len(f.batches))
	for i, b := range f.batches {
		b.Retain()
		out[i] = b
	}
	d.cache.put(f)
	return out, nil
}

// serve yields the batches of t's file (whole, retained; serve releases
// them) as schema's columns less the rows t's delete files delete. ok is
// false when the consumer stopped.
func (d *decodedRead) serve(ctx context.Context, schema *arrow.Schema, t table.FileScanTask, batches []arrow.RecordBatch, dels *deleteReader, yield func(arrow.RecordBatch, error) bool) (ok bool, err error) {
	defer func() { releaseBatches(batches) }()
	deleted, err := dels.positions(ctx, t)
	if err != nil {
		return false, err
	}
	var start int64
	for i, rec := range batches {
		out, err := project(schema, rec)
		if err != nil {
			return false, err
		}
		n := rec.NumRows()
		rec.Release()
		batches[i] = nil
		if deleted != nil {
			kept, err := withoutPositions(ctx, out, deleted, start)
			out.Release()
			if err != nil {
				return false, err
			}
			out = kept
		}
		start += n
		if d.patch != nil {
			patched, err := d.patch(out, t)
			out.Release()
			if err != nil {
				return false, err
			}
			out = patched
		}
		if !yield(out, nil) {
			return false, nil
		}
	}
	return true, nil
}

func releaseBatches(batches []arrow.RecordBatch) {
	for _, b := range batches {
		if b != nil {
			b.Release()
		}
	}
}

// withoutPositions is rec, whose first row is the file's row start, less
// the rows at deleted positions.
func withoutPositions(ctx context.Context, rec arrow.RecordBatch, deleted *dv.RoaringPositionBitmap, start int64) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(int(n))
	some := false
	for i := range n {
		gone := deleted.Contains(uint64(start + i))
		some = some || gone
		b.UnsafeAppend(!gone)
	}
	if !some {
		rec.Retain()
		return rec, nil
	}
	mask := b.NewBooleanArray()
	defer mask.Release()
	return compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
}

// deleteReader reads the delete files of one read, each once.
type deleteReader struct {
	fs       icebergio.IO
	posFiles map[string]map[string][]int64 // position-delete file → data file → positions
}

// positions are the positions of t's file that its delete files delete,
// nil when none: its deletion vector's if it has one (which holds every
// earlier position delete of the file), else its position-delete files'.
func (r *deleteReader) positions(ctx context.Context, t table.FileScanTask) (*dv.RoaringPositionBitmap, error) {
	path := t.File.FilePath()
	var vector iceberg.DataFile
	for _, d := range t.DeletionVectorFiles {
		if ref := d.ReferencedDataFile(); ref == nil || *ref != path {
			continue
		}
		if vector != nil && !sameBlob(vector, d) {
			return nil, fmt.Errorf("multiple deletion vectors for data file %s: %s and %s", path, vector.FilePath(), d.FilePath())
		}
		vector = d
	}
	if vector != nil {
		bm, err := dv.ReadDV(r.fs, vector)
		if err != nil {
			return nil, fmt.Errorf("read deletion vectors from %s: %w", vector.FilePath(), err)
		}
		if !bm.IsEmpty() {
			return bm, nil
		}
	}
	var out *dv.RoaringPositionBitmap
	for _, d := range t.DeleteFiles {
		if d.ContentType() != iceberg.EntryContentPosDeletes || table.IsDeletionVector(d) {
			continue
		}
		byData, ok := r.posFiles[d.FilePath()]
		if !ok {
			var err error
			if byData, err = readPositionDeletes(ctx, r.fs, d.FilePath()); err != nil {
				return nil, fmt.Errorf("read position deletes from %s: %w", d.FilePath(), err)
			}
			r.posFiles[d.FilePath()] = byData
		}
		for _, pos := range byData[path] {
			if out == nil {
				out = dv.NewRoaringPositionBitmap()
			}
			out.Set(uint64(pos))
		}
	}
	return out, nil
}

// sameBlob says two deletion-vector entries are one blob of one Puffin file.
func sameBlob(a, b iceberg.DataFile) bool {
	ao, bo := a.ContentOffset(), b.ContentOffset()
	return a.FilePath() == b.FilePath() && ao != nil && bo != nil && *ao == *bo
}

// readPositionDeletes reads a position-delete file: the positions it
// deletes, by the data file path its rows name. It refuses what
// iceberg-go's reader refuses, with its words: a NULL file_path or pos, a
// negative pos.
func readPositionDeletes(ctx context.Context, fs icebergio.IO, path string) (map[string][]int64, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	var cols []int
	for _, name := range []string{"file_path", "pos"} {
		i := pf.MetaData().Schema.ColumnIndexByName(name)
		if i < 0 {
			return nil, fmt.Errorf("%w: position delete file has no %s column", iceberg.ErrInvalidSchema, name)
		}
		cols = append(cols, i)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	groups := make([]int, pf.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	tbl, err := fr.ReadRowGroups(ctx, cols, groups)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	var paths, positions *arrow.Chunked
	for i := range int(tbl.NumCols()) {
		switch tbl.Schema().Field(i).Name {
		case "file_path":
			paths = tbl.Column(i).Data()
		case "pos":
			positions = tbl.Column(i).Data()
		}
	}
	if paths == nil || positions == nil {
		return nil, fmt.Errorf("%w: position delete file without file_path and pos columns", iceberg.ErrInvalidSchema)
	}
	if paths.NullN() > 0 {
		return nil, fmt.Errorf("%w: null file_path in position delete file", iceberg.ErrInvalidSchema)
	}
	if positions.NullN() > 0 {
		return nil, fmt.Errorf("%w: null pos in position delete file", iceberg.ErrInvalidSchema)
	}
	out := map[string][]int64{}
	pc, pi := positions.Chunks(), 0
	var pos *array.Int64
	for _, chunk := range paths.Chunks() {
		for i := range chunk.Len() {
			for pos == nil || pi >= pos.Len() {
				if len(pc) == 0 {
					return nil, fmt.Errorf("%w: file_path and pos columns have different lengths", iceberg.ErrInvalidSchema)
				}
				p, ok := pc[0].(*array.Int64)
				if !ok {
					return nil, fmt.Errorf("%w: unsupported pos column type %s in position delete file", iceberg.ErrInvalidSchema, pc[0].DataType())
				}
				pos, pc, pi = p, pc[1:], 0
			}
			v := pos.Value(pi)
			pi++
			if v < 0 {
				return nil, fmt.Errorf("%w: negative pos %d in position delete file", iceberg.ErrInvalidSchema, v)
			}
			name := chunk.ValueStr(i)
			out[name] = append(out[name], v)
		}
	}
	return out, nil
}

package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// chunkRows is how many records one worker converts at a time.
const chunkRows = 8192

// ReadOptions say what to do with the rows read.
type ReadOptions struct {
	// MaxErrors is how many bad rows to skip; one more fails the import.
	MaxErrors int
	// OnBadRow is told each bad row skipped, in file order.
	OnBadRow func(*RowError)
}

// Reader is the rows of a Source as Arrow record batches of a target
// schema (the table's): source columns are matched to the target's by
// name (positionally for CSV without a header), a target column the source
// lacks is NULL. Text is read on one goroutine and converted on every core;
// batches come out in file order.
type Reader struct {
	target  *arrow.Schema
	opts    ReadOptions
	ctx     context.Context
	cancel  context.CancelFunc
	order   chan *chunk
	cur     arrow.RecordBatch
	err     error
	refs    atomic.Int64
	wg      sync.WaitGroup
	bytes   atomic.Int64
	rows    int64
	skipped int
}

// chunk is a run of records and, once done is closed, their batch.
type chunk struct {
	recs  []record
	batch arrow.RecordBatch
	bad   []*RowError
	fatal error // after the records: the source could not be read on
	done  chan struct{}
}

var _ array.RecordReader = (*Reader)(nil)

// Read starts reading the source's rows as batches of target.
func (s *Source) Read(ctx context.Context, target *arrow.Schema, opts ReadOptions) (*Reader, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &Reader{target: target, opts: opts, ctx: ctx, cancel: cancel, order: make(chan *chunk, 2*runtime.GOMAXPROCS(0)+2)}
	r.refs.Store(1)
	if s.format == Parquet {
		if err := s.parquetPlan(target); err != nil {
			cancel()
			return nil, err
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer close(r.order)
			s.readParquet(ctx, r)
		}()
		return r, nil
	}
	conv, err := s.textPlan(target)
	if err != nil {
		cancel()
		return nil, err
	}
	work := make(chan *chunk)
	workers := runtime.GOMAXPROCS(0)
	var convWG sync.WaitGroup
	for range workers {
		convWG.Add(1)
		go func() {
			defer convWG.Done()
			for c := range work {
				conv.convert(c)
				close(c.done)
			}
		}()
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(r.order)
		defer func() { close(work); convWG.Wait() }()
		s.readText(ctx, r, work)
	}()
	return r, nil
}

// emit hands a chunk to the consumer, in order, and to the workers when
// it needs converting; false when the import was stopped.
func (r *Reader) emit(ctx context.Context, c *chunk, work chan<- *chunk) bool {
	select {
	case r.order <- c:
	case <-ctx.Done():
		return false
	}
	if work == nil {
		return true
	}
	select {
	case work <- c:
		return true
	case <-ctx.Done():
		close(c.done) // the consumer is gone or will see the cancellation
		return false
	}
}

// readText reads every text file's records into chunks.
func (s *Source) readText(ctx context.Context, r *Reader, work chan<- *chunk) {
	c := &chunk{done: make(chan struct{})}
	flush := func() bool {
		if len(c.recs) == 0 && c.fatal == nil && len(c.bad) == 0 {
			return true
		}
		ok := r.emit(ctx, c, work)
		c = &chunk{done: make(chan struct{})}
		return ok
	}
	for _, fi := range s.files {
		rd, closer, err := s.open(ctx, fi, func(n int) { r.bytes.Add(int64(n)) })
		if err == nil {
			var rows textRows
			if rows, err = s.textRows(rd, fi); err == nil {
				err = s.readRecords(ctx, rows, &c, flush)
			}
			closer.Close()
		}
		if err != nil {
			c.fatal = err
			flush()
			return
		}
	}
	flush()
}

// readRecords reads one file's records into *c, flushing full chunks. A
// bad record goes in the chunk's bad list, in its place among the rows:
// workers append theirs after it, so bad rows are reported in line order.
func (s *Source) readRecords(ctx context.Context, rows textRows, c **chunk, flush func() bool) error {
	for {
		rec, err := rows.next()
		var rowErr *RowError
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.As(err, &rowErr):
			rec = record{line: rowErr.Line, file: rowErr.File}
			(*c).recs = append((*c).recs, rec)
			(*c).bad = append((*c).bad, rowErr)
			continue
		case err != nil:
			return err
		}
		(*c).recs = append((*c).recs, rec)
		if len((*c).recs) >= chunkRows {
			if !flush() {
				return ctx.Err()
			}
		}
	}
}

// textConv converts records into batches of the target schema.
type textConv struct {
	s      *Source
	target *arrow.Schema
	// source[j] is the source column of target column j, -1 for none.
	source []int
	conv   []converter
}

// textPlan matches the source's columns to target's.
func (s *Source) textPlan(target *arrow.Schema) (*textConv, error) {
	t := &textConv{s: s, target: target, source: make([]int, target.NumFields()), conv: make([]converter, target.NumFields())}
	names := s.names()
	positional := s.format == CSV && !s.header
	if positional && len(names) != target.NumFields() {
		return nil, fmt.Errorf("the files have %d columns and no header, the table %d: say which is which with a header line", len(names), target.NumFields())
	}
	for j, f := range target.Fields() {
		t.source[j] = j
		if !positional {
			t.source[j] = indexFold(names, f.Name)
		}
		if t.source[j] < 0 && !f.Nullable {
			return nil, fmt.Errorf("the files have no column %s, which the table requires (NOT NULL)", f.Name)
		}
		var err error
		if t.conv[j], err = converterFor(f.Type); err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	if !positional {
		for _, n := range names {
			if indexFoldFields(target, n) < 0 {
				return nil, fmt.Errorf("the files have a column %s, which the table has not", n)
			}
		}
	}
	return t, nil
}

func indexFoldFields(sc *arrow.Schema, name string) int {
	for i, f := range sc.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// convert converts a chunk's records; bad ones join c.bad.
func (t *textConv) convert(c *chunk) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, t.target)
	defer b.Release()
	b.Reserve(len(c.recs))
	cells := make([]cell, len(t.source))
	fields := t.target.Fields()
	var bad []*RowError
	next := 0 // the next of c.bad, which the reader found, in line order
	for _, rec := range c.recs {
		if rec.fields == nil {
			bad = append(bad, c.bad[next])
			next++
			continue
		}
		var rowErr *RowError
		for j, src := range t.source {
			if src < 0 || (rec.null != nil && rec.null[src]) || (!rec.exact && t.s.isNull(rec.fields[src])) {
				if !fields[j].Nullable {
					rowErr = &RowError{File: rec.file, Line: rec.line, Column: fields[j].Name, Err: errors.New("NULL in a NOT NULL column")}
					break
				}
				cells[j] = cell{null: true}
				continue
			}
			v, err := t.conv[j].parse(rec.fields[src])
			if err != nil {
				rowErr = &RowError{File: rec.file, Line: rec.line, Column: fields[j].Name, Value: rec.fields[src], Err: fmt.Errorf("value %q is %w", rec.fields[src], err)}
				break
			}
			cells[j] = v
		}
		if rowErr != nil {
			bad = append(bad, rowErr)
			continue
		}
		for j := range cells {
			if cells[j].null {
				b.Field(j).AppendNull()
			} else {
				t.conv[j].append(b.Field(j), cells[j])
			}
		}
	}
	c.bad = bad
	c.batch = b.NewRecordBatch()
	c.recs = nil
}

// Next implements array.RecordReader.
func (r *Reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for r.err == nil {
		c, ok := <-r.order
		if !ok {
			if err := r.ctx.Err(); err != nil {
				r.err = err
			}
			return false
		}
		select {
		case <-c.done:
		case <-r.ctx.Done():
			r.err = r.ctx.Err()
			return false
		}
		for _, bad := range c.bad {
			if r.skipped >= r.opts.MaxErrors {
				r.err = bad
				break
			}
			r.skipped++
			if r.opts.OnBadRow != nil {
				r.opts.OnBadRow(bad)
			}
		}
		if r.err == nil && c.fatal != nil {
			r.err = c.fatal
		}
		if r.err != nil {
			if c.batch != nil {
				c.batch.Release()
			}
			r.stop()
			return false
		}
		if c.batch != nil && c.batch.NumRows() > 0 {
			r.cur = c.batch
			r.rows += c.batch.NumRows()
			return true
		}
		if c.batch != nil {
			c.batch.Release()
		}
	}
	return false
}

// stop ends the reading goroutines and releases what they produced.
func (r *Reader) stop() {
	r.cancel()
	go func() {
		for c := range r.order {
			<-c.done
			if c.batch != nil {
				c.batch.Release()
			}
		}
	}()
}

// RecordBatch implements array.RecordReader.
func (r *Reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record implements array.RecordReader.
//
// Deprecated: use RecordBatch.
func (r *Reader) Record() arrow.RecordBatch { return r.cur }

// Schema implements array.RecordReader.
func (r *Reader) Schema() *arrow.Schema { return r.target }

// Err implements array.RecordReader.
func (r *Reader) Err() error { return r.err }

// Retain implements array.RecordReader.
func (r *Reader) Retain() { r.refs.Add(1) }

// Release implements array.RecordReader.
func (r *Reader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.stop()
		r.wg.Wait()
	}
}

// BytesRead is how many bytes of the files were read so far.
func (r *Reader) BytesRead() int64 { return r.bytes.Load() }

// Rows is how many rows the batches returned so far hold.
func (r *Reader) Rows() int64 { return r.rows }

// Skipped is how many bad rows were skipped.
func (r *Reader) Skipped() int { return r.skipped }

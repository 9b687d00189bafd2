// Package pushdown plans and runs table scans: which columns and files to
// read, and reading them as Arrow batches. Predicate translation, pruning and
// the vectorized operators grow here; it knows nothing of SQL sessions.
package pushdown

import (
	"context"
	"io"
	"iter"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
)

// Batches streams the Arrow record batches of a scan. Files are decoded in
// parallel (bounded by iceberg-go's scan concurrency, GOMAXPROCS by default),
// large files as several pieces of row groups (split.go), and arrive in file
// order; nothing is read ahead of what the consumer pulls
// beyond that bound, and Close stops all outstanding I/O.
type Batches struct {
	schema *arrow.Schema
	next   func() (arrow.RecordBatch, error, bool)
	stop   func()
	cancel context.CancelFunc
	prev   arrow.RecordBatch
	rows   *atomic.Int64 // Read.Rows
}

// Open starts reading the planned tasks of r's scan (missing.go says how
// files that lack its columns are read). The caller must Close the result.
func Open(ctx context.Context, r Read, tasks []table.FileScanTask) (*Batches, error) {
	ctx, cancel := context.WithCancel(ctx)
	schema, seq, err := openRead(ctx, r, tasks)
	if err != nil {
		cancel()
		return nil, err
	}
	next, stop := iter.Pull2(seq)
	return &Batches{schema: schema, next: next, stop: stop, cancel: cancel, rows: r.Rows}, nil
}

// Schema is the Arrow schema of every batch.
func (b *Batches) Schema() *arrow.Schema { return b.schema }

// Next returns the next batch, or io.EOF after the last. A batch stays valid
// until the following call to Next or Close.
func (b *Batches) Next() (arrow.RecordBatch, error) {
	b.release()
	rec, err, ok := b.next()
	if !ok {
		return nil, io.EOF
	}
	if err != nil {
		return nil, err
	}
	b.prev = rec
	if b.rows != nil {
		b.rows.Add(rec.NumRows())
	}
	return rec, nil
}

func (b *Batches) release() {
	if b.prev != nil {
		b.prev.Release()
		b.prev = nil
	}
}

// Close stops the scan and releases its memory. It is safe to call twice.
func (b *Batches) Close() {
	b.release()
	b.cancel()
	b.stop()
}

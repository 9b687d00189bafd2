package engine

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// iceberg-go writes an unpartitioned table through one rolling Parquet
// writer: encoding and compressing every column of every row group on one
// core, which capped loading at about 500K rows/s. writeFiles runs one
// writer per core instead. The rows are cut into runs of exactly one row
// group (write.parquet.row-group-limit rows) and the runs are dealt round
// robin to the writers, so every row group still holds consecutive input
// rows: data loaded in key order keeps row-group statistics as tight as a
// single writer makes them, and row-group pruning as effective. Each writer
// produces its own files (rolled at write.target-file-size-bytes as usual),
// so a load writes at least one file per writer that received a run.
//
// Partitioned tables keep iceberg-go's fanout writer, which already writes
// partitions on several workers, and sorted tables one writer, which sorts
// each batch it is given whole (sortedwrite.go).

// writeFiles writes records as data files of tbl and returns them. It
// releases every record, as table.WriteRecords does.
func writeFiles(ctx context.Context, tbl *table.Table, schema *arrow.Schema, records iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || !tbl.Spec().IsUnpartitioned() || !tbl.SortOrder().IsUnsorted() {
		return collectFiles(table.WriteRecords(ctx, tbl, schema, records))
	}
	runRows := int64(tbl.Properties().GetInt(table.ParquetRowGroupLimitKey, table.ParquetRowGroupLimitDefault))
	if runRows <= 0 {
		runRows = table.ParquetRowGroupLimitDefault
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &parallelWriter{ctx: ctx, cancel: cancel, tbl: tbl, schema: schema, lanes: make([]*writeLane, workers)}
	err := p.deal(records, runRows)
	files, werr := p.finish()
	if werr != nil {
		return files, werr // the cause; deal then only saw the cancellation
	}
	return files, err
}

type parallelWriter struct {
	ctx    context.Context
	cancel context.CancelFunc
	tbl    *table.Table
	schema *arrow.Schema
	lanes  []*writeLane // started on first use: a small insert starts one
	wg     sync.WaitGroup
}

// writeLane is one writer: its own table.WriteRecords fed through a channel.
type writeLane struct {
	batches chan arrow.RecordBatch
	files   []iceberg.DataFile
	err     error
}

// deal cuts records into runs of runRows rows and sends run k to lane
// k mod len(lanes). It stops at the first error of the input or of a lane.
func (p *parallelWriter) deal(records iter.Seq2[arrow.RecordBatch, error], runRows int64) error {
	lane, inRun := 0, int64(0)
	for rec, err := range records {
		if err != nil {
			return err
		}
		for off := int64(0); off < rec.NumRows(); {
			n := min(rec.NumRows()-off, runRows-inRun)
			part := rec
			if off != 0 || n != rec.NumRows() {
				part = rec.NewSlice(off, off+n)
			} else {
				part.Retain()
			}
			if err := p.send(lane, part); err != nil {
				rec.Release()
				return err
			}
			off += n
			if inRun += n; inRun == runRows {
				lane, inRun = p.nextLane(lane), 0 // writelanes.go
			}
		}
		rec.Release()
	}
	return nil
}

func (p *parallelWriter) send(i int, rec arrow.RecordBatch) error {
	l := p.lanes[i]
	if l == nil {
		l = p.start()
		p.lanes[i] = l
	}
	select {
	case l.batches <- rec:
		return nil
	case <-p.ctx.Done():
		rec.Release()
		return p.ctx.Err()
	}
}

// start runs a lane's writer. A writer that fails cancels the others, and
// keeps draining its channel so that the dealer never blocks on it.
func (p *parallelWriter) start() *writeLane {
	l := &writeLane{batches: make(chan arrow.RecordBatch, 2)}
	records := func(yield func(arrow.RecordBatch, error) bool) {
		for b := range l.batches {
			if !yield(b, nil) {
				return
			}
		}
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		l.files, l.err = collectFiles(table.WriteRecords(p.ctx, p.tbl, p.schema, records))
		if l.err != nil {
			p.cancel()
		}
		for b := range l.batches {
			b.Release()
		}
	}()
	return l
}

// finish closes the lanes, waits for their writers and returns their files
// in lane order.
func (p *parallelWriter) finish() ([]iceberg.DataFile, error) {
	for _, l := range p.lanes {
		if l != nil {
			close(l.batches)
		}
	}
	p.wg.Wait()
	var files []iceberg.DataFile
	var errs []error
	for _, l := range p.lanes {
		if l == nil {
			continue
		}
		files = append(files, l.files...)
		if l.err != nil {
			errs = append(errs, l.err)
		}
	}
	return files, errors.Join(errs...)
}

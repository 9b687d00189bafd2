package engine

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/icesql/icesql/pushdown"
	"github.com/icesql/icesql/storage"
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
// each batch it is given whole (parallelwrite.go).

// writeFiles writes records as data files of tbl and returns them. It
// releases every record, as table.WriteRecords does.
func writeFiles(ctx context.Context, tbl *table.Table, schema *arrow.Schema, records iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error) {
	tbl = storage.WriterTable(tbl) // the writers need no history
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
				lane, inRun = p.nextLane(lane), 0 // parallelwrite.go
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

// nextLane picks the lane for the next run: the one with the fewest
// batches waiting, a lane not yet started counting as idle, ties going to
// the lanes after prev in turn. Strict round robin made the dealer wait on
// a lane whose writer the machine had not scheduled while the other lane
// sat idle; any lane may take any run, since a run is a whole row group of
// consecutive rows whichever lane writes it.
func (p *parallelWriter) nextLane(prev int) int {
	best, bestQueued := -1, 0
	for k := 1; k <= len(p.lanes); k++ {
		i := (prev + k) % len(p.lanes)
		l := p.lanes[i]
		if l == nil {
			return i
		}
		if q := len(l.batches); best < 0 || q < bestQueued {
			best, bestQueued = i, q
		}
	}
	return best
}

// sortedBatchRows is how many rows an insert into a table with a sort order
// buffers per batch. iceberg-go sorts each batch it writes by the table's
// sort order, not a file as a whole (table/sort_keys.go), so a statement of
// up to this many rows writes files that are sorted throughout, and a larger
// one writes files made of sorted runs this long. The cap bounds memory.
const sortedBatchRows = 512 * 1024

// batchLimit is the number of rows an insert into tbl buffers per batch.
func batchLimit(tbl *table.Table) int {
	if order := tbl.SortOrder(); order.IsUnsorted() {
		return batchRows
	}
	return sortedBatchRows
}

// DefaultRowGroupRows is the Parquet row-group limit icesql writes with when
// the table sets no write.parquet.row-group-limit. iceberg-go's default of
// 1,048,576 rows made a row group the smallest unit a point lookup could
// skip to: "WHERE l_orderkey = k" on TPC-H SF1 decoded a million rows of
// every projected column to return seven. 131,072 rows (DuckDB writes
// 122,880) cuts that eightfold, keeps every column chunk large enough to
// compress well, and equals iceberg-go's read batch size
// (read.parquet.batch-size), so a row group decodes as one batch. It is
// also the unit the parallel writer deals to its lanes (parallelwrite.go):
// runs of a million rows kept one lane encoding while the other waited.
const DefaultRowGroupRows = 128 * 1024

// rowGroupDefaults adds to set the row-group limit of a write to a table
// whose properties props name none. A table that sets one keeps it.
func rowGroupDefaults(props iceberg.Properties, set iceberg.Properties) {
	if _, ok := props[table.ParquetRowGroupLimitKey]; ok {
		return
	}
	set[table.ParquetRowGroupLimitKey] = strconv.Itoa(DefaultRowGroupRows)
}

// pruneRowGroups narrows tasks to the row groups that might hold a row the
// filter accepts (pushdown.PruneRowGroups), for every reader: the vector
// path then reads without iceberg-go's row filter, and the row path skips
// what iceberg-go's weakened filter cannot (decimals, columns with NULLs). The
// footers are read through the statement's counting IO, so EXPLAIN ANALYZE
// counts the row groups skipped here. Anything that fails (a filter the
// pinned schema cannot bind, a footer that cannot be read) leaves tasks as
// they are: reading them reports a broken file as it always did.
func (t *Table) pruneRowGroups(ctx context.Context, planned *pushdown.Planned, tasks []table.FileScanTask, filter iceberg.BooleanExpression) []table.FileScanTask {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return tasks
	}
	pruned, _, err := pushdown.PruneRowGroups(ctx, t.db.e.caches, planned.IO(fs), t.tbl.Schema(), filter, tasks)
	if err != nil {
		return tasks
	}
	return pruned
}

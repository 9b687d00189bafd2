package vecexec

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown/vector"
)

// The rows of a vectorized filter are built ahead of go-mysql-server on
// every core: each batch is selected and its kept rows built by one
// worker, and the iterator hands out the batches' rows in scan order, so
// the single goroutine pulling rows (a join, a sort) does only its own
// work. At most pipelineDepth batches per worker wait, which bounds memory.
const pipelineDepth = 2

// filteredBatch is the rows one batch contributes, once its worker is done.
type filteredBatch struct {
	done chan struct{}
	rows []sql.Row
	err  error
}

type filterJob struct {
	rec arrow.RecordBatch
	out *filteredBatch
}

func (v *vectorFilter) iter(ctx *sql.Context) (sql.RowIter, error) {
	return v.pipeline(ctx, func() (batchFunc, error) {
		k, err := v.keeper()
		if err != nil {
			return nil, err
		}
		return k.filter, nil
	})
}

// batchFunc turns one batch into rows; each worker has its own.
type batchFunc func(ctx *sql.Context, rec arrow.RecordBatch) ([]sql.Row, error)

// keeper is a worker's filter over v's batches.
func (v *vectorFilter) keeper() (*keptRows, error) {
	k := &keptRows{v: v, rows: sqlval.RowBlocks{Width: v.width}}
	if v.pred != nil {
		s, err := vector.NewSelector(v.pred)
		if err != nil {
			return nil, fmt.Errorf("vectorized filter over %s: %w", v.t.String(), err)
		}
		k.sel = s
	}
	return k, nil
}

// pipeline reads v's batches and turns them into rows on every core with
// the batchFuncs newFunc makes, giving the rows in scan order.
func (v *vectorFilter) pipeline(ctx *sql.Context, newFunc func() (batchFunc, error)) (sql.RowIter, error) {
	fns, src, err := v.open(ctx, newFunc)
	if err != nil {
		return nil, err
	}
	return v.ordered(ctx, src, fns), nil
}

// open makes a batchFunc per core and starts the scan: native decoding,
// with the WHERE clause as its prefilter, where the files allow it.
func (v *vectorFilter) open(ctx *sql.Context, newFunc func() (batchFunc, error)) ([]batchFunc, BatchSource, error) {
	fns := make([]batchFunc, runtime.GOMAXPROCS(0))
	for i := range fns {
		fn, err := newFunc()
		if err != nil {
			return nil, nil, err
		}
		fns[i] = fn
	}
	src, _, err := v.t.OpenBatches(withPrefilter(v.t.WithNativeDecode(ctx), v.pred), v.read, false)
	if err != nil {
		return nil, nil, err
	}
	return fns, src, nil
}

// ordered reads src on one goroutine and hands its batches to a worker
// per batchFunc, giving their rows in scan order.
func (v *vectorFilter) ordered(ctx *sql.Context, src BatchSource, fns []batchFunc) sql.RowIter {
	runCtx, cancel := context.WithCancel(ctx)
	it := &vectorFilterIter{
		src:    src,
		cancel: cancel,
		order:  make(chan *filteredBatch, len(fns)*pipelineDepth),
	}
	jobs := make(chan filterJob, len(fns))
	it.wg.Add(1)
	go it.produce(runCtx, jobs)
	for _, fn := range fns {
		it.wg.Add(1)
		go it.work(ctx.WithContext(runCtx), fn, jobs)
	}
	return it
}

// vectorFilterIter gives the rows each batch's worker kept, batch by batch
// in scan order.
type vectorFilterIter struct {
	src    BatchSource
	cancel context.CancelFunc
	wg     sync.WaitGroup
	order  chan *filteredBatch // batches in scan order, as they are read
	cur    []sql.Row
	closed bool
}

// produce reads the batches, queueing each for a worker and, in order,
// for the consumer.
func (it *vectorFilterIter) produce(ctx context.Context, jobs chan<- filterJob) {
	defer it.wg.Done()
	defer close(it.order)
	defer close(jobs)
	for {
		rec, err := it.src.Next()
		if err != nil {
			// io.EOF ends the rows; the consumer reports any other error.
			fb := &filteredBatch{done: make(chan struct{}), err: err}
			close(fb.done)
			select {
			case it.order <- fb:
			case <-ctx.Done():
			}
			return
		}
		rec.Retain()
		fb := &filteredBatch{done: make(chan struct{})}
		select {
		case it.order <- fb:
		case <-ctx.Done():
			rec.Release()
			return
		}
		select {
		case jobs <- filterJob{rec: rec, out: fb}:
		case <-ctx.Done():
			rec.Release()
			return
		}
	}
}

func (it *vectorFilterIter) work(ctx *sql.Context, fn batchFunc, jobs <-chan filterJob) {
	defer it.wg.Done()
	for j := range jobs {
		if ctx.Err() == nil {
			j.out.rows, j.out.err = fn(ctx, j.rec)
		} else {
			j.out.err = ctx.Err()
		}
		j.rec.Release()
		close(j.out.done)
	}
}

func (it *vectorFilterIter) Next(ctx *sql.Context) (sql.Row, error) {
	for len(it.cur) == 0 {
		var fb *filteredBatch
		select {
		case fb = <-it.order:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if fb == nil {
			return nil, errors.New("vectorized filter: read after the end")
		}
		select {
		case <-fb.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if fb.err != nil {
			return nil, fb.err // io.EOF ends the rows
		}
		it.cur = fb.rows
	}
	r := it.cur[0]
	it.cur = it.cur[1:]
	return r, nil
}

func (it *vectorFilterIter) Close(*sql.Context) error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.cancel()
	// Unblock a producer waiting to queue a batch, then wait for every
	// goroutine before closing the source they read.
	go func() {
		for range it.order {
		}
	}()
	it.wg.Wait()
	it.src.Close()
	return nil
}

var _ sql.RowIter = (*vectorFilterIter)(nil)

// keptRows builds one worker's rows.
type keptRows struct {
	v    *vectorFilter
	sel  *vector.Selector // nil: every row
	top  *BestKeys        // nil: no ORDER BY ... LIMIT narrows the rows (vecrowstopn.go)
	cols []arrow.Array    // the batch's columns in row order
	rows sqlval.RowBlocks
	all  []int32
	// zone is the session's, for timestamptz (sqlval/timezone.go).
	zone    *time.Location
	started bool
}

// filter is the rows of rec the predicate keeps.
func (b *keptRows) filter(ctx *sql.Context, rec arrow.RecordBatch) ([]sql.Row, error) {
	keep, pending, err := b.selectRows(ctx, rec)
	if err != nil || keep == nil {
		return pending, err
	}
	if b.top != nil {
		keep = b.top.Narrow(b.cols, keep)
	}
	out := make([]sql.Row, len(keep))
	for i, r := range keep {
		if out[i], err = b.row(int(r)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// selectRows binds rec and gives the rows the predicate keeps, or, for a
// batch the vector path cannot compute exactly, nil and the rows the row
// path kept.
func (b *keptRows) selectRows(ctx *sql.Context, rec arrow.RecordBatch) ([]int32, []sql.Row, error) {
	if !b.started {
		b.zone, b.started = sqlval.SessionZone(ctx), true
	}
	b.cols = b.cols[:0]
	for _, name := range b.v.cols {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, nil, fmt.Errorf("scan of %s returned no column %s", b.v.t.String(), name)
		}
		b.cols = append(b.cols, rec.Column(idx[0]))
	}
	n := int(rec.NumRows())
	if b.sel == nil {
		if cap(b.all) < n {
			b.all = make([]int32, n)
			for i := range b.all {
				b.all[i] = int32(i)
			}
		}
		return b.all[:n], nil, nil
	}
	keep, err := b.sel.Select(rec)
	if errors.Is(err, vector.ErrInexact) {
		rows, err := b.filterRows(ctx, rec)
		if rows == nil {
			rows = []sql.Row{}
		}
		return nil, rows, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("vectorized filter over %s: %w", b.v.t.String(), err)
	}
	return keep, nil, nil
}

func (b *keptRows) row(r int) (sql.Row, error) {
	row := b.rows.Next()
	for i, col := range b.cols {
		val, err := b.v.value(i, col, r)
		if err != nil {
			return nil, err
		}
		row[i] = sqlval.Zoned(col, val, b.zone)
	}
	return row, nil
}

// value is row r of col, the batch's column i. Natively decoded batches
// (vecscan.go) hold decimals as unscaled int64s and strings as
// dictionaries, whose memory is reused once the batch is released: a
// string is copied out. iceberg-go's batches, in the same scan, hold
// columns as Arrow has them.
func (v *vectorFilter) value(i int, col arrow.Array, r int) (any, error) {
	switch a := col.(type) {
	case *array.Int64:
		if s := v.scales[i]; s >= 0 && a.IsValid(r) {
			return apd.New(a.Value(r), -s), nil
		}
	case *array.Dictionary:
		if a.IsNull(r) {
			return nil, nil
		}
		if d, ok := a.Dictionary().(*array.String); ok {
			return strings.Clone(d.Value(a.GetValueIndex(r))), nil
		}
		return sqlval.RowValue(a.Dictionary(), a.GetValueIndex(r))
	}
	return sqlval.RowValue(col, r)
}

// filterRows filters rec on the row path: one of its values is outside
// what the vector path computes exactly. go-mysql-server's expressions
// fill caches of their own on first use (Arithmetic's result type), so
// the workers evaluate the condition one at a time.
func (b *keptRows) filterRows(ctx *sql.Context, rec arrow.RecordBatch) ([]sql.Row, error) {
	b.v.condMu.Lock()
	defer b.v.condMu.Unlock()
	var out []sql.Row
	for r := range int(rec.NumRows()) {
		row, err := b.row(r)
		if err != nil {
			return nil, err
		}
		ok, err := sql.EvaluateCondition(ctx, b.v.cond, row)
		if err != nil {
			return nil, err
		}
		if sql.IsTrue(ok) {
			out = append(out, row)
		}
	}
	return out, nil
}

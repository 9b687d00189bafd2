package vecexec

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/pushdown"
)

// unordered turns the batches of a native scan into rows on every core,
// each worker decoding its own share of the scan (NativeBatches.Split) as
// well as filtering it: for a consumer that does not need the scan's
// order, such as a TopN, decoding is then no longer one goroutine's work.
// The rows come in no particular order. A scan iceberg-go reads goes
// through the ordered pipeline.
func (v *vectorFilter) unordered(ctx *sql.Context, newFunc func() (batchFunc, error)) (sql.RowIter, error) {
	fns, src, err := v.open(ctx, newFunc)
	if err != nil {
		return nil, err
	}
	nb, ok := src.(*pushdown.NativeBatches)
	if !ok {
		return v.ordered(ctx, src, fns), nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	it := &unorderedIter{src: nb, cancel: cancel, out: make(chan rowsOrErr, len(fns)*pipelineDepth)}
	for i, part := range nb.Split(len(fns)) {
		it.wg.Add(1)
		go it.work(ctx.WithContext(runCtx), part, fns[i])
	}
	go func() {
		it.wg.Wait()
		close(it.out)
	}()
	return it, nil
}

type rowsOrErr struct {
	rows []sql.Row
	err  error
}

// unorderedIter gives the rows of its workers as they come.
type unorderedIter struct {
	src    *pushdown.NativeBatches
	cancel context.CancelFunc
	wg     sync.WaitGroup
	out    chan rowsOrErr
	cur    []sql.Row
	closed bool
}

func (it *unorderedIter) work(ctx *sql.Context, part func() (arrow.RecordBatch, error), fn batchFunc) {
	defer it.wg.Done()
	for {
		rec, err := part()
		if errors.Is(err, io.EOF) {
			return
		}
		var rows []sql.Row
		if err == nil {
			rows, err = fn(ctx, rec)
			rec.Release()
		}
		if len(rows) == 0 && err == nil {
			continue
		}
		select {
		case it.out <- rowsOrErr{rows, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

func (it *unorderedIter) Next(ctx *sql.Context) (sql.Row, error) {
	for len(it.cur) == 0 {
		var r rowsOrErr
		var ok bool
		select {
		case r, ok = <-it.out:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !ok {
			return nil, io.EOF
		}
		if r.err != nil {
			return nil, r.err
		}
		it.cur = r.rows
	}
	row := it.cur[0]
	it.cur = it.cur[1:]
	return row, nil
}

func (it *unorderedIter) Close(*sql.Context) error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.cancel()
	// Unblock workers waiting to hand over rows, then wait for them all
	// before closing the scan they decode.
	go func() {
		for range it.out {
		}
	}()
	it.wg.Wait()
	it.src.Close()
	return nil
}

var _ sql.RowIter = (*unorderedIter)(nil)

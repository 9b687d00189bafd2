package vector

import (
	"context"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Splitter is a Source that several goroutines can read at once, each
// decoding the batches it aggregates (pushdown's native Parquet reader):
// no batch crosses goroutines, so a worker never waits for another to
// hand it work, which on a busy machine costs more than the decoding.
// Split returns n parts; each call of a part returns a batch the caller
// releases, or io.EOF when the part is done.
type Splitter interface {
	Split(n int) []func() (arrow.RecordBatch, error)
}

// runSplit aggregates each part of a split source on its own worker and
// merges the workers' groups.
func runSplit(ctx context.Context, cancel context.CancelCauseFunc, parts []func() (arrow.RecordBatch, error), ws []*worker) ([]Group, error) {
	var wg sync.WaitGroup
	for i, next := range parts {
		w := ws[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				rec, err := next()
				if err == io.EOF {
					return
				}
				if err != nil {
					cancel(err)
					return
				}
				err = w.add(rec)
				rec.Release()
				if err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	for _, w := range ws[1:] {
		ws[0].merge(w)
	}
	return ws[0].groups()
}

package vector

import (
	"context"
	"errors"
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

// EachBatch reads every batch of src on workers goroutines and calls
// fn(w, rec) for each, w being the goroutine's number (0 to workers-1); rec
// is released after fn returns. A Splitter is read by each goroutine itself;
// any other source by one reader handing batches out. The first error stops
// the rest and is returned.
func EachBatch(ctx context.Context, src Source, workers int, fn func(w int, rec arrow.RecordBatch) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	if sp, ok := src.(Splitter); ok {
		for w, next := range sp.Split(workers) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					rec, err := next()
					if errors.Is(err, io.EOF) {
						return
					}
					if err == nil {
						err = fn(w, rec)
						rec.Release()
					}
					if err != nil {
						cancel(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return context.Cause(ctx)
	}
	recs := make(chan arrow.RecordBatch, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rec := range recs {
				if ctx.Err() == nil {
					if err := fn(w, rec); err != nil {
						cancel(err)
					}
				}
				rec.Release()
			}
		}()
	}
	readErr := func() error {
		defer close(recs)
		for {
			rec, err := src.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			rec.Retain()
			select {
			case recs <- rec:
			case <-ctx.Done():
				rec.Release()
				return nil
			}
		}
	}()
	wg.Wait()
	if readErr != nil {
		return readErr
	}
	return context.Cause(ctx)
}

package engine

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
)

// rewriteAll makes the copy-on-write rewrites of a statement's changed
// data files (rowEffects decides the same way which files those are),
// several files at a time: a scattered change rewrites every file, and
// each rewrite (read, filter by position, encode, compress) is independent
// of the others. The result is by data file path; a failed rewrite fails
// the statement, and the files others wrote stay unreferenced, as a failed
// single rewrite leaves its own.
func (t *Table) rewriteAll(ctx *sql.Context, mode string, dels map[string][]int64, staged map[string]bool) (map[string][]iceberg.DataFile, error) {
	type job struct {
		path      string
		positions []int64
	}
	var jobs []job
	for path, positions := range dels {
		task, ok := t.identity.task(path)
		if !ok {
			continue // rowEffects reports it
		}
		positions = slices.Compact(slices.Sorted(slices.Values(positions)))
		if int64(len(positions)) >= task.File.Count() || !(staged[path] || mode == copyOnWrite) {
			continue
		}
		jobs = append(jobs, job{path, positions})
	}
	out := make(map[string][]iceberg.DataFile, len(jobs))
	if len(jobs) == 0 {
		return out, nil
	}
	// The first view of a transaction's staged metadata sets a field of
	// iceberg-go's metadata builder; made here, the workers' views only read.
	if _, _, err := t.positionScan(t.names, nil); err != nil {
		return nil, err
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan job)
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				mu.Lock()
				failed := firstErr != nil
				mu.Unlock()
				if failed {
					continue
				}
				task, _ := t.identity.task(j.path)
				files, err := t.rewriteWithout(ctx, task, j.positions)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("rewrite data file %s of %s: %w", j.path, t, err)
				}
				out[j.path] = files
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return out, firstErr
}

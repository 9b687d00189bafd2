package engine

import (
	"sync"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/memlimit"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown"
)

// Scans read small data files through the engine's decoded-file cache
// (pushdown/filecache.go): a file decoded by one statement is served from
// memory to the next ones that read it, in every session, on the row path
// and the vectorized path alike. SET icesql_file_cache = OFF (or SET GLOBAL)
// reads every file from storage again: an escape hatch, and the way the
// differential tests get the uncached answer.

// fileCacheVar is the switch of the decoded-file cache.
const fileCacheVar = "icesql_file_cache"

var registerFileCacheVar sync.Once

// addFileCacheVar declares icesql_file_cache; go-mysql-server's system
// variables are process-wide.
func addFileCacheVar() {
	registerFileCacheVar.Do(func() {
		sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{sqlval.SwitchVariable(fileCacheVar)})
	})
}

// decodedShare is the divisor of the memory limit the cache may hold, at
// most its default 64 MiB: 32 MiB under a 512 MiB limit, about a tenth of
// the statements' budget (memlimit.BudgetPercent).
const decodedShare = 16

// limitDecodedFiles bounds the engine's decoded-file cache by its memory
// limit, if it has one: the cache holds a share of it, and yields to the
// statements (holds nothing) while the live heap is past half their budget.
func (e *Engine) limitDecodedFiles() {
	b := e.budget
	if b == nil {
		return
	}
	limit := min(e.cfg.MemoryLimit/decodedShare, 64<<20)
	e.caches.SetDecodedLimit(limit, func() bool { return memlimit.LiveHeap() > b.MaxMemory()/2 })
}

// wholeScan is the scan that reads t's small files through the decoded-file
// cache (pushdown.Read.Whole): every column of the pinned snapshot's
// schema, no row filter. It is nil, for no cache, when the session turned
// the cache off or the scan selects rows to change.
func (t *Table) wholeScan(ctx *sql.Context, planned *pushdown.Planned) func() (*table.Scan, error) {
	if t.identity != nil || t.rowSelect != nil || !sqlval.SwitchedOn(ctx, fileCacheVar) {
		return nil
	}
	var once sync.Once
	var scan *table.Scan
	var err error
	return func() (*table.Scan, error) {
		// One read may open its tasks in several parts (vecexec's
		// identity-partition fill opens each file alone): one scan serves them.
		once.Do(func() { scan, err = t.NewScan(ctx, planned, table.WithReporter(planned)) })
		return scan, err
	}
}

// DecodedFileStats reports how often a scan took a small data file from
// the decoded-file cache, and how often it decoded one to keep.
func (e *Engine) DecodedFileStats() (hits, misses int64) {
	s := e.caches.Stats()
	return s.DecodedHits, s.DecodedMisses
}

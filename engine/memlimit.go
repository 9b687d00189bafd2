package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// RuntimeMemoryLimit is the Go runtime soft memory limit
// (runtime/debug.SetMemoryLimit) for a process that holds an engine to
// Config.MemoryLimit limit: runtimePercent of it, the rest being for what
// the runtime does not count (the binary's pages, ICU's data and
// allocations in C), which in an idle server is 60-100 MB resident. Scans
// hold a few Arrow batches per core, but between collections the Go heap
// grows to twice what is live (GOGC=100): a full TPC-H SF1 scan (Q1)
// peaked at 600-650 MB resident with 170-220 MB live. A limit makes the
// collector run before the heap reaches it (Q1 peaked at 490 MB under a
// 384 MiB limit, for 5-10% more CPU). The limit is the process's, so the
// program sets it (cmd/icesql does), not Open: two engines in one process
// must not fight over it.
func RuntimeMemoryLimit(limit int64) int64 { return limit / 100 * runtimePercent }

// Statements share the memory limit through a budget on the live heap.
// Go cannot say which goroutine holds which bytes, so the budget is on what
// the process keeps live, checked where a statement's state grows without
// bound (go-mysql-server's row caches behind GROUP BY, DISTINCT and its
// sorts, icesql's sort and vectorized GROUP BY): a statement that needs to
// grow while the process is over budget fails with 1041 (1038 for a sort),
// its memory released, instead of the host running out. The budget stops
// short of the limit so that the collector, which needs headroom above
// what is live, never has to run back to back (the soft limit would let
// the heap pass it then).
const (
	// runtimePercent of the limit is the Go runtime's soft limit.
	runtimePercent = 80
	// budgetPercent of the limit is what statements may keep live: the
	// collector keeps the heap under twice that, or the soft limit.
	budgetPercent = 55
	// watchdogPercent of the limit live is where the watchdog stops a
	// statement that grows where no check is (memwatch.go).
	watchdogPercent = 65
)

// MySQL's codes for a statement that ran out of memory.
const (
	erOutOfSortMemory = 1038 // ER_OUT_OF_SORTMEMORY
	erOutOfResources  = 1041 // ER_OUT_OF_RESOURCES
)

// memoryBudget is the go-mysql-server memory reporter of an engine with a
// memory limit: its caches refuse to grow past MaxMemory.
type memoryBudget struct {
	limit  uint64 // Config.MemoryLimit
	budget uint64 // what statements may keep live
	calls  atomic.Uint64
	live   atomic.Uint64 // the last reading of liveHeap
}

var _ sql.Reporter = (*memoryBudget)(nil)

// newMemoryBudget is the budget of a limit in bytes; nil without a limit.
func newMemoryBudget(limit int64) *memoryBudget {
	if limit <= 0 {
		return nil
	}
	return &memoryBudget{limit: uint64(limit), budget: uint64(limit) / 100 * budgetPercent}
}

// MaxMemory implements sql.Reporter.
func (b *memoryBudget) MaxMemory() uint64 { return b.budget }

// UsedMemory implements sql.Reporter. go-mysql-server asks for every row a
// cache adds; the live heap only changes at a collection, so it is read
// every 256 calls, and at every call once over budget (go-mysql-server
// collects then, and asks again).
func (b *memoryBudget) UsedMemory() uint64 {
	if b.calls.Add(1)%256 != 0 {
		if v := b.live.Load(); v < b.budget {
			return v
		}
	}
	v := liveHeap()
	b.live.Store(v)
	return v
}

// outOfMemory is the error of a statement refused more memory; sort says
// whether it was sorting (MySQL's 1038) or building other state (1041).
func outOfMemory(sort bool) *mysql.SQLError {
	code, what := erOutOfResources, "the statement's state (hash tables, groups, rows held)"
	if sort {
		code, what = erOutOfSortMemory, "the rows it sorts"
	}
	// The program set the runtime's limit from the engine's
	// (RuntimeMemoryLimit); without one, the message names no figure.
	figure := ""
	if rt := debug.SetMemoryLimit(-1); rt < math.MaxInt64 {
		figure = fmt.Sprintf(" (%d MiB)", rt/runtimePercent*100>>20)
	}
	return mysql.NewSQLError(code, "HY000",
		"Out of memory: %s would take the server past its memory limit%s; "+
			"add a LIMIT or a narrower WHERE, or raise --memory-limit-mib", what, figure)
}

// statementGrowth checks, every checkEvery calls, that a statement may keep
// growing; the zero value is ready. Without a memory limit the budget
// never refuses, and only the context is checked.
type statementGrowth struct {
	n uint32
}

// checkEvery is how many rows or groups a statement adds between two
// looks at the budget.
const checkEvery = 1024

// grow is called for every row or group a statement adds; it fails once
// the budget refuses.
func (g *statementGrowth) grow(ctx *sql.Context, sort bool) error {
	g.n++
	if g.n%checkEvery != 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Memory != nil && !ctx.Memory.HasAvailable() {
		return outOfMemory(sort)
	}
	return nil
}

// liveSample reads the heap the last collection found live.
const liveSample = "/gc/heap/live:bytes"

// isNoMemory reports whether err is go-mysql-server's refusal of a cache to
// grow past the budget, by kind or, once flattened by its wire handler, by
// message.
func isNoMemory(err error) bool {
	var coded *mysql.SQLError
	if errors.As(err, &coded) {
		return coded.Message == sql.ErrNoMemoryAvailable.Message
	}
	return sql.ErrNoMemoryAvailable.Is(err)
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: liveSample}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchBudget runs a statement's work that grows in code which knows
// nothing of the budget (the vectorized GROUP BY's hash tables, built by
// package pushdown/vector on several goroutines) under a context that is
// cancelled with 1041 once the budget refuses; the work stops as it stops
// for KILL QUERY. Call stop when the work is done.
func watchBudget(ctx *sql.Context, b *memoryBudget) (_ *sql.Context, stop func()) {
	if b == nil {
		return ctx, func() {}
	}
	inner, cancel := context.WithCancelCause(ctx.Context)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-inner.Done():
				return
			case <-tick.C:
			}
			if b.UsedMemory() >= b.budget {
				cancel(outOfMemory(false))
				return
			}
		}
	}()
	return ctx.WithContext(inner), func() {
		close(done)
		cancel(nil)
	}
}

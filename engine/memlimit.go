package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/memlimit"
)

// RuntimeMemoryLimit is the Go runtime soft memory limit
// (runtime/debug.SetMemoryLimit) for a process that holds an engine to
// Config.MemoryLimit limit (memlimit.Runtime says why it is less). The limit
// is the process's, so the program sets it (cmd/icesql does), not Open: two
// engines in one process must not fight over it.
func RuntimeMemoryLimit(limit int64) int64 { return memlimit.Runtime(limit) }

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
	return &memoryBudget{limit: uint64(limit), budget: uint64(limit) / 100 * memlimit.BudgetPercent}
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
	v := memlimit.LiveHeap()
	b.live.Store(v)
	return v
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
				cancel(memlimit.OutOfMemory(false))
				return
			}
		}
	}()
	return ctx.WithContext(inner), func() {
		close(done)
		cancel(nil)
	}
}

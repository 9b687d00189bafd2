package memlimit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

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
type Budget struct {
	limit  uint64 // Config.MemoryLimit
	budget uint64 // what statements may keep live
	calls  atomic.Uint64
	live   atomic.Uint64 // the last reading of liveHeap
}

var _ sql.Reporter = (*Budget)(nil)

// newMemoryBudget is the budget of a limit in bytes; nil without a limit.
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{limit: uint64(limit), budget: uint64(limit) / 100 * BudgetPercent}
}

// Admits says a statement may allocate n bytes more at once: what the
// last collection found live and n stay within the budget. Without a
// limit (b nil) it always may. A state that grows by doubling one array
// (a sort's rows) asks before it doubles, which no per-row check sees.
func (b *Budget) Admits(n uint64) bool {
	return b == nil || LiveHeap()+n <= b.budget
}

// MaxMemory implements sql.Reporter.
func (b *Budget) MaxMemory() uint64 { return b.budget }

// UsedMemory implements sql.Reporter. go-mysql-server asks for every row a
// cache adds; the live heap only changes at a collection, so it is read
// every 256 calls, and at every call once over budget (go-mysql-server
// collects then, and asks again).
func (b *Budget) UsedMemory() uint64 {
	if b.calls.Add(1)%256 != 0 {
		if v := b.live.Load(); v < b.budget {
			return v
		}
	}
	v := LiveHeap()
	b.live.Store(v)
	return v
}

// WatchBudget runs a statement's work that grows in code which knows
// nothing of the budget (the vectorized GROUP BY's hash tables, built by
// package pushdown/vector on several goroutines) under a context that is
// cancelled with 1041 once the budget refuses; the work stops as it stops
// for KILL QUERY. Call stop when the work is done.
func WatchBudget(ctx *sql.Context, b *Budget) (_ *sql.Context, stop func()) {
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
				cancel(OutOfMemory(false))
				return
			}
		}
	}()
	return ctx.WithContext(inner), func() {
		close(done)
		cancel(nil)
	}
}

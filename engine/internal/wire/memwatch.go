package wire

import (
	"runtime/debug"
	"time"

	"github.com/icesql/icesql/engine/internal/memlimit"
)

// WatchMemory is the backstop of the memory budget (memlimit/memlimit.go): a
// statement whose state grows where no budget check is (a GROUP_CONCAT of
// millions of rows, a join's hash table, a window) would take the process
// past its limit. Every tick, when the heap the last collection found live
// is past watchdogPercent of the limit, the statement that has run longest
// is stopped (1041), one at a time: the next only once the stopped one
// ended and a collection shows the heap still over. It returns when done
// is closed.
func WatchMemory(l *StatementLimits, limit int64, done <-chan struct{}) {
	if limit <= 0 {
		return
	}
	threshold := uint64(limit) / 100 * memlimit.WatchdogPercent
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	stopping := false
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if stopping {
			if l.anyStopping() {
				continue
			}
			stopping = false
			debug.FreeOSMemory() // a collection, so that liveHeap is fresh
		}
		if memlimit.LiveHeap() > threshold {
			stopping = l.stopOldest(errStatementMemory)
		}
	}
}

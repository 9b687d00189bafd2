package memlimit

import (
	"sync/atomic"

	"github.com/icesql/icesql/pushdown/vector"
)

// StateReserve is the vector.Reserve of one vectorized GROUP BY under the
// budget b (budget.go); nil without a limit. WatchBudget sees what the
// run allocates only at the next collection, and a table doubling or the
// result of millions of groups is allocated in one go: the run asks
// before each, and is refused (1041) when what is live would pass the
// budget. What is live is the larger of the heap the last collection found
// live and that heap at the start plus what the run holds: the first
// counts every other statement, the second what this one allocated since.
func StateReserve(b *Budget) vector.Reserve {
	if b == nil {
		return nil
	}
	start := LiveHeap()
	var held atomic.Int64
	return func(n int64) error {
		before := held.Add(n) - n
		if n <= 0 {
			return nil
		}
		if max(LiveHeap(), start+uint64(max(before, 0)))+uint64(n) > b.budget {
			held.Add(-n)
			return OutOfMemory(false)
		}
		return nil
	}
}

// Package memlimit holds how icesql divides a process's memory limit
// (--memory-limit-mib, engine.Config.MemoryLimit) between the Go runtime,
// the statements' budget and the watchdog, and reads the live heap the
// budget is checked against. The limit itself is the program's: it sets
// the runtime's soft limit (cmd/icesql does), not the library.
package memlimit

import (
	"math"
	"runtime/debug"
	"runtime/metrics"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// Shares of the configured limit, in percent. Statements share the limit
// through a budget on the live heap (engine/memlimit.go). The budget stops
// short of the limit so that the collector, which needs headroom above
// what is live, never has to run back to back (the soft limit would let
// the heap pass it then).
const (
	// RuntimePercent of the limit is the Go runtime's soft limit.
	RuntimePercent = 80
	// BudgetPercent of the limit is what statements may keep live: the
	// collector keeps the heap under twice that, or the soft limit.
	BudgetPercent = 55
	// WatchdogPercent of the limit live is where the watchdog stops a
	// statement that grows where no check is (engine/memwatch.go).
	WatchdogPercent = 65
)

// Runtime is the Go runtime soft memory limit for a process held to limit:
// RuntimePercent of it, the rest being for what the runtime does not count
// (the binary's pages, ICU's data and allocations in C), which in an idle
// server is 60-100 MB resident. Scans hold a few Arrow batches per core,
// but between collections the Go heap grows to twice what is live
// (GOGC=100): a full TPC-H SF1 scan (Q1) peaked at 600-650 MB resident with
// 170-220 MB live. A limit makes the collector run before the heap reaches
// it (Q1 peaked at 490 MB under a 384 MiB limit, for 5-10% more CPU).
func Runtime(limit int64) int64 { return limit / 100 * RuntimePercent }

// Configured is the limit the program configured, read back from the
// runtime's soft limit it set with Runtime; 0 when none is set.
func Configured() int64 {
	rt := debug.SetMemoryLimit(-1)
	if rt == math.MaxInt64 {
		return 0
	}
	return rt / RuntimePercent * 100
}

// liveSample reads the heap the last collection found live.
const liveSample = "/gc/heap/live:bytes"

// LiveHeap is the heap the last collection found live.
func LiveHeap() uint64 {
	s := []metrics.Sample{{Name: liveSample}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Growth checks, every CheckEvery calls, that a statement may keep
// growing; the zero value is ready. Without a memory limit the budget
// never refuses, and only the context is checked.
type Growth struct {
	n uint32
}

// CheckEvery is how many rows or groups a statement adds between two
// looks at the budget.
const CheckEvery = 1024

// Grow is called for every row or group a statement adds; it fails once
// the budget refuses.
func (g *Growth) Grow(ctx *sql.Context, sort bool) error {
	g.n++
	if g.n%CheckEvery != 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Memory != nil && !ctx.Memory.HasAvailable() {
		return OutOfMemory(sort)
	}
	return nil
}

// OutOfMemory is the error of a statement refused more memory (1038 when
// sort, else 1041), naming the configured limit.
func OutOfMemory(sort bool) error {
	return mysqlerr.OutOfMemory(sort, Configured())
}

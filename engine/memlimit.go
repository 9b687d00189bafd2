package engine

import "runtime/debug"

// applyMemoryLimit sets Config.MemoryLimit as the process's soft memory
// limit. Scans hold a few Arrow batches per core, but between collections
// the Go heap grows to twice what is live (GOGC=100): a full TPC-H SF1
// scan (Q1) peaked at 600-650 MB resident with 170-220 MB live. A limit
// makes the collector run before the heap reaches it (Q1 peaked at 490 MB
// under a 384 MiB limit, for 5-10% more CPU). The limit is the process's,
// not the engine's: the last Open with a positive limit sets it, as the
// GOMEMLIMIT environment variable does for programs that do not.
func applyMemoryLimit(limit int64) {
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

package engine

import "github.com/icesql/icesql/engine/internal/vecexec"

// PickedBatches is how many batches row-level scans picked rows of on the
// vector path so far (vecexec/rowscan_fast.go).
func PickedBatches() int64 { return vecexec.PickedBatches.Load() }

package engine

// PickedBatches is how many batches row-level scans picked rows of on the
// vector path so far (rowscan_fast.go).
func PickedBatches() int64 { return pickedBatches.Load() }

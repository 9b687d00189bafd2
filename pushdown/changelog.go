package pushdown

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// ChangeRange is the snapshots whose changes a changelog read returns: those
// committed after After (exclusive; nil means from the first snapshot of To's
// history) up to and including To.
type ChangeRange struct {
	After *int64
	To    int64
}

// PlanChanges plans the changelog of tbl over r: one task per data file a
// snapshot in the range added (its rows were inserted) or removed (its rows
// were deleted), in commit order. iceberg-go refuses ranges whose snapshots
// carry delete files (merge-on-read deletes); the error says so.
func PlanChanges(ctx context.Context, tbl *table.Table, r ChangeRange) ([]table.ChangelogScanTask, error) {
	if r.After != nil && *r.After == r.To {
		return nil, nil
	}
	scan := tbl.NewIncrementalChangelogScan().ToSnapshot(r.To)
	if r.After != nil {
		if !isAncestor(tbl, *r.After, r.To) {
			return nil, fmt.Errorf("snapshot %d is not an ancestor of snapshot %d, so there are no changes from one to the other", *r.After, r.To)
		}
		scan = scan.FromSnapshotExclusive(*r.After)
	} else {
		scan = scan.FromSnapshotInclusive(oldestAncestor(tbl, r.To))
	}
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan changes of %v: %w", tbl.Identifier(), err)
	}
	return tasks, nil
}

// OpenChange starts reading the rows of one changelog task, in the table's
// current schema.
func OpenChange(ctx context.Context, tbl *table.Table, task table.ChangelogScanTask) (*Batches, error) {
	return Open(ctx, tbl.Scan(), []table.FileScanTask{task.ScanTask()})
}

func isAncestor(tbl *table.Table, ancestor, of int64) bool {
	for _, s := range table.AncestorsOf(of, tbl.Metadata().SnapshotByID) {
		if s.SnapshotID == ancestor {
			return true
		}
	}
	return false
}

func oldestAncestor(tbl *table.Table, of int64) int64 {
	oldest := of
	for _, s := range table.AncestorsOf(of, tbl.Metadata().SnapshotByID) {
		oldest = s.SnapshotID
	}
	return oldest
}

// SnapshotAsOf returns the snapshot that was tbl's current snapshot at
// timestampMs: the last snapshot-log entry at or before that time. Of
// several commits in the same millisecond it is the last one, the state a
// reader at that time saw (iceberg-go's Table.SnapshotAsOf keeps the first).
func SnapshotAsOf(tbl *table.Table, timestampMs int64) (int64, bool) {
	var id int64
	found := false
	for entry := range tbl.Metadata().SnapshotLogs() {
		if entry.TimestampMs <= timestampMs {
			id, found = entry.SnapshotID, true
		}
	}
	return id, found
}

package storage

import (
	"time"

	"github.com/apache/iceberg-go/table"
)

// stampAfterParents keeps snapshot timestamps in order along the history:
// an added snapshot stamped before its parent (it was staged before the
// parent committed, then rebased onto it by a writer's refresh-and-replay
// retry, as iceberg-go's Transaction.Commit does, keeping the first
// attempt's timestamp) is stamped with the commit's time instead, and
// never before its parent. TIMESTAMP AS OF and the snapshot log pick
// snapshots by time, so a child older than its parent would make a time
// between the two read the parent's table without the child's rows, after
// a time that showed them. Java's SnapshotProducer stamps each attempt
// anew, so its snapshots never need this.
func stampAfterParents(base table.Metadata, updates []table.Update) {
	stamps := map[int64]int64{}
	for _, s := range base.Snapshots() {
		stamps[s.SnapshotID] = s.TimestampMs
	}
	now := time.Now().UnixMilli()
	for _, s := range addedSnapshots(updates) {
		if s.ParentSnapshotID != nil {
			if parent, ok := stamps[*s.ParentSnapshotID]; ok && s.TimestampMs < parent {
				s.TimestampMs = max(now, parent)
			}
		}
		stamps[s.SnapshotID] = s.TimestampMs
	}
}

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
//
// Parents are looked up by id (base's index), not by listing the history:
// a commit's cost must not grow with the table's snapshots.
func stampAfterParents(base table.Metadata, updates []table.Update) {
	added := map[int64]int64{}
	stampOf := func(id int64) (int64, bool) {
		if ts, ok := added[id]; ok {
			return ts, true
		}
		if s := base.SnapshotByID(id); s != nil {
			return s.TimestampMs, true
		}
		return 0, false
	}
	now := time.Now().UnixMilli()
	for _, s := range addedSnapshots(updates) {
		if s.ParentSnapshotID != nil {
			if parent, ok := stampOf(*s.ParentSnapshotID); ok && s.TimestampMs < parent {
				s.TimestampMs = max(now, parent)
			}
		}
		added[s.SnapshotID] = s.TimestampMs
	}
}

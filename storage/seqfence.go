package storage

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// staleSequence finds a snapshot among updates whose sequence number is not
// above the table's last one: it was built on metadata that another commit
// has since moved, typically one to another branch (or a WAP snapshot),
// which leaves this commit's branch requirement intact. iceberg-go reports
// that as a plain error, which nobody retries; as a lost race the writer
// reloads and builds the snapshot again with a fresh sequence number. A
// snapshot without a parent (a replace transaction's first) may carry an
// older sequence number, as in Java's and iceberg-go's metadata builders.
func staleSequence(base table.Metadata, updates []table.Update) error {
	if base.Version() < 2 {
		return nil // v1 has no sequence numbers
	}
	last := base.LastSequenceNumber()
	for _, u := range updates {
		if u.Action() != table.UpdateAddSnapshot {
			continue
		}
		// The update's type is unexported; its JSON is the REST spec's.
		raw, err := json.Marshal(u)
		if err != nil {
			return nil
		}
		var add struct {
			Snapshot struct {
				ID       int64  `json:"snapshot-id"`
				Parent   *int64 `json:"parent-snapshot-id"`
				Sequence int64  `json:"sequence-number"`
			} `json:"snapshot"`
		}
		if json.Unmarshal(raw, &add) == nil && add.Snapshot.Parent != nil && add.Snapshot.Sequence != 0 && add.Snapshot.Sequence <= last {
			return fmt.Errorf("snapshot %d has sequence number %d, but another commit already reached %d",
				add.Snapshot.ID, add.Snapshot.Sequence, last)
		}
	}
	return nil
}

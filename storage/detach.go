package storage

import (
	"github.com/apache/iceberg-go/table"
)

// iceberg-go's snapshot producer builds a new snapshot whose parent id and
// schema id point into the producer and its transaction's metadata
// builder. Once committed, those pointers kept the builder alive, and with
// it the metadata it started from, whose newest snapshot kept the builder
// before it alive: every version of a table's metadata stayed in memory, a
// chain that grew with the square of the number of commits (gigabytes after
// a few thousand single-row INSERTs). detachAddedSnapshots gives the
// snapshots a commit adds pointers of their own before the catalog applies
// them, which ends the chain; the values stay the same.
func detachAddedSnapshots(updates []table.Update) {
	for _, s := range addedSnapshots(updates) {
		detach(s)
	}
}

func detach(s *table.Snapshot) {
	s.ParentSnapshotID = ownPtr(s.ParentSnapshotID)
	s.SchemaID = ownPtr(s.SchemaID)
	s.FirstRowID = ownPtr(s.FirstRowID)
	s.AddedRows = ownPtr(s.AddedRows)
	if s.Summary != nil {
		sum := *s.Summary
		s.Summary = &sum
	}
}

// ownPtr returns a pointer to a fresh copy of *p, nil for nil.
func ownPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

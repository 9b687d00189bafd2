package storage

import (
	"iter"

	"github.com/apache/iceberg-go/table"
)

// iceberg-go's WriteRecords starts a MetadataBuilder from the table's
// metadata to learn its schema, partition spec and properties, and the
// builder copies the snapshot list and snapshot-log and indexes every
// snapshot: at 10,000 snapshots that was a tenth of a single-row INSERT's
// CPU, and as much garbage as the commit's own copy. Writing data files
// needs none of the history, so the writers are given the table without it.

// WriterTable is tbl as data file writers see it: the same schema, specs,
// sort orders, properties and location, and no snapshots, refs or
// snapshot-log. It is for table.WriteRecords only, never for committing.
func WriterTable(tbl *table.Table) *table.Table {
	return table.New(tbl.Identifier(), historyless{tbl.Metadata()}, tbl.MetadataLocation(), tbl.FS, nil)
}

// historyless is metadata without its snapshots.
type historyless struct{ table.Metadata }

func (historyless) Snapshots() []table.Snapshot           { return nil }
func (historyless) SnapshotByID(int64) *table.Snapshot    { return nil }
func (historyless) SnapshotByName(string) *table.Snapshot { return nil }
func (historyless) CurrentSnapshot() *table.Snapshot      { return nil }
func (historyless) Refs() iter.Seq2[string, table.SnapshotRef] {
	return func(func(string, table.SnapshotRef) bool) {}
}
func (historyless) SnapshotLogs() iter.Seq[table.SnapshotLogEntry] {
	return func(func(table.SnapshotLogEntry) bool) {}
}

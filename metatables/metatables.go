package metatables

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

// Kind is the name of a metadata table, as Spark spells it.
type Kind string

const (
	Snapshots          Kind = "snapshots"
	History            Kind = "history"
	MetadataLogEntries Kind = "metadata_log_entries"
	Refs               Kind = "refs"
	Files              Kind = "files"
	DataFiles          Kind = "data_files"
	DeleteFiles        Kind = "delete_files"
	Manifests          Kind = "manifests"
	Partitions         Kind = "partitions"
	Entries            Kind = "entries"
	PositionDeletes    Kind = "position_deletes"
	AllFiles           Kind = "all_files"
	AllDataFiles       Kind = "all_data_files"
	AllDeleteFiles     Kind = "all_delete_files"
	AllManifests       Kind = "all_manifests"
	AllEntries         Kind = "all_entries"
)

// kinds maps each metadata table to its reader and says whether it shows
// one snapshot (and so can be read as of an older one) or the whole table.
var kinds = map[Kind]struct {
	read       func(table.InspectTable, context.Context) (array.RecordReader, error)
	atSnapshot bool
	metrics    bool // a files or entries table, which gets Spark's readable_metrics column
}{
	Snapshots:          {table.InspectTable.Snapshots, false, false},
	History:            {table.InspectTable.History, false, false},
	MetadataLogEntries: {table.InspectTable.MetadataLogEntries, false, false},
	Refs:               {table.InspectTable.Refs, false, false},
	Files:              {table.InspectTable.Files, true, true},
	DataFiles:          {table.InspectTable.DataFiles, true, true},
	DeleteFiles:        {table.InspectTable.DeleteFiles, true, true},
	Manifests:          {table.InspectTable.Manifests, true, false},
	Partitions:         {table.InspectTable.Partitions, true, false},
	Entries:            {table.InspectTable.Entries, true, true},
	PositionDeletes:    {table.InspectTable.PositionDeletes, true, false},
	AllFiles:           {table.InspectTable.AllFiles, false, true},
	AllDataFiles:       {table.InspectTable.AllDataFiles, false, true},
	AllDeleteFiles:     {table.InspectTable.AllDeleteFiles, false, true},
	AllManifests:       {table.InspectTable.AllManifests, false, false},
	AllEntries:         {table.InspectTable.AllEntries, false, true},
}

// Lookup returns the metadata table a name means, in any letter case.
func Lookup(name string) (Kind, bool) {
	k := Kind(strings.ToLower(name))
	_, ok := kinds[k]
	return k, ok
}

// Separator joins a table's name and a metadata table's name into one
// identifier, `t$snapshots`, as Trino and StarRocks write it and as the
// planner rewrites Spark's db.t.snapshots.
const Separator = "$"

// Split splits an identifier such as "orders$snapshots" into the table's
// name and the metadata table's kind. ok is false when the name does not end
// in the separator and a metadata table's name.
func Split(name string) (base string, kind Kind, ok bool) {
	i := strings.LastIndex(name, Separator)
	if i <= 0 {
		return "", "", false
	}
	kind, ok = Lookup(name[i+len(Separator):])
	return name[:i], kind, ok
}

// ErrNotAtSnapshot is returned for a metadata table that describes the whole
// table history (snapshots, history, refs, all_*) when a snapshot is asked for.
var ErrNotAtSnapshot = errors.New("metadata table cannot be read as of a snapshot")

// DependsOnSnapshot reports whether a metadata table shows one snapshot's
// state (files, manifests, partitions, entries, …), as opposed to the whole
// table's history.
func DependsOnSnapshot(k Kind) bool { return kinds[k].atSnapshot }

// Open reads metadata table k of tbl. snapshotID selects the snapshot the
// tables of DependsOnSnapshot kinds show; nil means the current one. The
// caller must Release the reader.
func Open(ctx context.Context, k Kind, tbl *table.Table, snapshotID *int64) (array.RecordReader, error) {
	spec, ok := kinds[k]
	if !ok {
		return nil, fmt.Errorf("no metadata table %q", k)
	}
	if snapshotID != nil {
		if !spec.atSnapshot {
			return nil, fmt.Errorf("%s: %w", k, ErrNotAtSnapshot)
		}
		var err error
		if tbl, err = AtSnapshot(tbl, *snapshotID); err != nil {
			return nil, err
		}
	}
	rr, err := spec.read(tbl.Inspect(), ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s.%s: %w", strings.Join(tbl.Identifier(), "."), k, err)
	}
	if spec.metrics {
		return withReadableMetrics(rr, tbl.Schema())
	}
	return rr, nil
}

// AtSnapshot returns tbl as if snapshot id were its current snapshot, so
// that iceberg-go's readers, which always read the current snapshot, read
// that one. Nothing is written: the table is a view for reading.
func AtSnapshot(tbl *table.Table, id int64) (*table.Table, error) {
	snap := tbl.Metadata().SnapshotByID(id)
	if snap == nil {
		return nil, fmt.Errorf("table %s has no snapshot %d", strings.Join(tbl.Identifier(), "."), id)
	}
	meta := atSnapshot{Metadata: tbl.Metadata(), snap: snap}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, nil), nil
}

// atSnapshot is table metadata whose current snapshot is another one of its
// snapshots; everything else (schemas, specs, snapshot list) is unchanged.
type atSnapshot struct {
	table.Metadata
	snap *table.Snapshot
}

func (m atSnapshot) CurrentSnapshot() *table.Snapshot { return m.snap }

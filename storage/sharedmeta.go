package storage

import (
	"encoding/json"
	"reflect"

	"github.com/apache/iceberg-go/table"
)

// A commit builds the table's next metadata twice from its current one:
// iceberg-go's transaction starts a MetadataBuilder from it, and the catalog
// applies the transaction's updates to the newest metadata with another.
// Each builder deep-copies the metadata iceberg-go parsed or built, every
// snapshot's summary map included, which made a small commit's cost grow
// with the table's history (at 10,000 snapshots, most of its CPU).
//
// sharedMetadata presents the same metadata without the hook that makes
// iceberg-go deep-copy it: the builder then copies the snapshot list
// shallowly, sharing the snapshots, which nobody modifies once committed.
// The warehouse hands out its metadata this way.
type sharedMetadata struct {
	table.Metadata                  // as parsed or built by iceberg-go; never modified
	snaps          []table.Snapshot // its snapshot list, shared with it
}

// share wraps meta, as the warehouse hands out metadata; metadata that is
// already shared, or whose snapshot list cannot be shared, is returned as is.
func share(meta table.Metadata) table.Metadata {
	if meta == nil {
		return nil
	}
	if _, ok := meta.(*sharedMetadata); ok {
		return meta
	}
	snaps, ok := snapshotList(meta)
	if !ok {
		return meta
	}
	return &sharedMetadata{Metadata: meta, snaps: snaps}
}

// unshared returns the metadata iceberg-go built, under any wrapper.
func unshared(meta table.Metadata) table.Metadata {
	if s, ok := meta.(*sharedMetadata); ok {
		return s.Metadata
	}
	return meta
}

// snapshotList reads meta's snapshot list without the deep copy its
// Snapshots method makes, the way encoding/json reads it; ok is false when
// meta is not laid out as expected or defers decoding its snapshots.
func snapshotList(meta table.Metadata) ([]table.Snapshot, bool) {
	rv := reflect.ValueOf(meta)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	src := rv.Elem()
	list := src.FieldByName("SnapshotList")
	deferred := src.FieldByName("deferredSnapshots")
	if !list.IsValid() || list.Type() != reflect.TypeFor[[]table.Snapshot]() ||
		(deferred.IsValid() && (deferred.Kind() != reflect.Pointer || !deferred.IsNil())) {
		return nil, false
	}
	return list.Interface().([]table.Snapshot), true
}

// Snapshots returns the snapshot list itself, its capacity cut so that an
// append copies it: callers read it (icesql's and iceberg-go's range over
// it; iceberg-go's builder copies it), and a copy here was a second one of
// every snapshot on each commit.
func (m *sharedMetadata) Snapshots() []table.Snapshot { return m.snaps[:len(m.snaps):len(m.snaps)] }

// Equals compares the metadata underneath, shared or not.
func (m *sharedMetadata) Equals(other table.Metadata) bool {
	return m.Metadata.Equals(unshared(other))
}

// MarshalJSON writes the metadata as iceberg-go does.
func (m *sharedMetadata) MarshalJSON() ([]byte, error) {
	return json.Marshal(m.Metadata)
}

// Package metatables will present an Iceberg table's metadata as SQL tables
// with Spark's names, columns and types: snapshots, history,
// metadata_log_entries, files, data_files, delete_files, manifests,
// partitions, entries, refs, position_deletes and the all_* family, reachable
// as db.t.snapshots and db.`t$snapshots` (issue 8). It reads storage only.
package metatables

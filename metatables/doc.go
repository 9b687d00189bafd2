// Package metatables reads an Iceberg table's metadata as tables with Spark's
// names, columns and types: snapshots, history, metadata_log_entries, files,
// data_files, delete_files, manifests, partitions, entries, refs,
// position_deletes and the all_* family.
//
// It produces Arrow record readers (iceberg-go's Inspect readers, which
// already follow the Java schemas and field ids) and knows nothing of SQL:
// the engine presents each reader as a go-mysql-server table. What it adds
// to iceberg-go is the names, and reading the tables that depend on a
// snapshot (files, manifests, partitions, …) at any snapshot, not only the
// current one, so that time travel applies to them.
package metatables

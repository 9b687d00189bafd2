// Package procedures will hold the CALL system.* procedures Iceberg users
// know from Spark (rollback_to_snapshot, expire_snapshots,
// remove_orphan_files, rewrite_data_files, register_table, ...), with
// positional and named arguments (issues 3 and 8).
package procedures

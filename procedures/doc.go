// Package procedures holds the CALL system.* procedures Iceberg users know
// from Spark, in a registry: each procedure's name, its parameters with
// Spark's names and defaults, its output columns, and the function that runs
// it. Bind matches a CALL's positional and named (name => value) arguments
// to the parameters with errors that name the argument. The engine runs a
// procedure through an injected plan node (engine/call.go); this package
// knows nothing of go-mysql-server. register_table is here (issue 3); the
// snapshot and maintenance procedures follow (issue 8).
package procedures

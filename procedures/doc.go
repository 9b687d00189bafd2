// Package procedures holds the CALL system.* procedures Iceberg users know
// from Spark, in a registry: each procedure's name, its parameters with
// Spark's names and defaults, its output columns, and the function that runs
// it. Bind matches a CALL's positional and named (name => value) arguments
// to the parameters with errors that name the argument. The engine runs a
// procedure through an injected plan node (engine/call.go); this package
// knows nothing of go-mysql-server; what it needs of SQL (a where predicate,
// a sort order, the session's database) the engine lends it through Env.
// Commits go through the catalog with storage's retry helpers.
package procedures

// Package engine is icesql's public Go API and its bridge to
// go-mysql-server: it presents the namespaces and tables of an Iceberg
// catalog as MySQL databases and tables, runs sessions and transactions,
// serves the MySQL wire protocol, and registers the database/sql driver
// "icesql".
//
// # A statement's way through
//
//  1. A wire connection (server.go, with the protocol guards of
//     internal/wire) or a database/sql call (driver.go) arrives with a
//     Session (session.go): user, current database, time zone,
//     transaction, pinned snapshots.
//  2. planner parses it (Spark/Iceberg syntax rewritten, the rest injected
//     as plan nodes); showcreate.go's statement dispatcher runs the
//     statements icesql answers itself (SHOW CREATE, ALTER TABLE
//     evolution, CALL, EXPLAIN's scan sections, refs, views).
//  3. go-mysql-server's analyzer resolves names through provider.go and
//     database.go to a Table (table.go) at the session's snapshot, AS OF
//     (asof.go) or a branch/tag (refs.go), or to a metadata table
//     (metatable.go). icesql's own rules (rules.go) run beside go-mysql-server's:
//     the plan rewrites of internal/planrules, the SQL semantics of
//     internal/sqlfunc, decorrelated subqueries (groupedsubquery*.go), the
//     join coster (joincost.go) and the vectorized executor
//     (internal/vecexec).
//  4. WHERE conjuncts reach the scan through LookupForExpressions
//     (lookup.go) and become Iceberg row filters that package pushdown
//     plans and prunes with; the scan decodes Arrow batches that
//     internal/vecexec either computes on (filter, GROUP BY, join, TopN,
//     metadata answers) or turns into rows.
//  5. Writes: INSERT, LOAD DATA and import (insert.go, loaddata.go,
//     import.go, parallelwrite.go) write Parquet files; UPDATE, DELETE and
//     MERGE (rowlevel.go, rowidentity.go, rowedit.go, rowdelta.go, merge.go,
//     *_v3.go for row lineage) find rows by (file, position) and rewrite
//     files or write delete files; INSERT OVERWRITE, REPLACE and TRUNCATE
//     replace whole files (overwrite*.go, replace*.go, filechange.go). A
//     statement's or transaction's changes are staged in the Session and
//     committed by package storage, one snapshot per table, with conflict
//     checks at the isolation level (isolation.go).
//  6. Errors leave through internal/mysqlerr, which gives each the code
//     and SQLSTATE MySQL gives the same mistake.
//
// # Subpackages (engine/internal)
//
//   - mysqlerr: every MySQL error number and the mapping to it.
//   - sqlval: value conversion between SQL, Iceberg and Arrow types; exact
//     SUM/AVG; time zones; quoting.
//   - sqlfunc: functions and operators as MySQL evaluates them.
//   - planrules: plan rewrites that know nothing of Iceberg tables.
//   - vecexec: the vectorized executor, behind the ScanTable interface.
//   - wire: connection, packet, authentication and statement limits.
//   - memlimit: the memory limit's shares and the statement budget.
//   - ddl: partition specs, sort orders, table defaults, foreign keys.
//   - regexlimit: bounded regular expressions.
//
// State belongs to an Engine: the scan plan, footer and decoded-file caches
// (pushdown.Caches), the memory budget and the server are fields of Engine,
// so two engines in one process neither share nor fight over them. What
// stays process-wide: pushdown's pooled buffers (sync.Pools, shared
// harmlessly), go-mysql-server's registry of system variables, and the Go
// memory limit, which the program sets (RuntimeMemoryLimit), not Open.
package engine

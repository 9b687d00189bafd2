// Package planner is icesql's dialect layer. It owns the SQL text between the
// client and go-mysql-server: Parser, a sql.Parser that accepts the
// Spark/Iceberg syntax Iceberg users already know (CREATE NAMESPACE,
// catalog-qualified names, STRING/LONG/TIMESTAMP_NTZ column types,
// USING iceberg, PARTITIONED BY, LOCATION, TBLPROPERTIES) by rewriting it into
// MySQL text the vitess grammar accepts, and hands everything else to the
// MySQL parser byte for byte. What a rewrite cannot say in MySQL syntax
// travels in the table COMMENT as TableOptions, which the engine decodes.
//
// Rewriting works on the vitess lexer's tokens, never on raw text, so string
// literals, quoted identifiers and comments are never changed.
//
// SplitStatements splits a script into statements for the command line.
package planner

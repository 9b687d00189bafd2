package engine_test

import (
	"context"
	"testing"

	"github.com/icesql/icesql/engine"
)

// BenchmarkThreeTableJoin times a 3-table join of one-row tables on local
// disk, where resolving the names (views first) is a visible share.
func BenchmarkThreeTableJoin(b *testing.B) {
	conn := openConnOn(b, openEngine(b, engine.Config{Warehouse: b.TempDir()}))
	ctx := context.Background()
	for _, s := range []string{"CREATE DATABASE db", "USE db",
		"CREATE TABLE t1 (id BIGINT)", "CREATE TABLE t2 (id BIGINT)", "CREATE TABLE t3 (id BIGINT)",
		"INSERT INTO t1 VALUES (1)", "INSERT INTO t2 VALUES (1)", "INSERT INTO t3 VALUES (1)"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
	const q = "SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.id JOIN t3 ON t2.id = t3.id"
	for b.Loop() {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		if err := rows.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

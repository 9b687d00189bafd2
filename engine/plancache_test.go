package engine_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestPlansKeptAcrossStatements checks the engine's plan cache
// (pushdown/plancache.go): a statement planning a scan another statement
// planned takes the kept plan, and no kept plan outlives what it planned:
// a commit from another engine on the same warehouse, a transaction's own
// uncommitted rows, its rollback and time travel each see their own rows.
func TestPlansKeptAcrossStatements(t *testing.T) {
	dir := t.TempDir()
	ea := openEngine(t, engine.Config{Warehouse: dir})
	a := openConnOn(t, ea)
	mustExec(t, a,
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id BIGINT, v VARCHAR(10))",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO t VALUES (3, 'c')",
	)
	sum := func(c *sql.Conn, q string) int64 {
		t.Helper()
		var n int64
		if err := c.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	const all, some = "SELECT SUM(id) FROM t", "SELECT SUM(id) FROM t WHERE id > 1"
	if n := sum(a, all); n != 6 {
		t.Fatalf("sum %d, want 6", n)
	}
	hits := engine.CacheStats(ea).PlanHits
	if n := sum(a, all); n != 6 {
		t.Fatalf("again: sum %d, want 6", n)
	}
	if n := sum(a, some); n != 5 {
		t.Fatalf("id > 1: sum %d, want 5", n)
	}
	if n := sum(a, some); n != 5 {
		t.Fatalf("id > 1 again: sum %d, want 5", n)
	}
	if h := engine.CacheStats(ea).PlanHits; h < hits+2 {
		t.Errorf("plan cache hits went from %d to %d over two repeated statements, want at least +2", hits, h)
	}
	var first int64
	if err := a.QueryRowContext(context.Background(),
		"SELECT snapshot_id FROM db.t.refs WHERE name = 'main'").Scan(&first); err != nil {
		t.Fatal(err)
	}

	// Another engine commits: the next statement plans the new snapshot.
	b := openDB(t, dir)
	mustExec(t, b, "USE db", "INSERT INTO t VALUES (4, 'd')", "DELETE FROM t WHERE id = 1")
	if n := sum(a, all); n != 9 {
		t.Errorf("after the other engine's commits: sum %d, want 9 (ids 2, 3, 4)", n)
	}
	if n := sum(a, some); n != 9 {
		t.Errorf("after the other engine's commits, id > 1: sum %d, want 9", n)
	}

	// Time travel plans the old snapshot, whose plan may be kept.
	q := "SELECT SUM(id) FROM t VERSION AS OF " + strconv.FormatInt(first, 10)
	for range 2 {
		if n := sum(a, q); n != 6 {
			t.Errorf("as of the first snapshot: sum %d, want 6", n)
		}
	}

	// A transaction sees its own rows, and after rollback the committed ones.
	mustExec(t, a, "BEGIN", "INSERT INTO t VALUES (5, 'e')")
	for range 2 {
		if n := sum(a, all); n != 14 {
			t.Errorf("in the transaction: sum %d, want 14", n)
		}
	}
	mustExec(t, a, "ROLLBACK")
	if n := sum(a, all); n != 9 {
		t.Errorf("after rollback: sum %d, want 9", n)
	}
}

// TestEnginesOwnTheirCaches checks that two engines in one process, even
// on one warehouse, keep their own plans and footers: one engine's
// statements fill its caches and take its hits, and leave the other's as
// they were.
func TestEnginesOwnTheirCaches(t *testing.T) {
	dir := t.TempDir()
	ea, eb := openEngine(t, engine.Config{Warehouse: dir}), openEngine(t, engine.Config{Warehouse: dir})
	a, b := openConnOn(t, ea), openConnOn(t, eb)
	mustExec(t, a, "CREATE DATABASE db", "USE db", "CREATE TABLE t (id BIGINT, v STRING)",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')", "INSERT INTO t VALUES (3, 'c')")
	mustExec(t, b, "USE db")
	bBefore := engine.CacheStats(eb)
	const q = "SELECT SUM(id) FROM t WHERE v <> 'x'"
	for range 2 {
		if _, err := a.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	sa := engine.CacheStats(ea)
	if sa.Plans == 0 || sa.PlanHits == 0 || sa.Footers == 0 || sa.DecodedFiles == 0 {
		t.Fatalf("engine a after a repeated statement: %+v, want plans, hits, footers and decoded files kept", sa)
	}
	if sb := engine.CacheStats(eb); sb != bBefore {
		t.Errorf("engine b's caches changed with engine a's statements: %+v, then %+v", bBefore, sb)
	}
	// b plans the same scan itself: a miss, not a's kept plan.
	if _, err := b.ExecContext(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if sb := engine.CacheStats(eb); sb.PlanMisses == bBefore.PlanMisses || sb.PlanHits != bBefore.PlanHits {
		t.Errorf("engine b's first plan of the scan: %+v (before: %+v), want a miss and no hit", sb, bBefore)
	}
	if s := engine.CacheStats(ea); s.PlanMisses != sa.PlanMisses || s.PlanHits != sa.PlanHits {
		t.Errorf("engine a's plan cache counted engine b's statement: %+v, then %+v", sa, s)
	}
}

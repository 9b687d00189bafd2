package engine_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestConcurrentInsertsKeepEachStatement runs 12 single-row INSERTs from
// each of 8 sessions into one table at once. Appends that meet commit in
// groups (storage/groupcommit.go); every acknowledged row must be in the
// table once, and every statement must be an append snapshot of its own
// adding exactly its row, the snapshots one linear chain.
func TestConcurrentInsertsKeepEachStatement(t *testing.T) {
	const sessions, each = 8, 12
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	admin := openConnOn(t, e)
	mustExec(t, admin, "CREATE DATABASE d", "CREATE TABLE d.t (id BIGINT, session INT)")
	var wg sync.WaitGroup
	errs := make([]error, sessions)
	for s := range sessions {
		conn := openConnOn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q := fmt.Sprintf("INSERT INTO d.t VALUES (%d, %d)", s*each+i, s)
				if _, err := conn.ExecContext(t.Context(), q); err != nil {
					errs[s] = fmt.Errorf("%s: %w", q, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf("%d\t%d\t%d", sessions*each, sessions*each, sessions*each*(sessions*each-1)/2)
	if got := queryStrings(t, admin, "SELECT COUNT(*), COUNT(DISTINCT id), SUM(id) FROM d.t"); len(got) != 1 || got[0] != want {
		t.Errorf("rows, distinct ids, sum of ids: %q, want %q", got, want)
	}
	want = fmt.Sprintf("append\t%d\t1", sessions*each)
	if got := queryStrings(t, admin, "SELECT operation, COUNT(*), MAX(CAST(summary->>'$.\"added-records\"' AS SIGNED)) FROM d.t.snapshots GROUP BY operation"); len(got) != 1 || got[0] != want {
		t.Errorf("snapshots by operation (count, most rows added): %q, want %q", got, want)
	}
	// A linear chain: every snapshot but the first has a parent, and no
	// two share one.
	want = fmt.Sprintf("%d\t%d", sessions*each-1, sessions*each-1)
	if got := queryStrings(t, admin, "SELECT COUNT(parent_id), COUNT(DISTINCT parent_id) FROM d.t.snapshots"); len(got) != 1 || got[0] != want {
		t.Errorf("parents, distinct parents: %q, want %q", got, want)
	}
	files := queryStrings(t, admin, "SELECT COUNT(*) FROM d.t.metadata_log_entries")
	t.Logf("%d statements, metadata files: %v", sessions*each, files)
}

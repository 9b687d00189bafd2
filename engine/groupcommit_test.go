package engine_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
)

// TestConcurrentInsertsKeepEachStatement runs 12 single-row INSERTs from
// each of 8 sessions into one table at once. Appends that meet commit in
// groups (storage/groupcommit.go); every acknowledged row must be in the
// table once, and every statement must be an append snapshot of its own
// adding exactly its row, the snapshots one linear chain. On
// format-version 3 every row also gets a row id of its own.
func TestConcurrentInsertsKeepEachStatement(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) { concurrentInserts(t, version) })
	}
}

func concurrentInserts(t *testing.T, version int) {
	const sessions, each = 8, 12
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	admin := openConnOn(t, e)
	mustExec(t, admin, "CREATE DATABASE d",
		fmt.Sprintf("CREATE TABLE d.t (id BIGINT, session INT) TBLPROPERTIES ('format-version' = '%d')", version))
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
	if version >= 3 {
		tbl, err := e.Catalog().LoadTable(t.Context(), table.Identifier{"d", "t"})
		if err != nil {
			t.Fatal(err)
		}
		ids, seen := rowIDs(t, tbl), map[int64]bool{}
		for id, rowID := range ids {
			if seen[rowID] {
				t.Errorf("row %d has _row_id %d, as another row has", id, rowID)
			}
			seen[rowID] = true
		}
		if len(ids) != sessions*each {
			t.Errorf("%d rows read with row ids, want %d", len(ids), sessions*each)
		}
	}
	files := queryStrings(t, admin, "SELECT COUNT(*) FROM d.t.metadata_log_entries")
	t.Logf("%d statements, metadata files: %v", sessions*each, files)
}

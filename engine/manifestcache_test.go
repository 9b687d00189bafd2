package engine_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestKeptManifestsAnswerAsIcebergGo checks planning from kept manifests
// (pushdown/keptplan.go) against iceberg-go's own planning: two engines on
// one warehouse, one keeping decoded manifests and one with none, must
// return the same rows for lookups on every column type judged, as the
// table goes through single-row commits, copy-on-write and merge-on-read
// deletes, an update, rewrite_manifests, a new column and expire_snapshots.
// The kept manifests must be used (the cache is hit) and, being keyed by
// immutable paths, must never answer for a table as it was.
func TestKeptManifestsAnswerAsIcebergGo(t *testing.T) {
	dir := t.TempDir()
	kept := openEngine(t, engine.Config{Warehouse: dir})
	cached := openConnOn(t, kept)
	plain := openConn(t, engine.Config{Warehouse: dir, ManifestCacheBytes: -1})
	mustExec(t, cached, "CREATE DATABASE d",
		"CREATE TABLE d.t (id BIGINT, n INT, s STRING, day DATE, amount DECIMAL(10,2), at DATETIME(6), x DOUBLE)")
	for i := 1; i <= 24; i++ {
		row := fmt.Sprintf("(%d, %d, 'name %02d', DATE '2024-01-%02d', %d.25, TIMESTAMP '2024-02-01 10:00:%02d', %d.5)", i, i%5, i, i, i*10, i, i)
		if i%6 == 0 {
			row = fmt.Sprintf("(%d, NULL, NULL, NULL, NULL, NULL, NULL)", i)
		}
		mustExec(t, cached, "INSERT INTO d.t VALUES "+row)
	}
	// Plans are kept process-wide per snapshot and filter
	// (pushdown/plancache.go), so the engine without kept manifests asks
	// with a conjunct added that no row fails (no id is NULL): its filter
	// differs, and iceberg-go plans it.
	queries := [][2]string{
		{"SELECT id, s FROM d.t WHERE id = 7", ""},
		{"SELECT id FROM d.t WHERE id = 99", ""},
		{"SELECT id FROM d.t WHERE id > 20", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE id BETWEEN 3 AND 5", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE id IN (2, 11, 40)", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE n = 3", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE n IS NULL", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE n IS NOT NULL AND id < 4", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE s = 'name 09'", ""},
		{"SELECT id FROM d.t WHERE s LIKE 'name 1%'", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE day >= DATE '2024-01-22'", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE amount = 130.25", ""},
		{"SELECT id FROM d.t WHERE at < TIMESTAMP '2024-02-01 10:00:03'", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE x > 22.0", " ORDER BY id"},
		{"SELECT id FROM d.t WHERE NOT (id <> 8)", ""},
		{"SELECT COUNT(*), SUM(id) FROM d.t WHERE id > 0", ""},
	}
	compare := func(step string) {
		t.Helper()
		for _, q := range queries {
			got := queryStrings(t, cached, q[0]+q[1])
			want := queryStrings(t, plain, q[0]+" AND id IS NOT NULL"+q[1])
			if !slices.Equal(got, want) {
				t.Errorf("after %s: %s\nkept manifests: %q\niceberg-go:     %q", step, q[0]+q[1], got, want)
			}
		}
	}
	hits := func() int64 {
		h, _ := kept.ManifestCacheStats()
		return h
	}

	compare("24 single-row commits")
	if hits() == 0 {
		t.Fatal("lookups with different filters found no manifest kept")
	}
	mustExec(t, cached, "DELETE FROM d.t WHERE id = 3", "UPDATE d.t SET s = 'changed' WHERE id = 9")
	compare("a copy-on-write DELETE and UPDATE")
	mustExec(t, cached, "CALL system.rewrite_manifests('d.t')")
	compare("rewrite_manifests")
	mustExec(t, cached, "ALTER TABLE d.t ADD COLUMN extra BIGINT", "INSERT INTO d.t VALUES (30, 1, 'late', NULL, NULL, NULL, NULL, 5)")
	queries = append(queries, [2]string{"SELECT id FROM d.t WHERE extra = 5", ""},
		[2]string{"SELECT id FROM d.t WHERE extra IS NULL AND id > 22", " ORDER BY id"})
	compare("a new column")
	mustExec(t, cached, "CALL system.expire_snapshots('d.t', TIMESTAMP '2999-01-01 00:00:00', 1)")
	compare("expire_snapshots")
	mustExec(t, cached, "ALTER TABLE d.t SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')", "DELETE FROM d.t WHERE id = 7")
	before := hits()
	compare("a merge-on-read DELETE") // delete manifests: iceberg-go plans
	if hits() == before {
		t.Error("lookups on the merge-on-read table did not look at the kept manifest list")
	}
}

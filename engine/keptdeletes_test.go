package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestKeptManifestsWithDeletesAndPartitions checks planning from kept
// manifests on partitioned tables and tables with delete manifests
// (pushdown/keptdeletes.go) against iceberg-go's own planning: an engine
// keeping decoded manifests and one keeping none, on one warehouse, must
// return the same rows as single-row commits, merge-on-read deletes
// (position deletes on format 2, deletion vectors on format 3), an update
// and inserts after the deletes go by. Lookups on columns no partition
// field derives from must be planned from the kept manifests (the cache
// answers more than the manifest lists); lookups on a partition source are
// iceberg-go's and must agree too.
func TestKeptManifestsWithDeletesAndPartitions(t *testing.T) {
	for _, tc := range []struct{ name, create string }{
		{"v2_partitioned", "CREATE TABLE d.t (id BIGINT, dep STRING, n INT) PARTITIONED BY (dep) TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"},
		{"v3_partitioned", "CREATE TABLE d.t (id BIGINT, dep STRING, n INT) PARTITIONED BY (dep) TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"},
		{"v2_unpartitioned", "CREATE TABLE d.t (id BIGINT, dep STRING, n INT) TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"},
		// Partitioned by a transform: lookups on n are iceberg-go's
		// (it skips manifests by partition summaries), the others kept.
		{"v2_bucketed", "CREATE TABLE d.t (id BIGINT, dep STRING, n INT) PARTITIONED BY (bucket(3, n)) TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			kept := openEngine(t, engine.Config{Warehouse: dir})
			cached := openConnOn(t, kept)
			plain := openConn(t, engine.Config{Warehouse: dir, ManifestCacheBytes: -1})
			mustExec(t, cached, "CREATE DATABASE d", tc.create)
			// Four rows a statement, so that a delete of some leaves the
			// rest of a file (a file all of whose rows go is dropped whole).
			insert := func(from, to int) {
				t.Helper()
				for i := from; i <= to; i += 4 {
					var rows []string
					for j := i; j < i+4 && j <= to; j++ {
						rows = append(rows, fmt.Sprintf("(%d, '%c', %d)", j, 'a'+rune(j%3), j%4))
					}
					mustExec(t, cached, "INSERT INTO d.t VALUES "+strings.Join(rows, ", "))
				}
			}
			insert(1, 24)
			// Plans are kept process-wide per snapshot and filter
			// (pushdown/plancache.go): the engine without kept manifests
			// asks with a conjunct no row fails, so iceberg-go plans it.
			// Each step asks with its own filters, so that the engine
			// with kept manifests plans them afresh.
			queries := func(step int) [][2]string {
				return [][2]string{
					{fmt.Sprintf("SELECT id, dep, n FROM d.t WHERE id = %d", 2+step), ""},
					{fmt.Sprintf("SELECT id, dep FROM d.t WHERE id > %d", step), " ORDER BY id"},
					{fmt.Sprintf("SELECT id FROM d.t WHERE n = %d", step%4), " ORDER BY id"},
					{fmt.Sprintf("SELECT id FROM d.t WHERE id IN (%d, 5, 9, 14, 40)", step+1), " ORDER BY id"},
					{fmt.Sprintf("SELECT COUNT(*), SUM(id) FROM d.t WHERE id > %d", step), ""},
					{fmt.Sprintf("SELECT id FROM d.t WHERE dep = 'b' AND id > %d", step), " ORDER BY id"},
				}
			}
			hits := func() int64 {
				h, _ := kept.ManifestCacheStats()
				return h
			}
			step := 0
			compare := func(what string) {
				t.Helper()
				step++
				qs := queries(step)
				before := hits()
				for _, q := range qs {
					got := queryStrings(t, cached, q[0]+q[1])
					want := queryStrings(t, plain, q[0]+" AND id IS NOT NULL"+q[1])
					if !slices.Equal(got, want) {
						t.Errorf("after %s: %s\nkept manifests: %q\niceberg-go:     %q", what, q[0]+q[1], got, want)
					}
				}
				// A plan from kept manifests finds its manifests kept
				// (after the first); one iceberg-go makes finds only the
				// manifest list.
				if n := hits() - before; n <= int64(len(qs)) {
					t.Errorf("after %s: %d cache hits for %d lookups: not planned from kept manifests", what, n, len(qs))
				}
			}
			compare("six commits of four rows")
			mustExec(t, cached, "DELETE FROM d.t WHERE id = 3", "DELETE FROM d.t WHERE n = 1 AND id < 20", "DELETE FROM d.t WHERE id = 14")
			compare("merge-on-read deletes")
			mustExec(t, cached, "UPDATE d.t SET n = 7 WHERE id = 6")
			compare("a merge-on-read update")
			insert(25, 32)
			mustExec(t, cached, "INSERT INTO d.t VALUES (3, 'a', 1)")
			compare("inserts after the deletes (a deleted id back)")
			mustExec(t, cached, "DELETE FROM d.t WHERE id = 3")
			compare("the id deleted again")
			// Position delete files of a partition, each naming several
			// data files (as Spark writes them): matched by partition and
			// file_path bounds. On format 3 deletion vectors stay.
			mustExec(t, cached, "CALL system.rewrite_position_delete_files(table => 'd.t', options => map('rewrite-all', 'true'))")
			compare("rewrite_position_delete_files")
		})
	}
}

package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentBranchWrites commits to one branch, to main and to WAP
// staging from several sessions at once: each commit that loses a race
// reloads and retries, so every row lands where it was sent and main never
// sees a branch's rows.
func TestConcurrentBranchWrites(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id INT) TBLPROPERTIES ('write.wap.enabled' = 'true')",
		"INSERT INTO t VALUES (0)", "ALTER TABLE t CREATE BRANCH dev")
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		c := openDB(t, dir)
		wg.Go(func() {
			ctx := context.Background()
			for _, stmt := range []string{
				"USE db",
				fmt.Sprintf("INSERT INTO db.t.branch_dev VALUES (%d)", 100+i),
				fmt.Sprintf("INSERT INTO t VALUES (%d)", i+1),
				fmt.Sprintf("SET spark.wap.id = w%d", i),
				fmt.Sprintf("INSERT INTO t VALUES (%d)", 200+i),
			} {
				if _, err := c.ExecContext(ctx, stmt); err != nil {
					errs <- fmt.Errorf("%s: %w", stmt, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, c := range []struct{ query, want string }{
		{"SELECT COUNT(*) FROM t", fmt.Sprint(n + 1)},
		{"SELECT COUNT(*) FROM t WHERE id >= 100", "0"},
		{"SELECT COUNT(*) FROM db.t.branch_dev", fmt.Sprint(n + 1)},
		{"SELECT COUNT(*) FROM db.t.branch_dev WHERE id BETWEEN 1 AND 99", "0"},
		{"SELECT COUNT(*) FROM db.t.snapshots WHERE summary->>'$.\"wap.id\"' IS NOT NULL", fmt.Sprint(n)},
	} {
		if got := queryString(t, conn, c.query); got != c.want {
			t.Errorf("%s: %s, want %s", c.query, got, c.want)
		}
	}
}

package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine"
)

// change is the effect of one committed statement on the (id, v) table.
type change struct {
	kind string // insert, update, delete
	id   int64
}

// TestConcurrentRowLevelChanges runs 8 sessions doing INSERT, UPDATE and
// DELETE on one table for a few seconds. A statement answered 1213 is
// retried (up to 5 times). Afterwards every snapshot must be the effect of
// exactly one statement that reported success, and every successful
// statement that changed a row must be exactly one snapshot: the table is
// the serial replay of the committed statements in commit order, no
// committed row is lost and nothing is applied twice.
func TestConcurrentRowLevelChanges(t *testing.T) {
	// Format v2 deletes with position-delete files, v3 with deletion
	// vectors, and v3 rewrites carry row ids.
	for _, version := range []string{"2", "3"} {
		for _, mode := range []string{"copy-on-write", "merge-on-read"} {
			t.Run("v"+version+"/"+mode, func(t *testing.T) { concurrentRowLevel(t, mode, version, 2*time.Second) })
		}
	}
}

func concurrentRowLevel(t *testing.T, mode, version string, run time.Duration) {
	dir := t.TempDir()
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	setup, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, setup, "CREATE DATABASE c",
		fmt.Sprintf("CREATE TABLE c.t (id BIGINT, v BIGINT) TBLPROPERTIES ('format-version'='%[2]s', 'write.delete.mode'='%[1]s', 'write.update.mode'='%[1]s')", mode, version),
		"INSERT INTO c.t VALUES (1, 0), (2, 0), (3, 0), (4, 0)")
	setup.Close()

	var (
		mu        sync.Mutex
		committed = map[change]int{} // successful statements that changed a row
		live      = []int64{1, 2, 3, 4}
		attempts  atomic.Int64
		conflicts atomic.Int64
		failed    atomic.Int64
	)
	pick := func(r *rand.Rand) (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(live) == 0 {
			return 0, false
		}
		return live[r.IntN(len(live))], true
	}
	deadline := time.Now().Add(run)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 42))
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			next := int64(g+1) * 1_000_000
			for time.Now().Before(deadline) {
				var c change
				var stmt string
				switch n := r.IntN(10); {
				case n < 4:
					next++
					c, stmt = change{"insert", next}, fmt.Sprintf("INSERT INTO c.t VALUES (%d, 0)", next)
				case n < 8:
					id, ok := pick(r)
					if !ok {
						continue
					}
					c, stmt = change{"update", id}, fmt.Sprintf("UPDATE c.t SET v = v + 1 WHERE id = %d", id)
				default:
					id, ok := pick(r)
					if !ok {
						continue
					}
					c, stmt = change{"delete", id}, fmt.Sprintf("DELETE FROM c.t WHERE id = %d", id)
				}
				for try := 0; try < 5; try++ {
					attempts.Add(1)
					res, err := conn.ExecContext(ctx, stmt)
					var se *mysql.SQLError
					if errors.As(err, &se) && se.Num == mysql.ERLockDeadlock {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("%s: %v", stmt, err)
						return
					}
					n, _ := res.RowsAffected()
					mu.Lock()
					if n > 0 {
						committed[c]++
						switch c.kind {
						case "insert":
							live = append(live, c.id)
						case "delete":
							for i, id := range live {
								if id == c.id {
									live = append(live[:i], live[i+1:]...)
									break
								}
							}
						}
					}
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Walk the snapshots in commit order and explain each by one statement.
	tbl := loadWithIcebergGo(t, dir, "c", "t")
	var chain []int64
	for s := tbl.CurrentSnapshot(); s != nil; {
		chain = append([]int64{s.SnapshotID}, chain...)
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.Metadata().SnapshotByID(*s.ParentSnapshotID)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prev := readAt(t, conn, chain[0])
	explained := map[change]int{}
	for _, id := range chain[1:] {
		cur := readAt(t, conn, id)
		c, err := diff(prev, cur)
		if err != nil {
			t.Fatalf("snapshot %d is not one statement's effect: %v", id, err)
		}
		explained[c]++
		prev = cur
	}
	for c, n := range committed {
		if explained[c] != n {
			t.Errorf("%s of id %d succeeded %d times but is %d snapshots", c.kind, c.id, n, explained[c])
		}
	}
	for c, n := range explained {
		if committed[c] != n {
			t.Errorf("%d snapshots %s id %d, which %d successful statements did", n, c.kind, c.id, committed[c])
		}
	}
	// icesql's reader and iceberg-go's agree on the final rows.
	final := readAt(t, conn, chain[len(chain)-1])
	arrowTbl, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arrowTbl.Release()
	if int(arrowTbl.NumRows()) != len(final) {
		t.Errorf("iceberg-go reads %d rows, icesql %d", arrowTbl.NumRows(), len(final))
	}
	a := attempts.Load()
	t.Logf("%s: %d statements attempted in %v by 8 sessions, %d snapshots; %d answered 1213 and were retried (%.1f%%), %d failed",
		mode, a, run, len(chain)-1, conflicts.Load(), 100*float64(conflicts.Load())/float64(max(a, 1)), failed.Load())
}

// readAt reads the table's rows at a snapshot.
func readAt(t *testing.T, conn *sql.Conn, snapshot int64) map[int64]int64 {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), fmt.Sprintf("SELECT id, v FROM c.t AS OF %d", snapshot))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[id]; dup {
			t.Fatalf("snapshot %d holds id %d twice", snapshot, id)
		}
		out[id] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// diff names the single-row change from a to b.
func diff(a, b map[int64]int64) (change, error) {
	var out []change
	for id, v := range b {
		old, ok := a[id]
		switch {
		case !ok && v == 0:
			out = append(out, change{"insert", id})
		case !ok:
			return change{}, fmt.Errorf("id %d appeared with v=%d", id, v)
		case v == old+1:
			out = append(out, change{"update", id})
		case v != old:
			return change{}, fmt.Errorf("id %d went from %d to %d", id, old, v)
		}
	}
	for id := range a {
		if _, ok := b[id]; !ok {
			out = append(out, change{"delete", id})
		}
	}
	if len(out) != 1 {
		return change{}, fmt.Errorf("%d rows changed: %v", len(out), out)
	}
	return out[0], nil
}

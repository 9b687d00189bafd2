package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/icesql/icesql/engine"
)

// BenchmarkSingleRowInsert measures small commits: every INSERT of one row
// is its own Iceberg snapshot (data file, manifest, manifest list, metadata
// JSON), as in the setup of every sqllogictest file. The sub-benchmarks start
// from tables that already have that many snapshots, since a commit's cost
// may grow with the table's history: history=N commits N inserts first;
// forged=N writes a metadata file with N snapshots instead (forgeHistory),
// which takes seconds where N real commits would take many minutes.
func BenchmarkSingleRowInsert(b *testing.B) {
	for _, c := range []struct {
		history int
		forged  bool
	}{{0, false}, {1000, false}, {1000, true}, {10000, true}} {
		name := fmt.Sprintf("history=%d", c.history)
		if c.forged {
			name = fmt.Sprintf("forged=%d", c.history)
		}
		history := c.history
		if c.forged {
			history = 1
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			e, err := engine.Open(ctx, engine.Config{Warehouse: dir})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			db := sql.OpenDB(e.Connector())
			defer db.Close()
			conn, err := db.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			exec := func(q string) {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					b.Fatalf("%s: %v", q, err)
				}
			}
			exec("CREATE DATABASE db")
			exec("USE db")
			exec("CREATE TABLE t (a INT, b INT, c VARCHAR(20))")
			for i := range history {
				exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'x')", i, i))
			}
			if c.forged {
				forgeHistory(b, filepath.Join(dir, "db", "t", "metadata"), c.history)
				exec("SELECT COUNT(*) FROM t")
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := range b.N {
				exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'y')", i, i))
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// forgeHistory gives the table whose metadata folder is dir n snapshots: it
// rewrites its newest metadata file, whose one snapshot is current, with
// n-1 ancestors before it, each listing the same manifest list (nothing
// reads an ancestor's files when appending), and a snapshot-log of n
// entries, as n appends would have left it.
func forgeHistory(b *testing.B, dir string, n int) {
	b.Helper()
	latest := 0
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		var v int
		if _, err := fmt.Sscanf(e.Name(), "v%d.metadata.json", &v); err == nil && v > latest {
			latest = v
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("v%d.metadata.json", latest)))
	if err != nil {
		b.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(data, &meta); err != nil {
		b.Fatal(err)
	}
	snaps := meta["snapshots"].([]any)
	if len(snaps) != 1 {
		b.Fatalf("forgeHistory wants a table with one snapshot, got %d", len(snaps))
	}
	cur := snaps[0].(map[string]any)
	ts := int64(cur["timestamp-ms"].(float64))
	var forged, log []any
	for i := 1; i < n; i++ {
		s := map[string]any{}
		for k, v := range cur {
			s[k] = v
		}
		s["snapshot-id"] = int64(i)
		s["sequence-number"] = int64(i)
		s["timestamp-ms"] = ts - int64(n-i)
		delete(s, "parent-snapshot-id")
		if i > 1 {
			s["parent-snapshot-id"] = int64(i - 1)
		}
		forged = append(forged, s)
		log = append(log, map[string]any{"snapshot-id": int64(i), "timestamp-ms": ts - int64(n-i)})
	}
	if n > 1 {
		cur["parent-snapshot-id"] = int64(n - 1)
	}
	cur["sequence-number"] = int64(n)
	meta["last-sequence-number"] = int64(n)
	meta["snapshots"] = append(forged, cur)
	meta["snapshot-log"] = append(log, meta["snapshot-log"].([]any)...)
	out, err := json.Marshal(meta)
	if err != nil {
		b.Fatal(err)
	}
	next := filepath.Join(dir, "v"+strconv.Itoa(latest+1)+".metadata.json")
	if err := os.WriteFile(next, out, 0o644); err != nil {
		b.Fatal(err)
	}
}

package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/icesql/icesql/engine"
)

// BenchmarkSingleRowInsert measures small commits: every INSERT of one row
// is its own Iceberg snapshot (data file, manifest, manifest list, metadata
// JSON), as in the setup of every sqllogictest file. The sub-benchmarks start
// from tables that already have that many snapshots, since a commit's cost
// may grow with the table's history.
func BenchmarkSingleRowInsert(b *testing.B) {
	for _, history := range []int{0, 1000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			ctx := context.Background()
			e, err := engine.Open(ctx, engine.Config{Warehouse: b.TempDir()})
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

package main

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// The -smallq benchmark: point lookups by key on a table of n single-row
// commits (n data files, as many manifests as merging leaves) against the
// same rows in one file, and 16 clients sending point lookups over the
// MySQL wire at once. It prints
//
//	bench smallq_point           the n-file table, in-process, manifests kept (the default)
//	bench smallq_point_nocache   the same, every scan decoding its manifests (ManifestCacheBytes < 0)
//	bench smallq_16_clients      16 wire clients on the n-file table
//
// The first two give icesql_ms (the median wall time of a lookup),
// one_file_ms (the same on the one-file table), ratio, and the same in CPU
// time (cpu_ms, one_file_cpu_ms, cpu_ratio: steadier on a shared
// machine); DuckDB is not in it, the comparison being icesql with itself.
// The last gives queries_per_s, p50_ms, p99_ms and cpu_ms (the process's
// CPU time per query, the clients' side included: they run in it too; on a
// busy machine throughput is what the other processes leave, and cpu_ms
// says what a query costs). Each lookup asks for a different key, so no
// plan is reused, and checks the row it gets.
//
// profile, when set, is where a CPU profile of the kept-manifest lookups on
// the n-file table is written, and profile.clients that of the wire clients.
func runSmallQueries(ctx context.Context, work string, n, runs int, clientTime time.Duration, profile string) error {
	warehouse := filepath.Join(work, "warehouse")
	e, err := engine.Open(ctx, engine.Config{Warehouse: warehouse})
	if err != nil {
		return err
	}
	defer e.Close()
	db := gosql.OpenDB(e.Connector())
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{"CREATE DATABASE smallq",
		"CREATE TABLE smallq.many (id BIGINT, v VARCHAR(40))", "CREATE TABLE smallq.one (id BIGINT, v VARCHAR(40))"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	start := time.Now()
	values := make([]string, n)
	for i := range n {
		values[i] = fmt.Sprintf("(%d, 'row %d')", i, i)
		if _, err := db.ExecContext(ctx, "INSERT INTO smallq.many VALUES "+values[i]); err != nil {
			return err
		}
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO smallq.one VALUES "+strings.Join(values, ", ")); err != nil {
		return err
	}
	var files int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM smallq.many.files").Scan(&files); err != nil {
		return err
	}
	var manifests int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM smallq.many.manifests").Scan(&manifests); err != nil {
		return err
	}
	fmt.Printf("bench smallq_setup commits=%d files=%d manifests=%d ms=%d\n", n, files, manifests, time.Since(start).Milliseconds())

	nocache, err := engine.Open(ctx, engine.Config{Warehouse: warehouse, ManifestCacheBytes: -1})
	if err != nil {
		return err
	}
	defer nocache.Close()
	ndb := gosql.OpenDB(nocache.Connector())
	defer ndb.Close()
	ndb.SetMaxOpenConns(1)
	for _, c := range []struct {
		name string
		db   *gosql.DB
	}{{"smallq_point", db}, {"smallq_point_nocache", ndb}} {
		// Each measurement asks for keys of its own: plans are kept per
		// filter (pushdown/plancache.go), and a repeated key would reuse one.
		offset := runs * (1 + len(c.name))
		stop := func() {}
		if c.db == db {
			if stop, err = startProfile(profile); err != nil {
				return err
			}
		}
		many, err := lookups(ctx, c.db, "many", n, runs, offset)
		stop()
		if err != nil {
			return err
		}
		one, err := lookups(ctx, c.db, "one", n, runs, offset)
		if err != nil {
			return err
		}
		fmt.Printf("bench %s icesql_ms=%.2f one_file_ms=%.2f ratio=%.2f cpu_ms=%.2f one_file_cpu_ms=%.2f cpu_ratio=%.2f files=%d\n",
			c.name, ms(many.wall), ms(one.wall), ms(many.wall)/ms(one.wall), ms(many.cpu), ms(one.cpu), ms(many.cpu)/ms(one.cpu), files)
	}
	hits, misses := e.ManifestCacheStats()
	fmt.Printf("bench smallq_manifest_cache hits=%d misses=%d\n", hits, misses)
	stop, err := startProfile(profileOf(profile, "clients"))
	if err != nil {
		return err
	}
	defer stop()
	return clients(ctx, e, 16, n, clientTime)
}

type lookupTimes struct{ wall, cpu time.Duration }

// lookups runs runs point lookups of different keys (from the offset-th
// of a fixed sequence) on smallq.<name> after one untimed, and returns the median wall and CPU time of one.
func lookups(ctx context.Context, db *gosql.DB, name string, n, runs, offset int) (lookupTimes, error) {
	var walls, cpus []time.Duration
	for i := range runs + 1 {
		key := ((offset + i) * 7919) % n
		w0, c0 := time.Now(), cpuTime()
		if err := lookup(ctx, db, name, key); err != nil {
			return lookupTimes{}, err
		}
		if i > 0 {
			walls, cpus = append(walls, time.Since(w0)), append(cpus, cpuTime()-c0)
		}
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return lookupTimes{wall: walls[len(walls)/2], cpu: cpus[len(cpus)/2]}, nil
}

// querier is a *gosql.DB or a *gosql.Conn.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*gosql.Rows, error)
}

// lookup asks smallq.<name> for the row of key and checks it.
func lookup(ctx context.Context, q querier, name string, key int) error {
	sql := fmt.Sprintf("SELECT v FROM smallq.%s WHERE id = %d", name, key)
	rows, err := q.QueryContext(ctx, sql)
	if err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if want := fmt.Sprintf("row %d", key); len(got) != 1 || got[0] != want {
		return fmt.Errorf("%s: got %q, want [%q]", sql, got, want)
	}
	return nil
}

// clients runs point lookups on smallq.many from k wire clients for d and
// prints the throughput and latencies.
func clients(ctx context.Context, e *engine.Engine, k, n int, d time.Duration) error {
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	go srv.Start()
	defer srv.Close()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", srv.Addr()
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := gosql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(k)
	var mu sync.Mutex
	var latencies []time.Duration
	errs := make([]error, k)
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), cpuTime()
	deadline := start.Add(d)
	for c := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := db.Conn(ctx)
			if err != nil {
				errs[c] = err
				return
			}
			defer conn.Close()
			var mine []time.Duration
			for i := 0; time.Now().Before(deadline); i++ {
				t0 := time.Now()
				if err := lookup(ctx, conn, "many", (c*1_000_003+i*7919)%n); err != nil {
					errs[c] = err
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(latencies) == 0 {
		return fmt.Errorf("no lookup finished in %s", d)
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 { return ms(latencies[int(p*float64(len(latencies)-1))]) }
	fmt.Printf("bench smallq_%d_clients queries_per_s=%.0f p50_ms=%.2f p99_ms=%.2f cpu_ms=%.3f queries=%d\n",
		k, float64(len(latencies))/elapsed.Seconds(), pct(0.50), pct(0.99), ms(cpu)/float64(len(latencies)), len(latencies))
	return nil
}

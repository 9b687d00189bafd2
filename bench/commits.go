package main

import (
	"context"
	gosql "database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/icesql/icesql/engine"
)

// The -commits benchmark: single-row autocommit INSERTs, each its own
// Iceberg snapshot (data file, manifest, manifest list, metadata JSON).
// It prints
//
//	bench commits_empty          one session, a table with no history
//	bench commits_10k_history    one session, a table with 10,000 snapshots
//	bench commits_10k_history_gzip   the same, its metadata files gzip-compressed
//	                                 (write.metadata.compression-codec=gzip)
//	bench commits_8_sessions     eight sessions inserting into one table at once
//
// each with icesql_ms (wall time per statement), commits_per_s, cpu_ms (the
// process's CPU time per statement, steadier than wall time on a shared
// machine), rss_mb and metadata_kb (the size of the table's newest metadata
// file, which holds every snapshot of the history, as stored: compressed
// in the gzip case); duckdb_ms and ratio are
// absent, DuckDB having no Iceberg commits to compare with. The 8-session
// line also says whether every acknowledged row is in the table
// (none_lost) and whether each statement is a snapshot of its own
// (snapshots_per_statement).
//
// profile, when set, names the CPU profiles of each case's timed INSERTs:
// profile.empty, profile.history, profile.history_gzip and profile.sessions.
//
// The 10,000 snapshots are forged (forgeHistory): 10,000 real commits would
// write the metadata file 10,000 times as it grows, about 40 GB.

const forgedHistory = 10_000

func runCommits(ctx context.Context, work string, n int, profile string) error {
	e, err := engine.Open(ctx, engine.Config{Warehouse: filepath.Join(work, "warehouse")})
	if err != nil {
		return err
	}
	defer e.Close()
	db := gosql.OpenDB(e.Connector())
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE commits"); err != nil {
		return err
	}
	create := func(name string) error {
		_, err := db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE commits.%s (id BIGINT, session INT, note VARCHAR(40))", name))
		return err
	}
	warehouse := filepath.Join(work, "warehouse")

	// One session, empty table.
	if err := create("empty"); err != nil {
		return err
	}
	res, err := insertRows(ctx, db, "empty", 1, n, profileOf(profile, "empty"))
	if err != nil {
		return err
	}
	res.print("commits_empty", warehouse, "empty")

	// One session, 10,000 snapshots of history: metadata files plain, then
	// gzip-compressed (write.metadata.compression-codec=gzip).
	for _, c := range []struct {
		table, line string
		gzip        bool
	}{{"history", "commits_10k_history", false}, {"history_gzip", "commits_10k_history_gzip", true}} {
		if err := create(c.table); err != nil {
			return err
		}
		if _, err := insertRows(ctx, db, c.table, 1, 1, ""); err != nil {
			return err
		}
		if err := forgeHistory(warehouse, c.table, forgedHistory, c.gzip); err != nil {
			return err
		}
		// One commit first, untimed: the first after loading a table encodes
		// (and compresses) its whole snapshot list, which later commits reuse.
		if _, err := insertRows(ctx, db, c.table, 1, 1, ""); err != nil {
			return err
		}
		var count int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM commits."+c.table+".snapshots").Scan(&count); err != nil {
			return err
		}
		if count != forgedHistory+1 {
			return fmt.Errorf("the forged table has %d snapshots, want %d", count, forgedHistory+1)
		}
		res, err = insertRows(ctx, db, c.table, 1, max(n/5, 20), profileOf(profile, c.table))
		if err != nil {
			return err
		}
		res.print(c.line, warehouse, c.table)
	}

	// Eight sessions, one table.
	if err := create("sessions"); err != nil {
		return err
	}
	res, err = insertRows(ctx, db, "sessions", 8, n, profileOf(profile, "sessions"))
	if err != nil {
		return err
	}
	var rows, distinct, snaps int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM commits.sessions").Scan(&rows, &distinct); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM commits.sessions.snapshots").Scan(&snaps); err != nil {
		return err
	}
	res.extra = fmt.Sprintf(" none_lost=%v snapshots_per_statement=%.2f", rows == int64(res.statements) && distinct == rows, float64(snaps)/float64(res.statements))
	res.print("commits_8_sessions", warehouse, "sessions")
	return nil
}

// profileOf names the profile of one case: none when profile is empty.
func profileOf(profile, name string) string {
	if profile == "" {
		return ""
	}
	return profile + "." + name
}

type commitResult struct {
	statements int
	wall, cpu  time.Duration
	rss        int
	extra      string
}

func (r commitResult) print(name, warehouse, table string) {
	kb := int64(-1)
	if path, err := newestMetadata(warehouse, "commits", table); err == nil {
		if fi, err := os.Stat(path); err == nil {
			kb = fi.Size() / 1024
		}
	}
	per := float64(r.statements)
	fmt.Printf("bench %s icesql_ms=%.2f commits_per_s=%.1f cpu_ms=%.2f rss_mb=%d metadata_kb=%d statements=%d%s\n",
		name, ms(r.wall)/per, per/r.wall.Seconds(), ms(r.cpu)/per, r.rss, kb, r.statements, r.extra)
}

// insertRows runs n single-row INSERTs into commits.<name> from sessions
// connections at once, each on its own connection, and checks that each was
// acknowledged. A CPU profile of them goes to profile, when set.
func insertRows(ctx context.Context, db *gosql.DB, name string, sessions, n int, profile string) (commitResult, error) {
	conns := make([]*gosql.Conn, sessions)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			return commitResult{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	stop, err := startProfile(profile)
	if err != nil {
		return commitResult{}, err
	}
	resetPeakRSS()
	start, cpu0 := time.Now(), cpuTime()
	var wg sync.WaitGroup
	errs := make([]error, sessions)
	for s, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := s; i < n; i += sessions {
				q := fmt.Sprintf("INSERT INTO commits.%s VALUES (%d, %d, 'row %d of session %d')", name, i, s, i, s)
				res, err := c.ExecContext(ctx, q)
				if err == nil {
					var k int64
					if k, err = res.RowsAffected(); err == nil && k != 1 {
						err = fmt.Errorf("%d rows affected, want 1", k)
					}
				}
				if err != nil {
					errs[s] = fmt.Errorf("%s: %w", q, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop()
	r := commitResult{statements: n, wall: time.Since(start), cpu: cpuTime() - cpu0, rss: peakRSSMB()}
	return r, errors.Join(errs...)
}

// forgeHistory gives the table commits.<name> n snapshots: it
// writes, as the next version, its newest metadata file (whose one snapshot
// is current) with n-1 ancestors before that snapshot, each listing the same
// manifest list (an append reads only the current snapshot's), and a
// snapshot-log of n entries, as n appends would have left it. With gzip the
// table property asks for gzip-compressed metadata files, which the commits
// after it write.
func forgeHistory(warehouse, name string, n int, gzip bool) error {
	path, err := newestMetadata(warehouse, "commits", name)
	if err != nil {
		return err
	}
	latest, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "v"), ".metadata.json"))
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var meta map[string]any
	if err := json.Unmarshal(data, &meta); err != nil {
		return err
	}
	snaps, _ := meta["snapshots"].([]any)
	if len(snaps) != 1 {
		return fmt.Errorf("forgeHistory wants a table with one snapshot, got %d", len(snaps))
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
	if gzip {
		props, _ := meta["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		props["write.metadata.compression-codec"] = "gzip"
		meta["properties"] = props
	}
	out, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(filepath.Dir(path), "v"+strconv.Itoa(latest+1)+".metadata.json"), out, 0o644)
}

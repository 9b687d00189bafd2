package sqltests

import (
	"context"
	gosql "database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/icesql/icesql/sqltests/fixtures"
)

// TestFixturesFileCache reads every fixture table other engines wrote
// (position and equality deletes, deletion vectors, name mappings, files
// without field ids, defaults, evolved schemas and partition specs, older
// snapshots) with the decoded-file cache off, then on three times (the row
// path decodes and keeps files at their first read, the vector path at
// their second; later reads take them from memory), on the row path and the
// vector path: every answer, or error, must be the same.
func TestFixturesFileCache(t *testing.T) {
	fx := fixtures.Dir(t)
	idx := loadFixtureIndex(t, fx)
	e, conn := fixtureEngine(t, fixtureRemap(fx, idx))
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE fx"); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, tb := range idx.Tables {
		if kf, known := knownFailures[tb.Dir]; known && kf.atRegister || slices.Contains(tb.Features, "files-do-not-exist") {
			continue
		}
		name := "fx." + fixtureName(tb.Dir)
		metadata := filepath.Join(fx, tb.Dir, "metadata", tb.MetadataFile)
		var snap, records, files gosql.NullInt64
		if err := conn.QueryRowContext(ctx, "CALL icesql.system.register_table(table => ?, metadata_file => ?)", name, metadata).
			Scan(&snap, &records, &files); err != nil {
			continue // TestFixtures reports it
		}
		queries := []string{"SELECT * FROM " + name}
		for _, q := range tb.Expected {
			from := name
			if q.SnapshotID != "" {
				from += " VERSION AS OF " + q.SnapshotID.String()
			}
			queries = append(queries, strings.ReplaceAll(q.SQL, "{t}", from))
		}
		for _, vec := range []bool{false, true} {
			for _, q := range queries {
				want := fileCacheRows(ctx, t, conn, q, vec, false)
				for run := range 3 {
					if got := fileCacheRows(ctx, t, conn, q, vec, true); got != want {
						t.Errorf("%s (vectorized %v, run %d with the cache):\n  cached   %s\n  uncached %s", q, vec, run+1, got, want)
					}
				}
				compared++
			}
		}
	}
	hits, misses := e.DecodedFileStats()
	t.Logf("%d queries compared; decoded-file cache: %d hits, %d files decoded", compared, hits, misses)
	if hits == 0 {
		t.Error("no fixture file was served from the decoded-file cache")
	}
}

// fileCacheRows is q's rows, sorted, or its error, read with the vector
// path and the decoded-file cache as given.
func fileCacheRows(ctx context.Context, t *testing.T, conn *gosql.Conn, q string, vec, cache bool) string {
	t.Helper()
	for name, on := range map[string]bool{"icesql_vectorize": vec, "icesql_file_cache": cache} {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET %s = %v", name, on)); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := queryRows(ctx, conn, q)
	if err != nil {
		return "error: " + err.Error()
	}
	lines := make([]string, 0, len(rows))
	for _, r := range rows {
		vals := make([]string, len(r))
		for i, v := range r {
			vals[i] = "NULL"
			if v != nil {
				vals[i] = *v
			}
		}
		lines = append(lines, strings.Join(vals, "|"))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

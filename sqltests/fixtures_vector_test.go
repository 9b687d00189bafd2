package sqltests

import (
	"context"
	gosql "database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/icesql/icesql/sqltests/fixtures"
)

// TestFixturesVectorized runs aggregates over every column the vector path
// computes on, in every fixture table other engines wrote, with the vector
// path on and off: the vector path decodes most of those files itself
// (pushdown/native.go: decimals Spark and Trino store as INT32 and INT64,
// dictionary and plain pages, version 1 and 2 pages), and must give the
// row path's answers.
func TestFixturesVectorized(t *testing.T) {
	fx := fixtures.Dir(t)
	idx := loadFixtureIndex(t, fx)
	conn := fixtureServer(t, fixtureRemap(fx, idx))
	ctx := context.Background()
	// The native decoder is what is tested: small files are otherwise
	// served decoded from memory (TestFixturesFileCache compares those).
	if _, err := conn.ExecContext(ctx, "SET icesql_file_cache = OFF"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE fx"); err != nil {
		t.Fatal(err)
	}
	compared, native := 0, 0
	for _, tb := range idx.Tables {
		if _, known := knownFailures[tb.Dir]; known || slices.Contains(tb.Features, "files-do-not-exist") {
			continue
		}
		name := "fx." + fixtureName(tb.Dir)
		metadata := filepath.Join(fx, tb.Dir, "metadata", tb.MetadataFile)
		var snap, records, files gosql.NullInt64
		if err := conn.QueryRowContext(ctx, "CALL icesql.system.register_table(table => ?, metadata_file => ?)", name, metadata).
			Scan(&snap, &records, &files); err != nil {
			continue // TestFixtures reports it
		}
		for _, q := range vectorQueries(t, ctx, conn, name) {
			want, wantErr := vectorizedRows(ctx, conn, q, false)
			got, gotErr := vectorizedRows(ctx, conn, q, true)
			switch {
			case wantErr != nil && gotErr != nil && vectorKnownError(tb.Dir, wantErr, gotErr):
			case wantErr != nil || gotErr != nil:
				// An error on both paths is no agreement: a column added
				// after a file was written failed both (issue 21).
				t.Errorf("%s: vectorized error %v, row path error %v", q, gotErr, wantErr)
			case got != want:
				t.Errorf("%s:\n  vectorized %s\n  row path   %s", q, got, want)
			}
			compared++
			native += nativeTasks(t, ctx, conn, q)
		}
	}
	t.Logf("%d aggregates compared; %d file scan tasks decoded natively", compared, native)
	if native == 0 {
		t.Error("no fixture file was decoded natively")
	}
}

// vectorKnownErrors are fixture tables whose every read fails on both
// paths, for the reason given; keyed by the table's dir in tables.json.
var vectorKnownErrors = map[string]knownFailure{
	"impala/testdata/data/iceberg_test/hadoop_catalog/ice/iceberg_v2_null_delete_record": {
		reason: "a position delete file with NULL file_path values, which the spec requires (Impala wrote it to test " +
			"that readers reject it); the table's expected queries are answered from metadata",
		errPattern: `null file_path in position delete file`,
	},
}

// vectorKnownError says both paths failed on a table of vectorKnownErrors
// for its reason.
func vectorKnownError(dir string, errs ...error) bool {
	kf, ok := vectorKnownErrors[dir]
	if !ok {
		return false
	}
	for _, err := range errs {
		if !regexp.MustCompile(kf.errPattern).MatchString(err.Error()) {
			return false
		}
	}
	return true
}

var vectorColumnType = regexp.MustCompile(`^(int|bigint|decimal\((\d+),\d+\)|date|text|varchar\(\d+\)|longtext)$`)

// vectorQueries are aggregates over each column of the table whose type the
// vector path computes on.
func vectorQueries(t *testing.T, ctx context.Context, conn *gosql.Conn, table string) []string {
	rows, err := queryRows(ctx, conn, "SHOW COLUMNS FROM "+table)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range rows {
		if r[0] == nil || r[1] == nil {
			continue
		}
		col, typ := "`"+*r[0]+"`", strings.ToLower(*r[1])
		m := vectorColumnType.FindStringSubmatch(typ)
		if m == nil {
			continue
		}
		switch {
		case typ == "int" || typ == "bigint":
			out = append(out, fmt.Sprintf("SELECT COUNT(*), COUNT(%[1]s), SUM(%[1]s), MIN(%[1]s), MAX(%[1]s) FROM %[2]s", col, table),
				fmt.Sprintf("SELECT %[1]s, COUNT(*) FROM %[2]s GROUP BY %[1]s", col, table))
		case m[2] != "":
			if p, _ := strconv.Atoi(m[2]); p <= 18 {
				out = append(out, fmt.Sprintf("SELECT COUNT(%[1]s), SUM(%[1]s), AVG(%[1]s), MIN(%[1]s), MAX(%[1]s) FROM %[2]s WHERE %[1]s IS NOT NULL OR %[1]s IS NULL", col, table))
			}
		case typ == "date":
			out = append(out, fmt.Sprintf("SELECT COUNT(%[1]s), MIN(%[1]s), MAX(%[1]s) FROM %[2]s", col, table))
		default:
			out = append(out, fmt.Sprintf("SELECT %[1]s, COUNT(*) FROM %[2]s GROUP BY %[1]s", col, table),
				fmt.Sprintf("SELECT MIN(%[1]s), MAX(%[1]s), COUNT(%[1]s) FROM %[2]s", col, table))
		}
	}
	return out
}

// vectorizedRows is a query's rows as sorted text, with the vector path on
// or off.
func vectorizedRows(ctx context.Context, conn *gosql.Conn, q string, on bool) (string, error) {
	set := "SET icesql_vectorize = OFF"
	if on {
		set = "SET icesql_vectorize = ON"
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		return "", err
	}
	rows, err := queryRows(ctx, conn, q)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, r := range rows {
		var vals []string
		for _, v := range r {
			if v == nil {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, *v)
			}
		}
		lines = append(lines, strings.Join(vals, "|"))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), nil
}

var nativeLine = regexp.MustCompile(`native decoding: (\d+) tasks`)

// nativeTasks is how many scan tasks EXPLAIN ANALYZE says q decoded
// natively.
func nativeTasks(t *testing.T, ctx context.Context, conn *gosql.Conn, q string) int {
	rows, err := queryRows(ctx, conn, "EXPLAIN ANALYZE "+q)
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range rows {
		if r[0] == nil {
			continue
		}
		if m := nativeLine.FindStringSubmatch(*r[0]); m != nil {
			k, _ := strconv.Atoi(m[1])
			n += k
		}
	}
	return n
}

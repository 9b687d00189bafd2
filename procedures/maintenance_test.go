package procedures_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/icesql/icesql/engine"
)

// These tests check what expire_snapshots and remove_orphan_files leave on
// disk, which SQL cannot see: the files that must go are gone, every file a
// remaining snapshot names is still there, and the table reads in full.

func openDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	dir := t.TempDir()
	e, err := engine.Open(context.Background(), engine.Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	db := sql.OpenDB(e.Connector())
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func exec(t *testing.T, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := q.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func queryStrings(t *testing.T, db *sql.DB, query string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func oneInt(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// tableFiles lists the files under a table's folder, relative to it.
func tableFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveFiles is every file the table's metadata names, from its metadata
// tables: manifest lists, manifests and data files of all snapshots.
func liveFiles(t *testing.T, db *sql.DB, name, dir string) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		"SELECT manifest_list FROM " + name + ".snapshots",
		"SELECT path FROM " + name + ".all_manifests",
		"SELECT file_path FROM " + name + ".all_files",
	} {
		for _, r := range queryStrings(t, db, q) {
			p := strings.TrimPrefix(r[0], "file://")
			rel, err := filepath.Rel(dir, p)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Fatalf("%s names %s, outside %s", q, r[0], dir)
			}
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

func TestExpireSnapshotsDeletesUnreachableFiles(t *testing.T) {
	db, wh := openDB(t)
	dir := filepath.Join(wh, "d", "t")
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id BIGINT)")
	exec(t, db, "INSERT INTO d.t VALUES (1)") // s1: file A
	exec(t, db, "INSERT INTO d.t VALUES (2)") // s2: file B
	s1 := oneInt(t, db, "SELECT snapshot_id FROM d.t.snapshots WHERE parent_id IS NULL")
	s2 := oneInt(t, db, "SELECT snapshot_id FROM d.t.snapshots WHERE parent_id = ?", s1)
	fileB := queryStrings(t, db, "SELECT file_path FROM d.t.files WHERE record_count = 1 AND file_path NOT IN (SELECT file_path FROM d.t.files VERSION AS OF '"+itoa(s1)+"')")
	if len(fileB) != 1 {
		t.Fatalf("files of s2 only: %v", fileB)
	}
	listS2 := queryStrings(t, db, "SELECT manifest_list FROM d.t.snapshots WHERE snapshot_id = ?", s2)[0][0]
	exec(t, db, "CALL system.rollback_to_snapshot('d.t', ?)", s1)
	exec(t, db, "INSERT INTO d.t VALUES (3)") // s3: file C, parent s1
	before := tableFiles(t, dir)

	// Keep only the current snapshot: s1 (an ancestor beyond retain_last)
	// and s2 (rolled back, no ref) go. s2's file B, its manifest and both
	// manifest lists go; s1's manifest lives on in s3's manifest list.
	got := queryStrings(t, db, "CALL system.expire_snapshots(table => 'd.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
	want := [][]string{{"1", "0", "0", "1", "2", "0"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("expire_snapshots = %v, want %v", got, want)
	}
	if n := oneInt(t, db, "SELECT COUNT(*) FROM d.t.snapshots"); n != 1 {
		t.Errorf("%d snapshots left, want 1", n)
	}
	after := tableFiles(t, dir)
	for _, gone := range []string{strings.TrimPrefix(fileB[0][0], "file://"), strings.TrimPrefix(listS2, "file://")} {
		rel, _ := filepath.Rel(dir, gone)
		if after[rel] {
			t.Errorf("%s is still on disk", rel)
		}
	}
	var removed []string
	for f := range before {
		if !after[f] {
			removed = append(removed, f)
		}
	}
	if len(removed) != 4 {
		t.Errorf("expire removed %v, want 4 files (a data file, a manifest, two manifest lists)", removed)
	}
	for _, f := range liveFiles(t, db, "d.t", dir) {
		if !after[f] {
			t.Errorf("%s, named by the table's metadata, is gone", f)
		}
	}
	if got := queryStrings(t, db, "SELECT id FROM d.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"3"}}) {
		t.Errorf("table reads %v after expiry, want 1 and 3", got)
	}

	// Nothing left to expire: all counts zero, no file touched
	got = queryStrings(t, db, "CALL system.expire_snapshots('d.t', TIMESTAMP '2999-01-01 00:00:00', 1)")
	if want := [][]string{{"0", "0", "0", "0", "0", "0"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("second expire_snapshots = %v, want %v", got, want)
	}
	if again := tableFiles(t, dir); !reflect.DeepEqual(again, after) {
		t.Errorf("a second expiry with nothing to expire changed the files")
	}
}

func TestRemoveOrphanFiles(t *testing.T) {
	db, wh := openDB(t)
	dir := filepath.Join(wh, "d", "t")
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id BIGINT)")
	exec(t, db, "INSERT INTO d.t VALUES (1)")
	exec(t, db, "INSERT INTO d.t VALUES (2)")
	// Two files no metadata names, as a failed write leaves them
	orphans := []string{filepath.Join(dir, "data", "00000-9-lost.parquet"), filepath.Join(dir, "metadata", "lost-m0.avro")}
	for _, p := range orphans {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Everything is four days old, so age alone protects nothing
	old := time.Now().Add(-96 * time.Hour)
	for f := range tableFiles(t, dir) {
		if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// A write in flight: its data file is written, its commit not yet made
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO d.t VALUES (3)")
	before := tableFiles(t, dir)

	wantOrphans := [][]string{{"file://" + orphans[1]}, {"file://" + orphans[0]}}
	sort.Slice(wantOrphans, func(i, j int) bool { return wantOrphans[i][0] < wantOrphans[j][0] })
	got := queryStrings(t, db, "CALL system.remove_orphan_files(table => 'd.t', dry_run => true)")
	if !reflect.DeepEqual(got, wantOrphans) {
		t.Fatalf("dry run lists %v, want %v", got, wantOrphans)
	}
	if now := tableFiles(t, dir); !reflect.DeepEqual(now, before) {
		t.Fatal("a dry run changed the files")
	}
	// Deleting files younger than a day is refused
	if _, err := db.Exec("CALL system.remove_orphan_files(table => 'd.t', older_than => NOW())"); err == nil || !strings.Contains(err.Error(), "argument 'older_than'") {
		t.Fatalf("remove_orphan_files with older_than now: %v, want an error naming older_than", err)
	}
	got = queryStrings(t, db, "CALL system.remove_orphan_files('d.t')")
	if !reflect.DeepEqual(got, wantOrphans) {
		t.Fatalf("remove_orphan_files = %v, want %v", got, wantOrphans)
	}
	after := tableFiles(t, dir)
	for _, p := range orphans {
		rel, _ := filepath.Rel(dir, p)
		if after[rel] {
			t.Errorf("orphan %s is still there", rel)
		}
	}
	if len(after) != len(before)-len(orphans) {
		t.Errorf("%d files before, %d after; only the %d orphans should have gone", len(before), len(after), len(orphans))
	}
	for _, f := range liveFiles(t, db, "d.t", dir) {
		if !after[f] {
			t.Errorf("%s, named by the table's metadata, is gone", f)
		}
	}
	for _, keep := range []string{"metadata/version-hint.text", "metadata/v1.metadata.json", "metadata/v3.metadata.json"} {
		if !after[keep] {
			t.Errorf("%s is gone", keep)
		}
	}
	// The write in flight commits and reads back: its file survived
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit after remove_orphan_files: %v", err)
	}
	if got := queryStrings(t, db, "SELECT id FROM d.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"2"}, {"3"}}) {
		t.Errorf("table reads %v, want 1, 2, 3", got)
	}
	// A location outside the table's folder is refused
	if _, err := db.Exec("CALL system.remove_orphan_files(table => 'd.t', location => ?, dry_run => true)", wh); err == nil || !strings.Contains(err.Error(), "argument 'location'") {
		t.Errorf("remove_orphan_files outside the table: %v, want an error naming location", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// clean_expired_metadata drops the schemas and partition specs only
// expired snapshots used.
func TestExpireCleansExpiredMetadata(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := engine.Open(ctx, engine.Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id BIGINT)")
	exec(t, db, "INSERT INTO d.t VALUES (1)")
	exec(t, db, "ALTER TABLE d.t ADD COLUMN name STRING")
	exec(t, db, "INSERT INTO d.t VALUES (2, 'b')")
	schemas := func() int {
		tbl, err := e.Catalog().LoadTable(ctx, []string{"d", "t"})
		if err != nil {
			t.Fatal(err)
		}
		return len(tbl.Metadata().Schemas())
	}
	if n := schemas(); n != 2 {
		t.Fatalf("%d schemas before expiry, want 2", n)
	}
	// Without clean_expired_metadata the old schema stays
	exec(t, db, "CALL system.expire_snapshots(table => 'd.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
	if n := schemas(); n != 2 {
		t.Fatalf("%d schemas after a plain expiry, want 2", n)
	}
	exec(t, db, "CALL system.expire_snapshots(table => 'd.t', clean_expired_metadata => true)")
	if n := schemas(); n != 1 {
		t.Errorf("%d schemas after clean_expired_metadata, want 1", n)
	}
	if got := queryStrings(t, db, "SELECT id, name FROM d.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1", "NULL"}, {"2", "b"}}) {
		t.Errorf("rows %v after cleaning, want (1, NULL), (2, b)", got)
	}
}

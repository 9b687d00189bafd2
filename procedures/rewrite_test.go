package procedures_test

import (
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

func TestRewriteDataFilesCounts(t *testing.T) {
	db, wh := openDB(t)
	dir := filepath.Join(wh, "d", "t")
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id BIGINT, name STRING)")
	exec(t, db, "INSERT INTO d.t VALUES (3, 'c'), (1, 'a')")
	exec(t, db, "INSERT INTO d.t VALUES (2, 'b')")
	exec(t, db, "INSERT INTO d.t VALUES (5, 'e'), (4, 'd')")
	bytes := oneInt(t, db, "SELECT SUM(file_size_in_bytes) FROM d.t.files")

	got := queryStrings(t, db, "CALL system.rewrite_data_files(table => 'd.t', options => map('min-input-files', '2'))")
	want := [][]string{{"3", "1", strconv.FormatInt(bytes, 10), "0", "0"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rewrite_data_files = %v, want %v", got, want)
	}
	sorted := oneInt(t, db, "SELECT SUM(file_size_in_bytes) FROM d.t.files")
	got = queryStrings(t, db, "CALL system.rewrite_data_files(table => 'd.t', strategy => 'sort', sort_order => 'name DESC')")
	// One file is not a group worth rewriting unless rewrite-all says so
	if want := [][]string{{"0", "0", "0", "0", "0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sort of one file = %v, want %v", got, want)
	}
	got = queryStrings(t, db, "CALL system.rewrite_data_files(table => 'd.t', strategy => 'sort', sort_order => 'name DESC', options => map('rewrite-all', 'true'))")
	if want := [][]string{{"1", "1", strconv.FormatInt(sorted, 10), "0", "0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sort rewrite = %v, want %v", got, want)
	}
	if got := queryStrings(t, db, "SELECT name FROM d.t"); !reflect.DeepEqual(got, [][]string{{"e"}, {"d"}, {"c"}, {"b"}, {"a"}}) {
		t.Errorf("rows after the sort rewrite %v, want e..a", got)
	}
	// The replaced files stay while older snapshots name them, and go
	// with those snapshots
	if n := len(tableFiles(t, filepath.Join(dir, "data"))); n != 5 {
		t.Errorf("%d data files on disk, want 5 (3 appended, 2 rewritten)", n)
	}
	// Four snapshots go: three appends and the binpack rewrite. Their data
	// files: the three appended and the binpack's output; their manifests:
	// one per append, and the binpack's two (its added file, and the
	// appended files marked deleted), which the sort's snapshot no longer
	// lists; their four manifest lists.
	got = queryStrings(t, db, "CALL system.expire_snapshots('d.t', TIMESTAMP '2999-01-01 00:00:00', 1)")
	if want := [][]string{{"4", "0", "0", "5", "4", "0"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("expire after rewrites = %v, want %v", got, want)
	}
	if n := len(tableFiles(t, filepath.Join(dir, "data"))); n != 1 {
		t.Errorf("%d data files on disk after expiry, want 1", n)
	}
	if n := oneInt(t, db, "SELECT COUNT(*) FROM d.t"); n != 5 {
		t.Errorf("%d rows after expiry, want 5", n)
	}
}

// After rewrite_manifests the old manifests go with the old snapshots, but
// the data files they list are live in the new manifest and must stay.
func TestExpireKeepsFilesOfRewrittenManifests(t *testing.T) {
	db, wh := openDB(t)
	dir := filepath.Join(wh, "d", "t")
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id BIGINT)")
	for _, v := range []string{"1", "2", "3"} {
		exec(t, db, "INSERT INTO d.t VALUES ("+v+")")
	}
	if got := queryStrings(t, db, "CALL system.rewrite_manifests('d.t')"); !reflect.DeepEqual(got, [][]string{{"3", "1"}}) {
		t.Fatalf("rewrite_manifests = %v, want 3 1", got)
	}
	got := queryStrings(t, db, "CALL system.expire_snapshots(table => 'd.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
	if want := [][]string{{"0", "0", "0", "3", "3", "0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("expire_snapshots = %v, want %v", got, want)
	}
	after := tableFiles(t, dir)
	for _, f := range liveFiles(t, db, "d.t", dir) {
		if !after[f] {
			t.Errorf("%s, named by the table's metadata, is gone", f)
		}
	}
	if n := len(tableFiles(t, filepath.Join(dir, "data"))); n != 3 {
		t.Errorf("%d data files on disk, want 3", n)
	}
	if n := oneInt(t, db, "SELECT SUM(id) FROM d.t"); n != 6 {
		t.Errorf("SUM(id) = %d after expiry, want 6", n)
	}
}

// With partial progress each chunk of groups commits on its own: two
// partitions, two groups, max-commits 2, two replace snapshots.
func TestRewriteDataFilesPartialProgress(t *testing.T) {
	db, _ := openDB(t)
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.p (id BIGINT, cat STRING) PARTITIONED BY (cat)")
	exec(t, db, "INSERT INTO d.p VALUES (1, 'a'), (2, 'b')")
	exec(t, db, "INSERT INTO d.p VALUES (3, 'a'), (4, 'b')")
	bytes := oneInt(t, db, "SELECT SUM(file_size_in_bytes) FROM d.p.files")
	got := queryStrings(t, db, "CALL system.rewrite_data_files(table => 'd.p', options => map('min-input-files', '2', 'partial-progress.enabled', 'true', 'partial-progress.max-commits', '2'))")
	if want := [][]string{{"4", "2", strconv.FormatInt(bytes, 10), "0", "0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("rewrite_data_files = %v, want %v", got, want)
	}
	if got := queryStrings(t, db, "SELECT operation, COUNT(*) FROM d.p.snapshots GROUP BY operation ORDER BY operation"); !reflect.DeepEqual(got, [][]string{{"append", "2"}, {"replace", "2"}}) {
		t.Errorf("snapshots %v, want two appends and two replaces", got)
	}
	if got := queryStrings(t, db, "SELECT cat, COUNT(*), SUM(id) FROM d.p GROUP BY cat ORDER BY cat"); !reflect.DeepEqual(got, [][]string{{"a", "2", "4"}, {"b", "2", "6"}}) {
		t.Errorf("rows %v after the rewrite", got)
	}
}

// The outputs of the snapshot procedures: rollback's previous and current
// snapshot ids, and ancestors_of's lineage, newest first.
func TestSnapshotProcedureOutputs(t *testing.T) {
	db, _ := openDB(t)
	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id BIGINT)")
	exec(t, db, "INSERT INTO d.t VALUES (1)")
	exec(t, db, "INSERT INTO d.t VALUES (2)")
	s1 := oneInt(t, db, "SELECT snapshot_id FROM d.t.snapshots WHERE parent_id IS NULL")
	s2 := oneInt(t, db, "SELECT snapshot_id FROM d.t.snapshots WHERE parent_id = ?", s1)
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	if got := queryStrings(t, db, "CALL system.rollback_to_snapshot('d.t', ?)", s1); !reflect.DeepEqual(got, [][]string{{id(s2), id(s1)}}) {
		t.Errorf("rollback_to_snapshot = %v, want [%d %d]", got, s2, s1)
	}
	if got := queryStrings(t, db, "CALL system.set_current_snapshot('d.t', ?)", s2); !reflect.DeepEqual(got, [][]string{{id(s1), id(s2)}}) {
		t.Errorf("set_current_snapshot = %v, want [%d %d]", got, s1, s2)
	}
	ts := func(s int64) string {
		return id(oneInt(t, db, "SELECT CAST(UNIX_TIMESTAMP(committed_at) * 1000 AS SIGNED) FROM d.t.snapshots WHERE snapshot_id = ?", s))
	}
	got := queryStrings(t, db, "CALL system.ancestors_of('d.t')")
	if want := [][]string{{id(s2), ts(s2)}, {id(s1), ts(s1)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ancestors_of = %v, want %v", got, want)
	}
	if got := queryStrings(t, db, "CALL system.ancestors_of(snapshot_id => ?, table => 'd.t')", s1); !reflect.DeepEqual(got, [][]string{{id(s1), ts(s1)}}) {
		t.Errorf("ancestors_of(s1) = %v", got)
	}
}

package procedures_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// A warehouse served through icesql serve's S3 API names its files two
// ways: file://<folder>/KEY (written before it was served, or by engines
// that open the folder) and s3://BUCKET/KEY (written since, by icesql and
// by engines writing through the S3 API). Maintenance must take both for
// the files they are: expire_snapshots deletes the s3:// files only expired
// snapshots reached, and remove_orphan_files deletes none of the s3:// files
// a snapshot names.
func TestMaintenanceOnBucketNamedFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := engine.Open(ctx, engine.Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	tdir := filepath.Join(dir, "d", "t")
	// rel is the file a location names, relative to the table's folder.
	rel := func(loc string) string {
		t.Helper()
		p := strings.TrimPrefix(loc, "file://")
		if key, ok := strings.CutPrefix(loc, "s3://lake/"); ok {
			p = filepath.Join(dir, key)
		}
		r, err := filepath.Rel(tdir, p)
		if err != nil || strings.HasPrefix(r, "..") {
			t.Fatalf("%s is outside %s", loc, tdir)
		}
		return r
	}
	live := func() map[string]bool {
		out := map[string]bool{}
		for _, q := range []string{"SELECT manifest_list FROM d.t.snapshots", "SELECT path FROM d.t.all_manifests", "SELECT file_path FROM d.t.all_files"} {
			for _, r := range queryStrings(t, db, q) {
				out[rel(r[0])] = true
			}
		}
		return out
	}

	exec(t, db, "CREATE DATABASE d")
	exec(t, db, "CREATE TABLE d.t (id BIGINT)")
	exec(t, db, "INSERT INTO d.t VALUES (1)") // s1: file:// names
	if err := e.Catalog().(*storage.Warehouse).ServeBucket(ctx, "lake", true); err != nil {
		t.Fatal(err)
	}
	exec(t, db, "INSERT INTO d.t VALUES (2)") // s2: s3://lake/ names
	exec(t, db, "INSERT INTO d.t VALUES (3)") // s3: s3://lake/ names
	var s3Named int64
	for _, r := range queryStrings(t, db, "SELECT file_path FROM d.t.files UNION ALL SELECT manifest_list FROM d.t.snapshots") {
		if strings.HasPrefix(r[0], "s3://lake/d/t/") {
			s3Named++
		}
	}
	if s3Named != 4 { // two data files, two manifest lists
		t.Fatalf("%d files written since the bucket was served are named s3://lake/..., want 4", s3Named)
	}

	// Every file is four days old, and one file no metadata names lies among them.
	orphan := filepath.Join(tdir, "data", "00000-9-lost.parquet")
	if err := os.WriteFile(orphan, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-96 * time.Hour)
	for f := range tableFiles(t, tdir) {
		if err := os.Chtimes(filepath.Join(tdir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	got := queryStrings(t, db, "CALL system.remove_orphan_files(table => 'd.t')")
	if want := [][]string{{"file://" + orphan}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("remove_orphan_files = %v, want only %v", got, want)
	}
	// The s3:// spelling of the table's folder is the folder
	got = queryStrings(t, db, "CALL system.remove_orphan_files(table => 'd.t', location => 's3://lake/d/t/data', dry_run => true)")
	if len(got) != 0 {
		t.Fatalf("remove_orphan_files under s3://lake/d/t/data lists %v, want none", got)
	}
	files := tableFiles(t, tdir)
	for f := range live() {
		if !files[f] {
			t.Errorf("%s, named by the table's metadata, is gone after remove_orphan_files", f)
		}
	}
	if got := queryStrings(t, db, "SELECT id FROM d.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"2"}, {"3"}}) {
		t.Fatalf("table reads %v after remove_orphan_files, want 1, 2, 3", got)
	}

	// Roll s3 back and expire all but s2: s3's data file and manifest
	// (s3://), and the manifest lists of s1 (file://) and s3 (s3://) go.
	s1 := oneInt(t, db, "SELECT snapshot_id FROM d.t.snapshots WHERE parent_id IS NULL")
	s2 := oneInt(t, db, "SELECT snapshot_id FROM d.t.snapshots WHERE parent_id = ?", s1)
	lists := map[int64]string{}
	for _, r := range queryStrings(t, db, "SELECT snapshot_id, manifest_list FROM d.t.snapshots") {
		var id int64
		for _, c := range r[0] {
			id = id*10 + int64(c-'0')
		}
		lists[id] = r[1]
	}
	exec(t, db, "CALL system.rollback_to_snapshot('d.t', ?)", s2)
	doomed := []string{rel(lists[s1])}
	for id, l := range lists {
		if id != s1 && id != s2 {
			doomed = append(doomed, rel(l))
		}
	}
	before := tableFiles(t, tdir)
	got = queryStrings(t, db, "CALL system.expire_snapshots(table => 'd.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
	if want := [][]string{{"1", "0", "0", "1", "2", "0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("expire_snapshots = %v, want %v", got, want)
	}
	after := tableFiles(t, tdir)
	for _, f := range doomed {
		if after[f] {
			t.Errorf("%s, a manifest list only expired snapshots named, is still on disk", f)
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
	for f := range live() {
		if !after[f] {
			t.Errorf("%s, named by the table's metadata, is gone after expire_snapshots", f)
		}
	}
	if got := queryStrings(t, db, "SELECT id FROM d.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"2"}}) {
		t.Errorf("table reads %v after expiry, want 1 and 2", got)
	}
}

package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestMetadataFileRetention checks Iceberg's default for old metadata files
// (kept: another engine committing to the same table may still need them)
// and the explicit opt-in, which keeps only
// write.metadata.previous-versions-max of them.
func TestMetadataFileRetention(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	for _, q := range []string{
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE kept (a INT) TBLPROPERTIES ('write.metadata.previous-versions-max' = '2')",
		"CREATE TABLE pruned (a INT) TBLPROPERTIES ('write.metadata.previous-versions-max' = '2', " +
			"'write.metadata.delete-after-commit.enabled' = 'true')",
	} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tbl := range []string{"kept", "pruned"} {
		for i := range 5 {
			if _, err := conn.ExecContext(context.Background(), "INSERT INTO "+tbl+" VALUES (?)", i); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "db", "kept", "metadata", "v6.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Properties map[string]string }
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	if v, set := meta.Properties["write.metadata.delete-after-commit.enabled"]; set {
		t.Errorf("a table icesql creates has write.metadata.delete-after-commit.enabled=%s; Iceberg's default is to keep metadata files", v)
	}
	for tbl, want := range map[string]int{"kept": 6, "pruned": 3} {
		files, err := filepath.Glob(filepath.Join(dir, "db", tbl, "metadata", "v*.metadata.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != want {
			t.Errorf("%s: %d metadata files after 6 commits, want %d: %v", tbl, len(files), want, files)
		}
		if _, err := os.Stat(filepath.Join(dir, "db", tbl, "metadata", "v6.metadata.json")); err != nil {
			t.Errorf("%s: the newest metadata file: %v", tbl, err)
		}
		var n int
		if err := conn.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+tbl).Scan(&n); err != nil || n != 5 {
			t.Errorf("%s: COUNT(*) = %d, %v; want 5", tbl, n, err)
		}
	}
}

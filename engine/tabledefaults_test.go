package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOldMetadataFilesAreDeleted checks that a table icesql creates keeps
// only write.metadata.previous-versions-max old metadata files: every file
// holds the whole snapshot list, and keeping all of them grows the folder
// with the square of the number of commits.
func TestOldMetadataFilesAreDeleted(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	for _, q := range []string{
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE t (a INT) TBLPROPERTIES ('write.metadata.previous-versions-max' = '2')",
		"INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)",
		"INSERT INTO t VALUES (4)", "INSERT INTO t VALUES (5)",
	} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "db", "t", "metadata", "v*.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("%d metadata files after 6 commits with previous-versions-max 2, want 3: %v", len(files), files)
	}
	if _, err := os.Stat(filepath.Join(dir, "db", "t", "metadata", "v6.metadata.json")); err != nil {
		t.Fatalf("the newest metadata file: %v", err)
	}
	var n int
	if err := conn.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 5 {
		t.Fatalf("COUNT(*) = %d, %v; want 5", n, err)
	}
}

package sqltests

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestServerFilesStayInFolder runs LOAD DATA INFILE, SELECT ... INTO
// OUTFILE / DUMPFILE and LOAD_FILE over the MySQL wire against paths that
// leave <warehouse>/.icesql/files: a sibling folder sharing its name as a
// prefix, a symbolic link inside it leading out (to a folder and to a
// file), and ".." steps. Each must fail with 1290 as in MySQL (LOAD_FILE
// answers NULL), write nothing and read nothing; the folder itself works.
func TestServerFilesStayInFolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wh := filepath.Join(dir, "w")
	files := filepath.Join(wh, ".icesql", "files")
	sibling := files + "-x"
	out := filepath.Join(dir, "out")
	writeFile(t, filepath.Join(sibling, "secret.csv"), "7,sibling\n")
	writeFile(t, filepath.Join(out, "secret.csv"), "8,outside\n")
	writeFile(t, filepath.Join(files, "ok.csv"), "1,inside\n")
	if err := os.Symlink(out, filepath.Join(files, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "secret.csv"), filepath.Join(files, "secret.csv")); err != nil {
		t.Fatal(err)
	}
	conn := wireConn(t, wh)
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id BIGINT, s VARCHAR(20))"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	before := treeOutside(t, dir, wh)

	writes := []string{
		filepath.Join(sibling, "o.csv"),
		filepath.Join(files, "link", "o.csv"),
		filepath.Join(files, "..", "files-x", "o.csv"),
		filepath.Join(files, "link") + "/../o.csv",
		files + "/sub/../../files-x/o.csv",
		filepath.Join(dir, "o.csv"),
	}
	for _, p := range writes {
		for _, q := range []string{
			"SELECT id, s FROM d.t INTO OUTFILE " + sqlString(p),
			"SELECT 'x' INTO DUMPFILE " + sqlString(p),
		} {
			_, err := conn.ExecContext(ctx, q)
			if errorCode(err) != 1290 {
				t.Errorf("%s: got %v, want error 1290", q, err)
			}
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s wrote %s", q, p)
				os.Remove(p)
			}
		}
	}
	reads := []string{
		filepath.Join(sibling, "secret.csv"),
		filepath.Join(files, "secret.csv"), // a link to a file outside
		filepath.Join(files, "link", "secret.csv"),
		filepath.Join(files, "..", "files-x", "secret.csv"),
	}
	for _, p := range reads {
		q := "LOAD DATA INFILE " + sqlString(p) + " INTO TABLE d.t FIELDS TERMINATED BY ','"
		if _, err := conn.ExecContext(ctx, q); errorCode(err) != 1290 {
			t.Errorf("%s: got %v, want error 1290", q, err)
		}
		var got []byte
		if err := conn.QueryRowContext(ctx, "SELECT LOAD_FILE("+sqlString(p)+")").Scan(&got); err != nil || got != nil {
			t.Errorf("LOAD_FILE(%s) = %q, %v; want NULL", p, got, err)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("after refused loads d.t has %d rows (%v), want 0", n, err)
	}
	if after := treeOutside(t, dir, wh); !sameTree(before, after) {
		t.Errorf("files outside the warehouse changed:\n%s", diffTrees(before, after))
	}

	// The folder itself serves all four.
	q := "LOAD DATA INFILE " + sqlString(filepath.Join(files, "ok.csv")) + " INTO TABLE d.t FIELDS TERMINATED BY ','"
	if _, err := conn.ExecContext(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	q = "SELECT id, s FROM d.t INTO OUTFILE " + sqlString(filepath.Join(files, "sub.csv"))
	if _, err := conn.ExecContext(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var got string
	if err := conn.QueryRowContext(ctx, "SELECT LOAD_FILE("+sqlString(filepath.Join(files, "sub.csv"))+")").Scan(&got); err != nil || got != "1\tinside\n" {
		t.Fatalf("LOAD_FILE of the OUTFILE = %q, %v", got, err)
	}
}

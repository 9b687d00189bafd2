package sqltests

import (
	"context"
	gosql "database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestWarehousePathKeptAsGiven: a warehouse whose path holds a space and
// non-ASCII characters keeps every file of its tables under that path, and
// every location the metadata records (data and delete files, manifests,
// manifest lists) names the file where it is, unescaped, as Java Iceberg
// writes it: iceberg-go escaped the path ("my%20warehouse") and wrote the
// files into a folder of that name beside the one the user gave.
func TestWarehousePathKeptAsGiven(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	wh := filepath.Join(parent, "my warehouse", "Straße 名")
	e, err := engine.Open(ctx, engine.Config{Warehouse: wh})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := pinnedConn(t, gosql.OpenDB(e.Connector()))
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT, s STRING) PARTITIONED BY (s) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
		"INSERT INTO d.t VALUES (1, 'it''s'), (2, 'a b'), (3, 'a b'), (4, 'x')",
		"DELETE FROM d.t WHERE id = 3",
		"CREATE TABLE d.v3 (id INT) TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')",
		"INSERT INTO d.v3 VALUES (1), (2), (3)",
		"DELETE FROM d.v3 WHERE id = 2",
		"CALL system.rewrite_data_files(table => 'd.t', options => map('rewrite-all', 'true'))",
		"CALL system.expire_snapshots(table => 'd.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
	} {
		mustExec(t, c, q)
	}
	for q, want := range map[string]string{
		"SELECT GROUP_CONCAT(id ORDER BY id) FROM d.t":  "1,2,4",
		"SELECT GROUP_CONCAT(id ORDER BY id) FROM d.v3": "1,3",
	} {
		var got string
		if err := c.QueryRowContext(ctx, q).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", q, got, err, want)
		}
	}
	// Every location the metadata tables show starts with the warehouse
	// path as given, and the file is there.
	prefix := "file://" + filepath.ToSlash(wh) + "/"
	for _, q := range []string{
		"SELECT file_path FROM d.t.all_files", "SELECT file_path FROM d.v3.all_files",
		"SELECT path FROM d.t.all_manifests", "SELECT path FROM d.v3.all_manifests",
		"SELECT manifest_list FROM d.t.snapshots", "SELECT manifest_list FROM d.v3.snapshots",
	} {
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		n := 0
		for rows.Next() {
			var loc string
			if err := rows.Scan(&loc); err != nil {
				t.Fatal(err)
			}
			n++
			if !strings.HasPrefix(loc, prefix) {
				t.Errorf("%s: %s is not under %s", q, loc, prefix)
			} else if _, err := os.Stat(strings.TrimPrefix(loc, "file://")); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
		rows.Close()
		if n == 0 {
			t.Errorf("%s: no rows", q)
		}
	}
	// No live file looks orphaned.
	for _, tb := range []string{"d.t", "d.v3"} {
		rows, err := c.QueryContext(ctx, "CALL system.remove_orphan_files(table => '"+tb+"', older_than => TIMESTAMP '2999-01-01 00:00:00', dry_run => true)")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var loc string
			rows.Scan(&loc)
			t.Errorf("%s: remove_orphan_files would delete %s", tb, loc)
		}
		rows.Close()
	}
	// Nothing was written beside the warehouse.
	filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(p, wh+string(filepath.Separator)) {
			t.Errorf("a file outside the warehouse: %s", p)
		}
		return nil
	})
}

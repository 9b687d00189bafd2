package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// LOAD DATA LOCAL implies IGNORE, and for IGNORE go-mysql-server completes
// a "statement" after every row. Each statement must still write its rows
// as one set of files in one snapshot, not a file per row (issue 19).
func TestLoadDataLocalWritesOneFile(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "rows.csv")
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "%d,name%d,%d.5\n", i, i, i)
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := wireServer(t, openEngine(t, engine.Config{Warehouse: filepath.Join(dir, "w")}))
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.AllowAllFiles = "root", "tcp", addr, true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT NOT NULL, name STRING, x DOUBLE)",
		"LOAD DATA LOCAL INFILE '"+csv+"' INTO TABLE d.t FIELDS TERMINATED BY ','",
		// A row IGNORE skips (NULL into NOT NULL becomes 0 with a warning,
		// a bad number a warning) keeps the others in the same files.
		"INSERT IGNORE INTO d.t VALUES (5000, 'a', 1), (NULL, 'b', 2), (5001, 'c', 3)",
	)
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"SELECT COUNT(*) FROM d.t", 2003},
		{"SELECT COUNT(*) FROM d.t.files", 2},
		{"SELECT COUNT(*) FROM d.t.snapshots", 2},
		{"SELECT SUM(id) FROM d.t WHERE id < 2000", 1999 * 2000 / 2},
		{"SELECT COUNT(*) FROM d.t WHERE id IN (0, 5000, 5001)", 4}, // 0 twice: the row and the NULL set to 0
	} {
		var got int64
		if err := conn.QueryRowContext(context.Background(), c.query).Scan(&got); err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got != c.want {
			t.Errorf("%s = %d, want %d", c.query, got, c.want)
		}
	}
}

// A LOAD DATA that fails after writing files leaves no file behind and the
// table as it was (issue 19: a failed load deletes what it wrote).
func TestFailedLoadLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	files := filepath.Join(dir, ".icesql", "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	const rows = 300_000
	for i := range rows {
		if i == rows-10 {
			b.WriteString("not a number,x\n")
			continue
		}
		fmt.Fprintf(&b, "%d,name%d\n", i, i)
	}
	csv := filepath.Join(files, "bad.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	conn := openConn(t, engine.Config{Warehouse: dir})
	mustExec(t, conn,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id BIGINT, name STRING)",
		"INSERT INTO d.t VALUES (1, 'kept')",
	)
	data := filepath.Join(dir, "d", "t", "data")
	before := countFiles(t, data)
	_, err := conn.ExecContext(context.Background(), "LOAD DATA INFILE '"+csv+"' INTO TABLE d.t FIELDS TERMINATED BY ','")
	if err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Fatalf("LOAD DATA of a bad line: %v, want an error naming the value", err)
	}
	if after := countFiles(t, data); after != before {
		t.Errorf("data files: %d before the failed load, %d after", before, after)
	}
	if n := queryInt(t, conn, "SELECT COUNT(*) FROM d.t"); n != 1 {
		t.Errorf("rows after the failed load: %d, want 1", n)
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A LOAD DATA LOCAL file larger than 256 packets (go-sql-driver sends 16 KiB
// a packet): the packets' sequence ids wrap to 0, where the wire guard
// must not take the file's bytes for a command (it did: the load failed
// with "client wrote to connection while a query was executing").
func TestLoadDataLocalManyPackets(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "rows.csv")
	var b strings.Builder
	const rows = 200_000 // about 6 MB: 380 packets
	for i := range rows {
		fmt.Fprintf(&b, "%d,name%d,%d.25\n", i, i, i%1000)
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := wireServer(t, openEngine(t, engine.Config{Warehouse: filepath.Join(dir, "w")}))
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.AllowAllFiles = "root", "tcp", addr, true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT NOT NULL, name STRING, x DOUBLE)",
		"LOAD DATA LOCAL INFILE '"+csv+"' INTO TABLE d.t FIELDS TERMINATED BY ','",
	)
	// The connection goes on: the next command is read as one.
	if n := queryInt(t, conn, "SELECT COUNT(*) FROM d.t"); n != rows {
		t.Errorf("%d rows loaded, want %d", n, rows)
	}
	if n := queryInt(t, conn, "SELECT SUM(id) FROM d.t"); n != rows*(rows-1)/2 {
		t.Errorf("SUM(id) = %d, want %d", n, rows*(rows-1)/2)
	}
	if n := queryInt(t, conn, "SELECT COUNT(*) FROM d.t.snapshots"); n != 1 {
		t.Errorf("%d snapshots, want 1", n)
	}
}

package procedures_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// racingStore loses the next `lose` commits of every table: another
// process has just created the metadata version icesql is creating (a copy
// of the version before it), so the create fails as a lost race does.
type racingStore struct {
	storage.LocalStore
	mu   *sync.Mutex
	lose *int
}

var metadataVersion = regexp.MustCompile(`/v(\d+)\.metadata\.json$`)

func (s racingStore) CreateExclusive(ctx context.Context, loc string, data []byte) error {
	s.mu.Lock()
	m := metadataVersion.FindStringSubmatch(loc)
	race := m != nil && *s.lose > 0
	if race {
		*s.lose--
	}
	s.mu.Unlock()
	if race {
		v, _ := strconv.Atoi(m[1])
		prev, err := s.LocalStore.ReadFile(ctx, strings.TrimSuffix(loc, m[0])+fmt.Sprintf("/v%d.metadata.json", v-1))
		if err != nil {
			return err
		}
		if err := s.LocalStore.CreateExclusive(ctx, loc, prev); err != nil {
			return err
		}
	}
	return s.LocalStore.CreateExclusive(ctx, loc, data)
}

// TestProceduresDeleteWhatFailedAttemptsWrote runs the procedures that
// write files while their commits lose races to another process: a
// procedure that retries and succeeds, and one that fails, leave no file
// in the table's folder that the table does not reference (data, delete,
// manifest and manifest list files are counted on disk).
func TestProceduresDeleteWhatFailedAttemptsWrote(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var mu sync.Mutex
	lose := 0
	e, err := engine.Open(ctx, engine.Config{Warehouse: dir, Store: racingStore{mu: &mu, lose: &lose}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	db := sql.OpenDB(e.Connector())
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id BIGINT, p INT) PARTITIONED BY (p) TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')",
		"INSERT INTO d.t VALUES (1, 1), (2, 1), (3, 2)", "INSERT INTO d.t VALUES (4, 1), (5, 2)", "INSERT INTO d.t VALUES (6, 1)",
		"DELETE FROM d.t WHERE id = 1", "DELETE FROM d.t WHERE id = 4", "DELETE FROM d.t WHERE id = 5",
		"CREATE TABLE d.src (id BIGINT)", "INSERT INTO d.src VALUES (7), (8)", "CREATE TABLE d.u (id BIGINT)",
	} {
		exec(t, conn, q)
	}
	if o := orphans(t, conn, "d.t", filepath.Join(dir, "d", "t")); len(o) != 0 {
		t.Fatalf("orphans before any procedure: %v", o)
	}
	addFiles := "CALL system.add_files(table => 'd.u', source_table => '`parquet`.`" + filepath.Join(dir, "d", "src", "data") + "`')"
	for _, c := range []struct {
		call  string
		table string
		lose  int
		fails bool // the procedure does not retry: it fails with 1213
		sum   int  // SUM(id) after the call
	}{
		{"CALL system.rewrite_position_delete_files(table => 'd.t', options => map('rewrite-all', 'true'))", "t", 2, false, 11},
		{"CALL system.rewrite_data_files(table => 'd.t', options => map('rewrite-all', 'true'))", "t", 1, true, 11},
		{"CALL system.rewrite_data_files(table => 'd.t', options => map('rewrite-all', 'true', 'partial-progress.enabled', 'true'))", "t", 1, false, 11},
		{"CALL system.rewrite_manifests(table => 'd.t')", "t", 2, false, 11},
		{addFiles, "u", 2, false, 15},
	} {
		mu.Lock()
		lose = c.lose
		mu.Unlock()
		_, err := conn.ExecContext(ctx, c.call)
		mu.Lock()
		lose = 0
		mu.Unlock()
		switch {
		case c.fails && errorCode(err) != 1213:
			t.Errorf("%s losing its commit: got %v, want error 1213", c.call, err)
		case !c.fails && err != nil:
			t.Errorf("%s after %d lost races: %v", c.call, c.lose, err)
		}
		var sum int
		if err := conn.QueryRowContext(ctx, "SELECT SUM(id) FROM d."+c.table).Scan(&sum); err != nil || sum != c.sum {
			t.Errorf("%s: SUM(id) = %d (%v), want %d", c.call, sum, err, c.sum)
		}
		if o := orphans(t, conn, "d."+c.table, filepath.Join(dir, "d", c.table)); len(o) != 0 {
			t.Errorf("%s left %d files no commit references: %v", c.call, len(o), o)
		}
	}
}

// orphans lists the data, delete, manifest and manifest list files under
// dir (the folder of table tbl) that no snapshot of tbl references.
func orphans(t *testing.T, conn *sql.Conn, tbl, dir string) []string {
	t.Helper()
	referenced := map[string]bool{}
	for _, q := range []string{
		"SELECT file_path FROM " + tbl + ".all_files", "SELECT path FROM " + tbl + ".all_manifests", "SELECT manifest_list FROM " + tbl + ".snapshots",
	} {
		rows, err := conn.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			referenced[filepath.Clean(strings.TrimPrefix(strings.TrimPrefix(p, "file://"), "file:"))] = true
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".parquet", ".avro", ".puffin":
			if !referenced[p] {
				out = append(out, strings.TrimPrefix(p, dir))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// errorCode is the MySQL code of err (the embedded driver returns
// *mysql.SQLError), 0 for none and -1 for an error without a code.
func errorCode(err error) int {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se.Num
	}
	if err != nil {
		return -1
	}
	return 0
}

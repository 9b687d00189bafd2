package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// The decoded-file cache (engine/filecache.go, pushdown/filecache.go) must
// change no answer. Each check below runs its queries with the cache off,
// then on three times (the row path decodes and keeps files at their first
// read, the vector path at their second; later reads take them from
// memory), on the row path and the vector path, and compares the
// rows with their Go and column types, over every table shape icesql writes:
// format v2 with position deletes, v3 with deletion vectors, columns added,
// dropped, renamed and promoted, partition specs changed, an older snapshot
// and a branch. Fixture tables other engines wrote (equality deletes among
// them) are compared by sqltests' TestFixturesFileCache.

// fileCacheQueries are asked of every table; {t} is the table reference.
var fileCacheQueries = []string{
	"SELECT * FROM {t}",
	"SELECT id FROM {t} WHERE id > 7",
	"SELECT COUNT(*), SUM(id), MIN(id), MAX(id) FROM {t}",
	"SELECT s, COUNT(*) FROM {t} GROUP BY s",
	"SELECT a.id, b.s FROM {t} a JOIN {t} b ON a.id = b.id WHERE a.id < 20",
	"SELECT id FROM {t} WHERE id IN (SELECT id + 1 FROM {t})",
}

// sameWithFileCache runs each query over ref with the cache off and on, on
// both paths, and reports differences.
func sameWithFileCache(t *testing.T, conn *sql.Conn, ref string, queries ...string) {
	t.Helper()
	if len(queries) == 0 {
		queries = fileCacheQueries
	}
	for _, vec := range []string{"OFF", "ON"} {
		mustExec(t, conn, "SET icesql_vectorize = "+vec)
		for _, q := range queries {
			q = strings.ReplaceAll(q, "{t}", ref)
			mustExec(t, conn, "SET icesql_file_cache = OFF")
			want, wantErr := resultRows(conn, q)
			mustExec(t, conn, "SET icesql_file_cache = ON")
			for run := range 3 {
				got, err := resultRows(conn, q)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || got != want {
					t.Errorf("vector %s, run %d with the cache: %s\n  cached   %s (%v)\n  uncached %s (%v)", vec, run+1, q, got, err, want, wantErr)
				}
			}
		}
	}
	mustExec(t, conn, "SET icesql_vectorize = ON")
}

func snapshotIDs(t *testing.T, conn *sql.Conn, table string) []string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SELECT snapshot_id FROM "+table+".snapshots ORDER BY committed_at, snapshot_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

func TestFileCacheMatchesUncached(t *testing.T) {
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	conn := openConnOn(t, e)
	mustExec(t, conn, "CREATE DATABASE fc", "USE fc")
	inserts := func(table string, from, n, per int) {
		for i := from; i < from+n; i += per {
			var vals []string
			for j := i; j < i+per && j < from+n; j++ {
				s := "NULL"
				if j%5 != 0 {
					s = fmt.Sprintf("'s%d'", j%4)
				}
				vals = append(vals, fmt.Sprintf("(%d, %s, %d.25)", j, s, j%7))
			}
			mustExec(t, conn, "INSERT INTO "+table+" VALUES "+strings.Join(vals, ", "))
		}
	}
	mor := "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read'"
	for _, v := range []string{"2", "3"} {
		name := "mor" + v
		t.Run("format v"+v+" merge-on-read", func(t *testing.T) {
			mustExec(t, conn, fmt.Sprintf("CREATE TABLE %s (id INT, s STRING, x DOUBLE) PARTITIONED BY (bucket(3, id)) TBLPROPERTIES ('format-version' = '%s', %s)", name, v, mor))
			inserts(name, 0, 40, 8)
			sameWithFileCache(t, conn, name)
			// Position deletes (v2) or deletion vectors (v3), then a second
			// delete of the same files (v3: the DVs' union).
			mustExec(t, conn, "DELETE FROM "+name+" WHERE id % 3 = 0")
			sameWithFileCache(t, conn, name)
			mustExec(t, conn, "DELETE FROM "+name+" WHERE id % 4 = 1", "UPDATE "+name+" SET s = 'u' WHERE id % 5 = 2")
			sameWithFileCache(t, conn, name)
			snaps := snapshotIDs(t, conn, "fc."+name)
			// An older snapshot: its files, with the deletes it had.
			sameWithFileCache(t, conn, name+" VERSION AS OF "+snaps[len(snaps)-3])
			sameWithFileCache(t, conn, name+" VERSION AS OF "+snaps[len(snaps)-2])
		})
	}
	t.Run("schema evolution", func(t *testing.T) {
		mustExec(t, conn, "CREATE TABLE ev (id INT, s STRING, f FLOAT, d DECIMAL(9,2))")
		mustExec(t, conn, "INSERT INTO ev VALUES (1, 'a', 1.5, 10.25), (2, NULL, -2.5, NULL)", "INSERT INTO ev VALUES (8, 'b', 0.5, 3.5)")
		sameWithFileCache(t, conn, "ev")
		mustExec(t, conn, "ALTER TABLE ev ADD COLUMN n INT", "INSERT INTO ev VALUES (9, 'c', 2.5, 1.00, 7)")
		sameWithFileCache(t, conn, "ev")
		mustExec(t, conn, "ALTER TABLE ev RENAME COLUMN s TO s2", "INSERT INTO ev VALUES (10, 'd', 3.5, 2.00, 8)")
		sameWithFileCache(t, conn, "ev", "SELECT * FROM {t}", "SELECT s2, COUNT(*) FROM {t} GROUP BY s2", "SELECT id, n FROM {t} WHERE n IS NULL")
		mustExec(t, conn, "ALTER TABLE ev ALTER COLUMN id TYPE BIGINT", "ALTER TABLE ev MODIFY f DOUBLE", "ALTER TABLE ev MODIFY d DECIMAL(12,2)",
			"INSERT INTO ev VALUES (9000000000, 'e', 1e300, 1234567890.12, 9)")
		sameWithFileCache(t, conn, "ev", "SELECT * FROM {t}", "SELECT SUM(id), SUM(f), SUM(d) FROM {t}", "SELECT id FROM {t} WHERE id > 7")
		mustExec(t, conn, "ALTER TABLE ev DROP COLUMN f", "INSERT INTO ev VALUES (11, 'f', 4.00, 10)")
		sameWithFileCache(t, conn, "ev", "SELECT * FROM {t}", "SELECT n, COUNT(*) FROM {t} GROUP BY n")
		// A column dropped and added again under its old name is a new
		// column: the old files hold none of it.
		mustExec(t, conn, "ALTER TABLE ev ADD COLUMN f DOUBLE", "INSERT INTO ev VALUES (12, 'g', 5.00, 11, 0.125)")
		sameWithFileCache(t, conn, "ev", "SELECT * FROM {t}", "SELECT COUNT(f) FROM {t}")
		snaps := snapshotIDs(t, conn, "fc.ev")
		sameWithFileCache(t, conn, "ev VERSION AS OF "+snaps[1], "SELECT * FROM {t}")
	})
	t.Run("partition evolution", func(t *testing.T) {
		mustExec(t, conn, "CREATE TABLE pe (id INT, s STRING, x DOUBLE)")
		inserts("pe", 0, 12, 4)
		mustExec(t, conn, "ALTER TABLE pe ADD PARTITION FIELD bucket(4, id) AS shard")
		inserts("pe", 12, 12, 4)
		mustExec(t, conn, "ALTER TABLE pe ADD PARTITION FIELD s")
		inserts("pe", 24, 12, 6)
		mustExec(t, conn, "ALTER TABLE pe DROP PARTITION FIELD shard")
		inserts("pe", 36, 6, 3)
		sameWithFileCache(t, conn, "pe")
		sameWithFileCache(t, conn, "pe", "SELECT id FROM {t} WHERE s = 's1'", "SELECT s, SUM(x) FROM {t} WHERE s IS NOT NULL GROUP BY s")
	})
	t.Run("branch", func(t *testing.T) {
		mustExec(t, conn, "CREATE TABLE br (id INT, s STRING, x DOUBLE)")
		inserts("br", 0, 10, 5)
		mustExec(t, conn, "ALTER TABLE br CREATE BRANCH b1")
		mustExec(t, conn, "INSERT INTO fc.br.branch_b1 VALUES (100, 'b', 1.0)", "INSERT INTO br VALUES (200, 'm', 2.0)")
		sameWithFileCache(t, conn, "fc.br.branch_b1")
		sameWithFileCache(t, conn, "br")
	})
	hits, misses := e.DecodedFileStats()
	if hits == 0 || misses == 0 {
		t.Errorf("decoded-file cache: %d hits, %d files decoded; the comparisons did not go through it", hits, misses)
	}
	t.Logf("decoded-file cache: %d hits, %d files decoded", hits, misses)
}

// TestFileCacheSeesOtherWriters: a second engine on the same warehouse
// (another icesql process) changes a table the first has cached files of;
// the first reads the new state at its next statement.
func TestFileCacheSeesOtherWriters(t *testing.T) {
	dir := t.TempDir()
	mor := "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"
	a := openConnOn(t, openEngine(t, engine.Config{Warehouse: dir}))
	b := openConnOn(t, openEngine(t, engine.Config{Warehouse: dir}))
	mustExec(t, a, "CREATE DATABASE w", "USE w", "CREATE TABLE t (id INT, s STRING) "+mor,
		"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT INTO t VALUES (4, 'd')")
	q := "SELECT id, s FROM w.t ORDER BY id"
	read := func(conn *sql.Conn) string {
		t.Helper()
		got, err := resultRows(conn, q)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	read(a)
	read(a) // the files are kept
	for _, change := range []string{
		"DELETE FROM w.t WHERE id = 2",             // a deletion vector on a kept file
		"UPDATE w.t SET s = 'x' WHERE id = 3",      // another DV and a new file
		"INSERT INTO w.t VALUES (5, 'e')",          // a new file
		"ALTER TABLE w.t RENAME COLUMN s TO label", // the same files under a new schema
	} {
		mustExec(t, b, change)
		if q == "SELECT id, s FROM w.t ORDER BY id" && strings.Contains(change, "RENAME") {
			q = "SELECT id, label FROM w.t ORDER BY id"
		}
		fresh := openConnOn(t, openEngine(t, engine.Config{Warehouse: dir}))
		if got, want := read(a), read(fresh); got != want {
			t.Errorf("after %s on another engine:\n  got  %s\n  want %s", change, got, want)
		}
	}
}

// TestFileCacheCountsNoFileRead: a statement served from the decoded-file
// cache opens no data file, and says so (files_read, bytes_read), while its
// rows still count in rows_read. The vector path reads a file natively the
// first time, through the cache (decoding it to keep) the second.
func TestFileCacheCountsNoFileRead(t *testing.T) {
	rec := &recorder{}
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0", Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Close() })
	c := wireConn(t, srv.Addr())
	mustExec(t, c, "CREATE DATABASE db", "CREATE TABLE db.t (id INT, s STRING)",
		"INSERT INTO db.t VALUES (1, 'a'), (2, 'b')", "INSERT INTO db.t VALUES (3, 'c')")
	const q = "SELECT SUM(id) FROM db.t WHERE s <> 'x'"
	for run, want := range []int64{2, 2, 0, 0} {
		if got := queryInt(t, c, q); got != 6 {
			t.Fatalf("%s: %d", q, got)
		}
		s := rec.last(t, q).Scan
		if s.FilesPlanned != 2 || s.FilesRead != want || (s.BytesRead > 0) != (want > 0) || s.RowsRead != 3 {
			t.Errorf("run %d: %+v, want 2 files planned, %d read, 3 rows", run+1, s, want)
		}
	}
}

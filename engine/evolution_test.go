package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// dataFiles lists the Parquet files under a table folder with their
// modification times, to show that a statement wrote or rewrote none.
func dataFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = info.ModTime().UnixNano()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEvolutionRewritesNoData runs every schema, partition, sort order and
// property change on a table with rows and checks that none writes a data
// file or a snapshot: they change metadata only.
func TestEvolutionRewritesNoData(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id INT, name VARCHAR(10), amount FLOAT, price DECIMAL(10,2), ts TIMESTAMP, s STRING) PARTITIONED BY (s) TBLPROPERTIES ('format-version' = '1')",
		"INSERT INTO t VALUES (1, 'a', 1.5, 1.25, '2024-01-01 00:00:00', 'x'), (2, 'b', 2.5, 2.5, '2024-01-02 00:00:00', 'y')",
	)
	tableDir := filepath.Join(dir, "db", "t")
	before := dataFiles(t, tableDir)
	if len(before) != 2 {
		t.Fatalf("%d data files after the insert, want 2 (one per partition)", len(before))
	}
	snap := loadWithIcebergGo(t, dir, "db", "t").CurrentSnapshot().SnapshotID

	for _, stmt := range []string{
		"ALTER TABLE t ADD COLUMN c1 INT",
		"ALTER TABLE t ADD COLUMN c2 VARCHAR(5) FIRST",
		"ALTER TABLE t ADD COLUMNS (c3 INT, c4 STRING)",
		"ALTER TABLE t DROP COLUMN c1",
		"ALTER TABLE t DROP COLUMNS (c3)",
		"ALTER TABLE t RENAME COLUMN c4 TO c5",
		"ALTER TABLE t CHANGE COLUMN c5 c6 LONGTEXT",
		"ALTER TABLE t ALTER COLUMN id TYPE BIGINT",
		"ALTER TABLE t MODIFY COLUMN amount DOUBLE",
		"ALTER TABLE t ALTER COLUMN price TYPE DECIMAL(20,2)",
		"ALTER TABLE t MODIFY name VARCHAR(50) AFTER price",
		"ALTER TABLE t ALTER COLUMN ts FIRST",
		"ALTER TABLE t ALTER COLUMN ts AFTER id",
		"ALTER TABLE t ALTER COLUMN name COMMENT 'who'",
		"ALTER TABLE t ADD PARTITION FIELD days(ts)",
		"ALTER TABLE t ADD PARTITION FIELD bucket(4, id) AS shard",
		"ALTER TABLE t REPLACE PARTITION FIELD ts_day WITH months(ts)",
		"ALTER TABLE t DROP PARTITION FIELD shard",
		"ALTER TABLE t WRITE ORDERED BY id DESC",
		"ALTER TABLE t WRITE UNORDERED",
		"ALTER TABLE t SET TBLPROPERTIES ('k' = 'v')",
		"ALTER TABLE t UNSET TBLPROPERTIES ('k')",
		"ALTER TABLE t COMMENT = 'c'",
		"ALTER TABLE t SET TBLPROPERTIES ('format-version' = '2')",
	} {
		mustExec(t, conn, stmt)
		if after := dataFiles(t, tableDir); !equalFiles(before, after) {
			t.Fatalf("%s changed the data files:\nbefore %v\nafter  %v", stmt, before, after)
		}
		if got := loadWithIcebergGo(t, dir, "db", "t").CurrentSnapshot().SnapshotID; got != snap {
			t.Fatalf("%s made snapshot %d", stmt, got)
		}
	}
	if got := queryString(t, conn, "SELECT CONCAT(id, ':', name, ':', amount, ':', price) FROM t WHERE id = 2"); got != "2:b:2.5:2.50" {
		t.Errorf("row 2 reads %q after the changes", got)
	}
}

func equalFiles(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestPartitionedWriteFiles checks the layout of a partitioned INSERT: one
// file per partition for a statement, however its rows are ordered, and more
// only once a partition's file passes write.target-file-size-bytes.
func TestPartitionedWriteFiles(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	// 3 regions × 5 days, rows interleaved so that every batch holds every
	// partition.
	mustExec(t, conn,
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id BIGINT, region STRING, ts TIMESTAMP) PARTITIONED BY (region, days(ts))",
		"INSERT INTO t WITH RECURSIVE seq (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 999), "+
			"ids (n) AS (SELECT a.n * 1000 + b.n FROM seq a, seq b WHERE b.n < 150) "+
			"SELECT n, ELT(n % 3 + 1, 'us', 'eu', 'ap'), TIMESTAMPADD(DAY, n % 5, '2024-01-01') FROM ids",
	)
	files := dataFiles(t, filepath.Join(dir, "db", "t"))
	if len(files) != 15 {
		t.Errorf("%d data files for 15 partitions, want 15", len(files))
	}
	dirs := map[string]bool{}
	for f := range files {
		dirs[filepath.Dir(f)] = true
	}
	if len(dirs) != 15 {
		t.Errorf("files in %d partition folders, want 15", len(dirs))
	}
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	if n := tbl.CurrentSnapshot().Summary.Properties["total-data-files"]; n != "15" {
		t.Errorf("total-data-files %s, want 15", n)
	}
	if n := queryString(t, conn, "SELECT COUNT(*) FROM t WHERE region = 'eu' AND ts >= '2024-01-03' AND ts < '2024-01-04'"); n != "10000" {
		t.Errorf("one partition holds %s rows, want 10000", n)
	}

	// A small target size rolls files within a partition.
	mustExec(t, conn,
		"CREATE TABLE big (id BIGINT, region STRING, pad STRING) PARTITIONED BY (region) TBLPROPERTIES ('write.target-file-size-bytes'='1048576')",
		"INSERT INTO big WITH RECURSIVE seq (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 999), "+
			"ids (n) AS (SELECT a.n * 1000 + b.n FROM seq a, seq b WHERE b.n < 300) "+
			"SELECT n, IF(n % 2 = 0, 'a', 'b'), MD5(n) FROM ids",
	)
	perRegion := map[string]int{}
	for f := range dataFiles(t, filepath.Join(dir, "db", "big")) {
		perRegion[filepath.Base(filepath.Dir(f))]++
	}
	t.Logf("files per partition with a 1 MiB target: %v", perRegion)
	if len(perRegion) != 2 || perRegion["region=a"] < 2 || perRegion["region=b"] < 2 {
		t.Errorf("files per partition %v, want several in each of region=a and region=b", perRegion)
	}
}

// TestShowCreateTableRoundTripsLayout runs the DDL SHOW CREATE TABLE prints
// for a partitioned, sorted table and expects the same partitioning and
// sort order.
func TestShowCreateTableRoundTripsLayout(t *testing.T) {
	conn := openDB(t, t.TempDir())
	mustExec(t, conn,
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE orig (id BIGINT, region STRING, ts TIMESTAMP, name VARCHAR(20), d DATE, `select` INT) "+
			"PARTITIONED BY (region, hours(ts), bucket(16, id), truncate(4, name), years(d), `select`)",
		"ALTER TABLE orig WRITE ORDERED BY name DESC NULLS FIRST, days(ts), bucket(4, id) ASC NULLS LAST",
		"ALTER TABLE orig COMMENT = 'sorted'",
		"ALTER TABLE orig ADD PARTITION FIELD truncate(2, region) AS `short region`",
	)
	checkShowCreateRoundTrip(t, conn,
		"PARTITIONED BY (region, hours(ts), bucket(16, id), truncate(4, `name`), years(d), `select`, truncate(2, region) AS `short region`)",
		"WRITE ORDERED BY `name` DESC NULLS FIRST, days(ts) ASC NULLS FIRST, bucket(4, id) ASC NULLS LAST",
		"COMMENT 'sorted'")
}

// TestConcurrentAlters runs ALTER TABLE from several sessions at once, with
// inserts in between: each change reloads and retries after losing a race,
// so every column arrives and every row stays.
func TestConcurrentAlters(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn, "CREATE DATABASE db", "USE db", "CREATE TABLE t (id INT)")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		c := openDB(t, dir)
		wg.Go(func() {
			ctx := context.Background()
			for _, stmt := range []string{
				"USE db",
				fmt.Sprintf("ALTER TABLE t ADD COLUMN c%d INT", i),
				fmt.Sprintf("INSERT INTO t (id) VALUES (%d)", i),
			} {
				if _, err := c.ExecContext(ctx, stmt); err != nil {
					errs <- fmt.Errorf("%s: %w", stmt, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	slices.Sort(cols)
	if len(cols) != n+1 {
		t.Errorf("columns %v, want id and c0..c%d", cols, n-1)
	}
	if got := queryString(t, conn, "SELECT COUNT(*) FROM t"); got != fmt.Sprint(n) {
		t.Errorf("%s rows, want %d", got, n)
	}
}

// TestStagedFilesSurviveConcurrentEvolution commits a transaction's files
// after another session changed the table's schema and partitioning: the
// files keep the spec and field ids they were written with.
func TestStagedFilesSurviveConcurrentEvolution(t *testing.T) {
	dir := t.TempDir()
	a, b := openDB(t, dir), openDB(t, dir)
	mustExec(t, a, "CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id INT, s STRING) PARTITIONED BY (s)",
		"BEGIN",
		"INSERT INTO t VALUES (1, 'x'), (2, 'y')",
	)
	mustExec(t, b, "USE db",
		"ALTER TABLE t ADD PARTITION FIELD bucket(4, id)",
		"ALTER TABLE t ADD COLUMN extra INT FIRST",
		"INSERT INTO t VALUES (30, 3, 'z')",
	)
	mustExec(t, a, "COMMIT")
	if got := queryString(t, a, "SELECT GROUP_CONCAT(CONCAT(id, s, COALESCE(extra, '-')) ORDER BY id) FROM t"); got != "1x-,2y-,3z30" {
		t.Errorf("rows %q, want 1x-,2y-,3z30", got)
	}
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	if n := tbl.CurrentSnapshot().Summary.Properties["total-data-files"]; n != "3" {
		t.Errorf("total-data-files %s, want 3", n)
	}
}

// TestDDLCommitsOpenTransaction checks MySQL's implicit commit: ALTER TABLE
// inside a transaction first commits what the transaction wrote.
func TestDDLCommitsOpenTransaction(t *testing.T) {
	conn := openDB(t, t.TempDir())
	mustExec(t, conn, "CREATE DATABASE db", "USE db", "CREATE TABLE t (id INT)",
		"BEGIN",
		"INSERT INTO t VALUES (1)",
		"ALTER TABLE t ADD COLUMN c INT",
		"INSERT INTO t VALUES (2, 20)",
		"ROLLBACK",
	)
	if got := queryString(t, conn, "SELECT GROUP_CONCAT(CONCAT(id, ':', COALESCE(c, '-'))) FROM t"); got != "1:-" {
		t.Errorf("rows %q, want the insert before the ALTER only (1:-)", got)
	}
}

// TestSortedWriteSortsStatement checks that a statement's rows land in the
// table's sort order across the insert's batches, not batch by batch.
func TestSortedWriteSortsStatement(t *testing.T) {
	conn := openDB(t, t.TempDir())
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE t (id BIGINT) WRITE ORDERED BY id",
		// 200,000 rows in descending order: four insert batches when unsorted.
		"INSERT INTO t WITH RECURSIVE seq (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 999), "+
			"ids (n) AS (SELECT a.n * 1000 + b.n FROM seq a, seq b WHERE a.n < 200) SELECT 199999 - n FROM ids ORDER BY 1 DESC",
	)
	// Read back in file order: one file, sorted from its first row.
	if got := queryString(t, conn, "SELECT GROUP_CONCAT(id) FROM (SELECT id FROM t LIMIT 3) x"); got != "0,1,2" {
		t.Errorf("first rows in file order %q, want 0,1,2", got)
	}
}

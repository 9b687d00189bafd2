package engine_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go/catalog/hadoop"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

func queryString(t *testing.T, conn *sql.Conn, q string) string {
	t.Helper()
	var s string
	if err := conn.QueryRowContext(context.Background(), q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func loadWithIcebergGo(t *testing.T, dir, ns, name string) *table.Table {
	t.Helper()
	cat, err := hadoop.NewCatalog("peer", "file://"+filepath.ToSlash(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{ns, name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestTableProperties checks that the TBLPROPERTIES icesql interprets take
// effect: format version, metadata file retention, Parquet codec and the
// target file size.
func TestTableProperties(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		`CREATE TABLE t (id BIGINT, s STRING) USING iceberg TBLPROPERTIES (
			'format-version'='1',
			'write.metadata.previous-versions-max'='2',
			'write.metadata.delete-after-commit.enabled'='true',
			'write.parquet.compression-codec'='snappy')`,
	)
	for range 5 {
		mustExec(t, conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	}
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	if v := tbl.Metadata().Version(); v != 1 {
		t.Errorf("format version %d, want 1", v)
	}
	metas, _ := filepath.Glob(filepath.Join(dir, "db", "t", "metadata", "v*.metadata.json"))
	// The current version plus at most two previous ones survive.
	if len(metas) != 3 {
		t.Errorf("%d metadata files after 6 commits with previous-versions-max=2 and delete-after-commit: %v", len(metas), metas)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "db", "t", "data", "*.parquet"))
	if len(files) != 5 {
		t.Fatalf("%d data files, want 5", len(files))
	}
	rdr, err := file.OpenParquetFile(files[0], false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	chunk, err := rdr.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	if codec := chunk.Compression().String(); !strings.EqualFold(codec, "snappy") {
		t.Errorf("Parquet codec %s, want snappy", codec)
	}

	// A small target file size splits one statement's rows across files.
	// Files roll between the insert's batches of 64K rows, once the bytes
	// flushed pass the target, so a file may overshoot it by about a batch.
	mustExec(t, conn,
		"CREATE TABLE small (id BIGINT, pad STRING) TBLPROPERTIES ('write.target-file-size-bytes'='1048576')",
		"INSERT INTO small WITH RECURSIVE seq (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 999) "+
			"SELECT a.n * 1000 + b.n, MD5(a.n * 1000 + b.n) FROM seq a, seq b WHERE b.n < 300",
	)
	small, _ := filepath.Glob(filepath.Join(dir, "db", "small", "data", "*.parquet"))
	if len(small) < 2 {
		t.Errorf("%d data files for 300,000 rows (~10 MB) with a 1 MiB target size, want several", len(small))
	}
	if n := queryString(t, conn, "SELECT COUNT(*) FROM small"); n != "300000" {
		t.Errorf("COUNT(*) = %s, want 300000", n)
	}

	if _, err := conn.ExecContext(context.Background(), "CREATE TABLE bad (id INT) TBLPROPERTIES ('format-version'='7')"); err == nil {
		t.Error("format-version 7 accepted")
	}
}

// TestShowCreateTableRoundTrips runs the DDL SHOW CREATE TABLE prints and
// expects the same table again. The key, the recorded indexes and the
// foreign keys are printed as MySQL prints keys and constraints, the key in
// key order; the options follow
// the column list on one line, where MySQL prints ENGINE=, with quotes
// doubled and line breaks escaped as MySQL quotes them, so reflectors that
// read MySQL's form line by line (SQLAlchemy) take them as table options.
func TestShowCreateTableRoundTrips(t *testing.T) {
	conn := openDB(t, t.TempDir())
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		`CREATE TABLE orig (id BIGINT NOT NULL COMMENT 'the id''s', name VARCHAR(20), s STRING, amt DECIMAL(10,2), ts TIMESTAMP, ok BOOLEAN,
		   PRIMARY KEY (name, id), KEY k_ok (ok), UNIQUE KEY u_amt (amt, ts), CONSTRAINT to_other FOREIGN KEY (id) REFERENCES other (oid) ON DELETE CASCADE)
		 USING iceberg COMMENT 'it''s a table'
		 TBLPROPERTIES ('write.parquet.compression-codec'='snappy', 'note'='two\nlines, a \\ and a ''')`,
	)
	ddl := checkShowCreateRoundTrip(t, conn,
		"\n  `id` bigint NOT NULL COMMENT 'the id''s',\n", "`name` varchar(20) NOT NULL,",
		"\n  PRIMARY KEY (`name`,`id`),\n  KEY `k_ok` (`ok`),\n  UNIQUE KEY `u_amt` (`amt`,`ts`),\n  CONSTRAINT `to_other` FOREIGN KEY (`id`) REFERENCES `other` (`oid`) ON DELETE CASCADE\n) USING iceberg COMMENT 'it''s a table' TBLPROPERTIES (",
		`'note' = 'two\nlines, a \\ and a '''`, "'write.parquet.compression-codec' = 'snappy'")
	if lines := strings.Split(ddl, "\n"); !strings.HasPrefix(lines[len(lines)-1], ") USING iceberg ") {
		t.Errorf("the options are not on one line after the column list:\n%s", ddl)
	}
}

// checkShowCreateRoundTrip checks that SHOW CREATE TABLE orig contains each
// of wants and that running its DDL under another name recreates a table
// whose SHOW CREATE TABLE is the same. It returns the DDL.
func checkShowCreateRoundTrip(t *testing.T, conn *sql.Conn, wants ...string) string {
	t.Helper()
	var name, ddl string
	if err := conn.QueryRowContext(context.Background(), "SHOW CREATE TABLE orig").Scan(&name, &ddl); err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(ddl, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, ddl)
		}
	}
	mustExec(t, conn, strings.Replace(ddl, "`orig`", "`dup`", 1))
	var ddl2 string
	if err := conn.QueryRowContext(context.Background(), "SHOW CREATE TABLE dup").Scan(&name, &ddl2); err != nil {
		t.Fatal(err)
	}
	if strings.Replace(ddl, "`orig`", "`dup`", 1) != ddl2 {
		t.Errorf("round trip changed the table:\n%s\nthen\n%s", ddl, ddl2)
	}
	return ddl
}

// TestCreateTableAsSelect checks that CTAS keeps its Spark clauses (which
// go-mysql-server drops from CREATE ... AS SELECT) and that a failing CTAS
// leaves no table behind.
func TestCreateTableAsSelect(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db",
		"USE db",
		"CREATE TABLE src (id BIGINT, s STRING)",
		"INSERT INTO src VALUES (1, 'a'), (2, 'bb'), (3, 'ccc')",
		"CREATE TABLE copied USING iceberg COMMENT 'copied' TBLPROPERTIES ('format-version'='1', 'owner'='ann') AS SELECT * FROM src WHERE id > 1",
	)
	tbl := loadWithIcebergGo(t, dir, "db", "copied")
	if v := tbl.Metadata().Version(); v != 1 {
		t.Errorf("CTAS format version %d, want 1", v)
	}
	if p := tbl.Properties(); p["owner"] != "ann" || p["comment"] != "copied" {
		t.Errorf("CTAS properties %v", p)
	}
	if n := queryString(t, conn, "SELECT COUNT(*) FROM copied"); n != "2" {
		t.Errorf("CTAS copied %s rows, want 2", n)
	}
	// The SELECT fails on its third row: no table, no files.
	if _, err := conn.ExecContext(context.Background(), "CREATE TABLE broken (v VARCHAR(2)) AS SELECT s AS v FROM src"); err == nil {
		t.Fatal("CTAS of a too-long value succeeded")
	}
	if _, err := conn.ExecContext(context.Background(), "SELECT * FROM broken"); err == nil {
		t.Error("the failed CTAS left table broken behind")
	}
	if _, err := os.Stat(filepath.Join(dir, "db", "broken")); !os.IsNotExist(err) {
		t.Errorf("the failed CTAS left its folder: %v", err)
	}
}

// countingStore counts the Parquet data files opened for reading.
type countingStore struct {
	storage.LocalStore
	opens *atomic.Int64
}

type countingIO struct {
	icebergio.LocalFS
	opens *atomic.Int64
}

func (s countingStore) IO() icebergio.IO { return countingIO{opens: s.opens} }

func (c countingIO) Open(name string) (icebergio.File, error) {
	if strings.HasSuffix(name, ".parquet") {
		c.opens.Add(1)
	}
	return c.LocalFS.Open(name)
}

// TestLimitStopsReading checks that a scan stops opening files once the
// client has its rows.
func TestLimitStopsReading(t *testing.T) {
	opens := &atomic.Int64{}
	conn := openConn(t, engine.Config{Warehouse: t.TempDir(), Store: countingStore{opens: opens}})
	mustExec(t, conn, "CREATE DATABASE db", "USE db", "CREATE TABLE t (id BIGINT)")
	const files = 24
	for i := range files {
		mustExec(t, conn, "INSERT INTO t VALUES ("+string(rune('0'+i%10))+")")
	}
	opens.Store(0)
	// COUNT(id), not COUNT(*): COUNT(*) is answered from metadata.
	if n := queryString(t, conn, "SELECT COUNT(id) FROM t"); n != "24" {
		t.Fatalf("COUNT(*) = %s", n)
	}
	if got := opens.Load(); got != files {
		t.Fatalf("a full scan opened %d files, want %d (is the counter wired?)", got, files)
	}
	opens.Store(0)
	queryString(t, conn, "SELECT id FROM t LIMIT 1")
	if got := opens.Load(); got > files/3 {
		t.Errorf("LIMIT 1 opened %d of %d files", got, files)
	}
}

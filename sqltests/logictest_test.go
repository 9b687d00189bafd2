package sqltests

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	gms "github.com/dolthub/go-mysql-server/sql"
	vitessmysql "github.com/dolthub/vitess/go/mysql"
	"github.com/go-sql-driver/mysql"
)

// newConn starts go-mysql-server's in-memory engine on a free loopback port
// and returns one pinned connection to it through go-sql-driver, so the
// runner is tested over the real MySQL wire without icesql's engine.
func newConn(t *testing.T) *sql.Conn {
	t.Helper()
	pro := memory.NewDBProvider()
	engine := sqle.NewDefault(pro)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Handing NewServer a listener avoids its own listen on a fixed address
	// (and its "port in use" probe, which dials the address first).
	srv, err := server.NewServer(server.Config{Protocol: "tcp", Listener: ln}, engine, gms.NewContext, memory.NewSessionBuilder(pro), nil)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Close() })

	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = ln.Addr().String()
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// recorder is a Reporter that keeps failures instead of failing the test.
type recorder struct {
	errs []string
}

func (r *recorder) Helper()                         {}
func (r *recorder) Logf(format string, args ...any) {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

const passingScript = `
# Every kind of record, each written to pass.
statement ok
CREATE DATABASE runner

statement ok
USE runner;

statement ok
CREATE TABLE t (
  id INT PRIMARY KEY,
  name VARCHAR(20),
  score DOUBLE,
  d DATE,
  ts DATETIME(6)
)

statement count 3
INSERT INTO t VALUES
  (1, 'one', 1.5, '2024-01-15', '2024-01-15 10:00:00.5'),
  (2, '', NULL, NULL, NULL),
  (3, 'three words', -0.25, '1000-01-01', '1900-01-01 00:00:00')

statement count 1
UPDATE t SET score = 2.5 WHERE id = 1

# error patterns: number, number and regexp, regexp, anything
statement error 1146
SELECT * FROM nope

statement error 1146 NOPE
SELECT * FROM nope

statement error table not found: nope
SELECT * FROM nope

statement error
SELEC 1

statement error 1007
CREATE DATABASE runner

statement error 1049 nope
USE nope

query error syntax error
SELEC 1

query error
SELECT * FROM nope

# one row per line, columns separated by any whitespace
query ITRTT nosort
SELECT id, name, score, d, ts FROM t ORDER BY id
----
1   one          2.500   2024-01-15  2024-01-15 10:00:00.500000
2   (empty)      NULL    NULL        NULL
3   three words  -0.250  1000-01-01  1900-01-01 00:00:00.000000

# one value per line, expected rows in any order with rowsort
query IT rowsort
SELECT id, name FROM t
----
3
three words
1
one
2
(empty)

query IT rowsort
SELECT id, name FROM t
----
3 three words
2 (empty)
1 one

query I valuesort
SELECT id FROM t
----
3
1
2

query IT rowsort
SELECT id, name FROM t
----
6 values hashing to 8a24599f01c889e05120121e83e72749

hash-threshold 2

query I valuesort
SELECT id FROM t
----
3 values hashing to c0710d6b4f15dfa88f600b0e6b624077

# I truncates decimals, R prints three decimals, T prints as sent
query IRT
SELECT 7 / 2, 1 / 3, 1.5
----
3 0.333 1.5

# labels: equal results under one label
query I nosort count-label
SELECT COUNT(*) FROM t
----
3

query I nosort count-label
SELECT 3
----
3

# empty results, with and without ----
query T
SELECT name FROM t WHERE 1 = 0
----

query T
SELECT name FROM t WHERE 1 = 0

skipif icesql
statement ok
THIS IS NOT SQL

onlyif sqlite
statement ok
THIS IS NOT SQL EITHER

onlyif mysql
query T
SELECT 'mysql only'
----
mysql only

# session state carries across records: BEGIN, ROLLBACK
statement ok
BEGIN

statement ok
INSERT INTO t (id) VALUES (4)

query I
SELECT COUNT(*) FROM t
----
4

statement ok
ROLLBACK

query I
SELECT COUNT(*) FROM t
----
3

halt

statement ok
NOT RUN AFTER HALT
`

func TestRunScriptPasses(t *testing.T) {
	conn := newConn(t)
	rec := &recorder{}
	sum := RunScript(t.Context(), rec, conn, "pass.test", passingScript)
	for _, e := range rec.errs {
		t.Error(e)
	}
	if sum.Failed != 0 || sum.Skipped != 3 || sum.Records < 30 {
		t.Errorf("summary = %+v, want no failures, 3 skipped, ≥30 records", sum)
	}
}

func TestRunFile(t *testing.T) {
	conn := newConn(t)
	path := filepath.Join(t.TempDir(), "file.test")
	script := "statement ok\nCREATE DATABASE f\n\nquery IT\nSELECT 1, 'a b'\n----\n1 a b\n"
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	RunFile(t, conn, path)
}

// Each script holds one wrong expectation, at the line given, after a prefix
// that passes.
func TestRunScriptReportsFailures(t *testing.T) {
	cases := []struct {
		name   string
		script string
		line   int
		want   string // substring of the report
	}{
		{"statement ok fails", "statement ok\nSELECT * FROM nope", 1, "expected success, got error 1146"},
		{"statement error succeeds", "statement error\nSELECT 1", 1, "expected an error, got none"},
		{"wrong error number", "statement error 1050\nSELECT * FROM nope", 1, "expected error 1050, got error 1146"},
		{"wrong error message", "statement error 1146 other\nSELECT * FROM nope", 1, `expected error matching "other"`},
		{"wrong count", "statement count 2\nCREATE DATABASE c", 1, "expected 2 rows affected, got 1"},
		{"query error succeeds", "query error\nSELECT 1", 1, "expected an error, got none"},
		{"query fails", "query I\nSELECT * FROM nope\n----\n1", 1, "expected success, got error 1146"},
		{"wrong value", "query IT\nSELECT 1, 'x'\n----\n1 y", 1, "got:\n        1 x"},
		{"wrong value per line", "query IT\nSELECT 1, 'x' UNION ALL SELECT 2, 'y'\n----\n1\nx\n2\nz", 1, "got:\n        1\n        x\n        2\n        y"},
		{"wrong hash", "query I\nSELECT 1\n----\n1 values hashing to 00000000000000000000000000000000", 1, "1 values hashing to b026324c6904b2a9cb4b88d6d61c81d1"},
		{"wrong order", "query I nosort\nSELECT 1 UNION ALL SELECT 2\n----\n2\n1", 1, "result mismatch"},
		{"missing rows", "query I\nSELECT 1 FROM dual WHERE 1 = 0\n----\n1", 1, "result mismatch"},
		{"extra rows", "query I\nSELECT 1\n", 1, "result mismatch"},
		{"column count", "query II\nSELECT 1\n----\n1", 1, "expected 2 columns (II), got 1"},
		{"label differs", "query I nosort lbl\nSELECT 1\n----\n1\n\nquery I nosort lbl\nSELECT 2\n----\n2", 6, "label lbl: result differs from the query at line 1"},
		{"unknown record", "# comment\nstatment ok\nSELECT 1", 2, `unknown record type "statment"`},
		{"bad regexp", "statement error (\nSELECT 1", 1, "bad error pattern"},
		{"no sql", "statement ok\n\nquery I\nSELECT 1\n----\n1", 1, "record has no SQL"},
	}
	conn := newConn(t)
	if sum := RunScript(t.Context(), t, conn, "setup.test", "statement ok\nCREATE DATABASE bad\n\nstatement ok\nUSE bad\n"); sum.Failed != 0 {
		t.FailNow()
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			sum := RunScript(t.Context(), rec, conn, "bad.test", tc.script)
			if len(rec.errs) != 1 || sum.Failed != 1 {
				t.Fatalf("want one failure, got %d (summary %+v): %q", len(rec.errs), sum, rec.errs)
			}
			where := fmt.Sprintf("bad.test:%d: ", tc.line)
			if !strings.HasPrefix(rec.errs[0], where) || !strings.Contains(rec.errs[0], tc.want) {
				t.Errorf("report\n%s\nwant prefix %q and %q", rec.errs[0], where, tc.want)
			}
		})
	}
}

// A failed record does not stop the file: later records still run.
func TestRunScriptContinuesAfterFailure(t *testing.T) {
	conn := newConn(t)
	script := `statement ok
SELECT * FROM nope

query I
SELECT 1
----
2

query I
SELECT 3
----
3
`
	rec := &recorder{}
	sum := RunScript(t.Context(), rec, conn, "cont.test", script)
	if sum.Records != 3 || sum.Failed != 2 || len(rec.errs) != 2 {
		t.Fatalf("summary %+v, reports %q; want 3 records, 2 failed", sum, rec.errs)
	}
	if !strings.HasPrefix(rec.errs[0], "cont.test:1: ") || !strings.HasPrefix(rec.errs[1], "cont.test:4: ") {
		t.Errorf("reports %q", rec.errs)
	}
	if !strings.Contains(rec.errs[1], "sql: SELECT 1") {
		t.Errorf("report lacks the SQL: %q", rec.errs[1])
	}
}

func TestErrorNumber(t *testing.T) {
	cases := []struct {
		err  error
		num  int
		msg  string
		name string
	}{
		{&mysql.MySQLError{Number: 1146, Message: "Table 'a.b' doesn't exist"}, 1146, "Table 'a.b' doesn't exist", "go-sql-driver"},
		{vitessmysql.NewSQLError(1054, "42S22", "column %q could not be found", "x"), 1054, `column "x" could not be found`, "vitess"},
		{fmt.Errorf("exec: %w", vitessmysql.NewSQLError(1064, "42000", "syntax error")), 1064, "syntax error", "wrapped vitess"},
		{errors.New("boom (errno 1213) (sqlstate 40001)"), 1213, "boom (errno 1213) (sqlstate 40001)", "errno text"},
		{errors.New("boom"), 0, "boom", "plain"},
	}
	for _, tc := range cases {
		if got := errorNumber(tc.err); got != tc.num {
			t.Errorf("%s: errorNumber = %d, want %d", tc.name, got, tc.num)
		}
		if got := errorMessage(tc.err); got != tc.msg {
			t.Errorf("%s: errorMessage = %q, want %q", tc.name, got, tc.msg)
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v    any
		typ  byte
		want string
	}{
		{nil, 'I', "NULL"},
		{nil, 'T', "NULL"},
		{[]byte(""), 'T', "(empty)"},
		{"", 'T', "(empty)"},
		{[]byte("héllo wörld"), 'T', "héllo wörld"},
		{[]byte("a\tb\nc"), 'T', "a@b@c"},
		{[]byte{0xff, 'a', 0x00}, 'T', "@a@"},
		{int64(-9223372036854775808), 'I', "-9223372036854775808"},
		{uint64(18446744073709551615), 'I', "18446744073709551615"},
		{[]byte("42"), 'I', "42"},
		{[]byte("3.99"), 'I', "3"},
		{[]byte("-3.99"), 'I', "-3"},
		{[]byte("-0.5"), 'I', "0"},
		{[]byte("12345678901234567890123.5"), 'I', "12345678901234567890123"},
		{float64(2.9), 'I', "2"},
		{true, 'I', "1"},
		{[]byte("abc"), 'I', "abc"},
		{float64(1) / 3, 'R', "0.333"},
		{[]byte("2.5"), 'R', "2.500"},
		{int64(7), 'R', "7.000"},
		{float64(1.5), 'T', "1.5"},
		{float64(1e14), 'T', "100000000000000"},
		{float64(1e15), 'T', "1e15"},
		{float64(-2.5e-16), 'T', "-2.5e-16"},
		{float64(1e-15), 'T', "0.000000000000001"},
		{float32(1.1), 'T', "1.1"},
		{[]byte("2024-01-15"), 'T', "2024-01-15"},
		{time.Date(2024, 1, 15, 10, 0, 0, 500000000, time.UTC), 'T', "2024-01-15 10:00:00.500000"},
		{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), 'T', "1900-01-01 00:00:00"},
	}
	for _, tc := range cases {
		if got := formatValue(tc.v, tc.typ, nil); got != tc.want {
			t.Errorf("formatValue(%#v, %c) = %q, want %q", tc.v, tc.typ, got, tc.want)
		}
	}
}

func TestParseErrorPattern(t *testing.T) {
	cases := []struct {
		in      string
		num     int
		re      string
		wantErr bool
	}{
		{"", 0, "", false},
		{"1146", 1146, "", false},
		{"1146 table .* not found", 1146, "(?i)table .* not found", false},
		{"doesn't exist", 0, "(?i)doesn't exist", false},
		{"[", 0, "", true},
	}
	for _, tc := range cases {
		p, err := parseErrorPattern(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseErrorPattern(%q) error = %v", tc.in, err)
			continue
		}
		re := ""
		if p.re != nil {
			re = p.re.String()
		}
		if err == nil && (p.number != tc.num || re != tc.re) {
			t.Errorf("parseErrorPattern(%q) = %d %q, want %d %q", tc.in, p.number, re, tc.num, tc.re)
		}
	}
}

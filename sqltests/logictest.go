// Package sqltests runs SQL logic tests: files of SQL statements, each with
// its expected result or expected error, in the sqllogictest format that
// SQLite, CockroachDB, DuckDB and Dolt use.
//
// A file is a sequence of records separated by blank lines. Lines starting
// with '#' outside a record's results are comments.
//
//	statement ok
//	CREATE TABLE t (a INT, b TEXT)
//
//	statement count 2
//	INSERT INTO t VALUES (1, 'x'), (2, NULL)
//
//	statement error 1146 nope
//	SELECT * FROM nope
//
//	query IT rowsort
//	SELECT a, b FROM t
//	----
//	1 x
//	2 NULL
//
// # Errors
//
// "statement error" and "query error" take an optional pattern. If its first
// word is all digits it is the MySQL error number the error must carry; the
// rest, if any, is a regular expression matched case-insensitively against the
// error message (the message alone, without the "Error 1146 (42S02):" prefix
// that some drivers add). Without a number the whole pattern is the regular
// expression. Without a pattern any error passes.
//
// # Queries
//
// "query" is followed by one letter per column: I integer, R floating point
// (printed with three decimals, "%.3f"), anything else text. Then optionally a
// sort mode (nosort, the default; rowsort; valuesort) and a label. Queries with
// the same label must return the same values. "statement count N" expects N
// rows affected.
//
// # Values
//
// Values print as the MySQL text protocol sends them, whatever Go type the
// driver returns: integers in decimal, booleans as 1 and 0, floats in MySQL's
// shortest form (0.1, 1e15, 0.000000000000001), time.Time as the column's type
// prints it (DATE, DATETIME(n)). An I column truncates a decimal value toward
// zero, as SQLite does. NULL prints as NULL, the empty string as (empty),
// control characters and bytes that are not UTF-8 as '@'.
//
// Expected results may be written one row per line, values separated by
// whitespace (CockroachDB style; runs of whitespace are collapsed before
// comparing), or one value per line (SQLite style). The runner takes the
// SQLite style when a query has more than one column and the number of
// expected lines equals the number of values returned. A single line "N values
// hashing to H" compares the count and the MD5 of the values, each followed by
// a newline, after sorting. With rowsort and valuesort the expected results are
// sorted the same way before comparing, so they may be written in any order.
//
// # Control records
//
// "hash-threshold N" makes failure reports show results of more than N values
// as a hash line too. "skipif ENGINE" and "onlyif ENGINE" before a record skip
// it for or except that engine; this runner is "icesql" and "mysql". "halt"
// stops the file.
package sqltests

import (
	"context"
	"crypto/md5"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Reporter is the part of testing.TB the runner uses. *testing.T satisfies it.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// Summary counts what a run did.
type Summary struct {
	Records int // records run, control records included
	Skipped int // records skipped by skipif/onlyif or after halt
	Failed  int // records that reported a failure

	Queries       int // query records run
	QueriesFailed int // query records that reported a failure
}

// RunFile runs the logic test file at path on conn. Every failing record is
// reported with t.Errorf and the run continues with the next record. conn is
// one pinned connection, so session state (USE, BEGIN) carries across records.
func RunFile(t *testing.T, conn *sql.Conn, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read logic test: %v", err)
	}
	s := RunScript(t.Context(), t, conn, path, string(data))
	t.Logf("%s: %d records, %d skipped, %d failed", path, s.Records, s.Skipped, s.Failed)
}

// RunScript runs a logic test script held in memory; name is used in failure
// reports as the file name.
func RunScript(ctx context.Context, t Reporter, conn *sql.Conn, name, script string) Summary {
	t.Helper()
	r := &runner{ctx: ctx, t: t, conn: conn, name: name, labels: map[string]labelResult{}}
	records, parseErrs := parse(script)
	for _, pe := range parseErrs {
		t.Errorf("%s:%d: %s", name, pe.line, pe.msg)
		r.sum.Failed++
	}
	for i, rec := range records {
		if !rec.runsHere() {
			r.sum.Skipped++
			continue
		}
		if rec.kind == kindHalt {
			r.sum.Skipped += len(records) - i - 1
			break
		}
		r.sum.Records++
		if rec.kind == kindQuery {
			r.sum.Queries++
		}
		start := time.Now()
		ok := r.run(rec)
		traceSlow(name, rec, time.Since(start))
		if !ok {
			r.sum.Failed++
			if rec.kind == kindQuery {
				r.sum.QueriesFailed++
			}
		}
	}
	return r.sum
}

// check reports how err fails p, or "" when it matches.
func (p errorPattern) check(err error) string {
	if err == nil {
		return "expected an error, got none"
	}
	num, msg := errorNumber(err), errorMessage(err)
	if p.number != 0 && num != p.number {
		return fmt.Sprintf("expected error %d, got error %d: %s", p.number, num, msg)
	}
	if p.re != nil && !p.re.MatchString(msg) {
		return fmt.Sprintf("expected error matching %q, got error %d: %s", strings.TrimPrefix(p.re.String(), "(?i)"), num, msg)
	}
	return ""
}

type labelResult struct {
	line int
	hash string
}

type runner struct {
	ctx       context.Context
	t         Reporter
	conn      *sql.Conn
	name      string
	threshold int
	labels    map[string]labelResult
	sum       Summary
	vars      map[string]string // bound by let records (logictest_let.go)
}

func (r *runner) fail(rec *record, format string, args ...any) bool {
	r.t.Helper()
	r.t.Errorf("%s:%d: %s\n    sql: %s", r.name, rec.line, fmt.Sprintf(format, args...), indent(rec.sql))
	return false
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n         ") }

// run runs one record and reports whether it passed.
func (r *runner) run(rec *record) bool {
	r.t.Helper()
	rec = r.expand(rec)
	switch rec.kind {
	case kindLet:
		return r.let(rec)
	case kindHashThreshold:
		r.threshold = rec.threshold
		return true
	case kindStatement:
		return r.statement(rec)
	case kindQuery:
		return r.query(rec)
	}
	return true
}

func (r *runner) statement(rec *record) bool {
	r.t.Helper()
	res, err := r.conn.ExecContext(r.ctx, rec.sql)
	if rec.wantErr {
		if msg := rec.errPat.check(err); msg != "" {
			return r.fail(rec, "%s", msg)
		}
		return true
	}
	if err != nil {
		return r.fail(rec, "expected success, got error %d: %s", errorNumber(err), errorMessage(err))
	}
	if rec.hasCount {
		n, err := res.RowsAffected()
		if err != nil {
			return r.fail(rec, "rows affected: %v", err)
		}
		if n != rec.wantCount {
			return r.fail(rec, "expected %d rows affected, got %d", rec.wantCount, n)
		}
	}
	return true
}

func (r *runner) query(rec *record) bool {
	r.t.Helper()
	rows, err := r.fetch(rec)
	if rec.wantErr {
		if msg := rec.errPat.check(err); msg != "" {
			return r.fail(rec, "%s", msg)
		}
		return true
	}
	if err != nil {
		return r.fail(rec, "expected success, got error %d: %s", errorNumber(err), errorMessage(err))
	}
	if len(rows.cols) != len(rec.types) {
		return r.fail(rec, "expected %d columns (%s), got %d: %s",
			len(rec.types), rec.types, len(rows.cols), strings.Join(rows.cols, ", "))
	}
	got := rows.values
	switch rec.sort {
	case rowSort:
		slices.SortFunc(got, slices.Compare)
	case valueSort:
		flat := slices.Concat(got...)
		slices.Sort(flat)
		got = chunk(flat, len(rec.types))
	}
	hash, nvalues := hashValues(got)
	ok := r.compare(rec, got, hash, nvalues)
	if ok && rec.label != "" {
		if prev, seen := r.labels[rec.label]; seen && prev.hash != hash {
			return r.fail(rec, "label %s: result differs from the query at line %d", rec.label, prev.line)
		} else if !seen {
			r.labels[rec.label] = labelResult{line: rec.line, hash: hash}
		}
	}
	return ok
}

// compare checks the formatted, sorted result against the record's
// expectation and reports a mismatch.
func (r *runner) compare(rec *record, got [][]string, hash string, nvalues int) bool {
	r.t.Helper()
	exp := rec.expected
	if len(exp) == 1 {
		if m := hashLine.FindStringSubmatch(strings.TrimSpace(exp[0])); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n == nvalues && m[2] == hash {
				return true
			}
			return r.mismatch(rec, got, hash, nvalues, true)
		}
	}
	valuePerLine := len(rec.types) > 1 && len(exp) == nvalues && nvalues != len(got)
	var want, have []string
	if valuePerLine {
		want = collapseAll(exp)
		if rec.sort == rowSort {
			rowsWant := chunk(want, len(rec.types))
			slices.SortFunc(rowsWant, slices.Compare)
			want = slices.Concat(rowsWant...)
		} else if rec.sort == valueSort {
			slices.Sort(want)
		}
		have = collapseAll(slices.Concat(got...))
	} else {
		want = collapseAll(exp)
		for _, row := range got {
			have = append(have, collapse(strings.Join(row, " ")))
		}
		switch rec.sort {
		case rowSort:
			slices.Sort(want)
			slices.Sort(have)
		case valueSort:
			// Compare the multisets of words: values may hold spaces.
			want, have = words(want), words(have)
			slices.Sort(want)
			slices.Sort(have)
		}
	}
	if slices.Equal(want, have) {
		return true
	}
	return r.mismatch(rec, got, hash, nvalues, valuePerLine)
}

func (r *runner) mismatch(rec *record, got [][]string, hash string, nvalues int, valuePerLine bool) bool {
	r.t.Helper()
	var b strings.Builder
	b.WriteString("result mismatch\n    expected:\n")
	for _, l := range rec.expected {
		fmt.Fprintf(&b, "        %s\n", l)
	}
	b.WriteString("    got:\n")
	isHash := len(rec.expected) == 1 && hashLine.MatchString(strings.TrimSpace(rec.expected[0]))
	if isHash || (r.threshold > 0 && nvalues > r.threshold) {
		fmt.Fprintf(&b, "        %d values hashing to %s\n", nvalues, hash)
	}
	for _, row := range got {
		if valuePerLine {
			for _, v := range row {
				fmt.Fprintf(&b, "        %s\n", v)
			}
		} else {
			fmt.Fprintf(&b, "        %s\n", strings.Join(row, " "))
		}
	}
	return r.fail(rec, "%s", strings.TrimSuffix(b.String(), "\n"))
}

var hashLine = regexp.MustCompile(`^(\d+) values hashing to ([0-9a-f]{32})$`)

// hashValues is sqllogictest's result hash: MD5 over every value followed by
// a newline, in result order.
func hashValues(rows [][]string) (string, int) {
	h := md5.New()
	n := 0
	for _, row := range rows {
		for _, v := range row {
			h.Write([]byte(v))
			h.Write([]byte{'\n'})
			n++
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

func chunk(vals []string, n int) [][]string {
	var rows [][]string
	for len(vals) >= n && n > 0 {
		rows = append(rows, vals[:n:n])
		vals = vals[n:]
	}
	if len(vals) > 0 {
		rows = append(rows, vals)
	}
	return rows
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func collapseAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = collapse(l)
	}
	return out
}

func words(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Fields(l)...)
	}
	return out
}

type resultSet struct {
	cols   []string
	values [][]string // formatted per the record's column types
}

// fetch runs a query and formats every value. Errors raised while reading
// rows count as the query's error.
func (r *runner) fetch(rec *record) (*resultSet, error) {
	rows, err := r.conn.QueryContext(r.ctx, rec.sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &resultSet{}
	for _, c := range cols {
		res.cols = append(res.cols, c.Name())
	}
	raw := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range raw {
			typ := byte('T')
			if i < len(rec.types) {
				typ = rec.types[i]
			}
			row[i] = formatValue(v, typ, cols[i])
		}
		res.values = append(res.values, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, rows.Close()
}

package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestBulkLoadMatchesRowPath loads generated files through the bulk LOAD
// DATA path (loaddata.go) and through go-mysql-server's row path
// (icesql_vectorize = OFF) and compares the rows, the warnings and the
// errors: random values of every shape (canonical, padded, signed, out of
// range, not a number, impossible dates, escapes, enclosures, NULL
// markers, short and long lines) under random FIELDS/LINES options,
// column lists, IGNORE n LINES and the IGNORE keyword.
func TestBulkLoadMatchesRowPath(t *testing.T) {
	dir := t.TempDir()
	files := filepath.Join(dir, ".icesql", "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	conn := openConn(t, engine.Config{Warehouse: dir})
	mustExec(t, conn, "CREATE DATABASE ld")
	const columns = "id BIGINT, i INT, s STRING, f DOUBLE, d DATE, ts TIMESTAMP, m DECIMAL(10,2), b BOOLEAN, nn INT NOT NULL"
	names := []string{"id", "i", "s", "f", "d", "ts", "m", "b", "nn"}
	cases := 60
	if testing.Short() {
		cases = 15
	}
	for c := range cases {
		rng := rand.New(rand.NewPCG(uint64(c), 7))
		opts := randomLoadOptions(rng)
		cols := names
		colList := ""
		if rng.IntN(3) == 0 {
			cols = shuffledPrefix(rng, names)
			colList = " (" + strings.Join(cols, ", ") + ")"
		}
		var b strings.Builder
		for range opts.ignoreLines {
			b.WriteString(opts.start + "skipped" + opts.lineTerm)
		}
		for r := range 1 + rng.IntN(40) {
			if opts.start != "" && rng.IntN(10) == 0 {
				b.WriteString("no prefix here" + opts.lineTerm) // skipped: no LINES STARTING BY
			}
			b.WriteString(opts.start)
			n := len(cols)
			if rng.IntN(8) == 0 {
				n += rng.IntN(3) - 1 // a short or a long line
			}
			for k := 0; k < n; k++ {
				if k > 0 {
					b.WriteString(opts.fieldTerm)
				}
				col := "nn"
				if k < len(cols) {
					col = cols[k]
				}
				b.WriteString(opts.field(rng, randomLoadValue(rng, col, r)))
			}
			if r < 39 || rng.IntN(2) == 0 {
				b.WriteString(opts.lineTerm)
			}
		}
		file := filepath.Join(files, fmt.Sprintf("case%d.txt", c))
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ignore := ""
		if rng.IntN(2) == 0 {
			ignore = "IGNORE "
		}
		stmt := fmt.Sprintf("LOAD DATA INFILE '%s' %sINTO TABLE %%s%s%s", file, ignore, opts.clause(), colList)
		var got [2]loadOutcome
		for path, vectorize := range []string{"ON", "OFF"} {
			tbl := fmt.Sprintf("ld.c%d_%s", c, vectorize)
			mustExec(t, conn, "CREATE TABLE "+tbl+" ("+columns+")", "SET icesql_vectorize = "+vectorize)
			got[path] = runLoad(t, conn, fmt.Sprintf(stmt, tbl), tbl)
		}
		mustExec(t, conn, "SET icesql_vectorize = ON")
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("case %d: %s\nfile:\n%q\n%s", c, stmt, b.String(), outcomeDiff(got[0], got[1]))
		}
	}
}

// outcomeDiff says where the bulk path's outcome differs from the row path's.
func outcomeDiff(bulk, row loadOutcome) string {
	var b strings.Builder
	if bulk.Err != row.Err || bulk.Affected != row.Affected {
		fmt.Fprintf(&b, "bulk: error %q, %d rows; row path: error %q, %d rows\n", bulk.Err, bulk.Affected, row.Err, row.Affected)
	}
	list := func(name string, x, y []string) {
		for i := range max(len(x), len(y)) {
			var a, c string
			if i < len(x) {
				a = x[i]
			}
			if i < len(y) {
				c = y[i]
			}
			if a != c {
				fmt.Fprintf(&b, "%s %d: bulk %q, row path %q\n", name, i, a, c)
			}
		}
	}
	list("warning", bulk.Warnings, row.Warnings)
	list("row", bulk.Rows, row.Rows)
	return b.String()
}

type loadOutcome struct {
	Err      string
	Affected int64
	Warnings []string
	Rows     []string
}

func runLoad(t *testing.T, conn *sql.Conn, stmt, tbl string) loadOutcome {
	t.Helper()
	ctx := context.Background()
	var out loadOutcome
	res, err := conn.ExecContext(ctx, stmt)
	if err != nil {
		out.Err = err.Error()
	} else {
		out.Affected, _ = res.RowsAffected()
		out.Warnings = queryStrings(t, conn, "SHOW WARNINGS")
	}
	out.Rows = queryStrings(t, conn, "SELECT * FROM "+tbl+" ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9")
	return out
}

// shuffledPrefix is some of names, in a random order.
func shuffledPrefix(rng *rand.Rand, names []string) []string {
	out := append([]string(nil), names...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:1+rng.IntN(len(out))]
}

type loadOptions struct {
	fieldTerm, enclosed, escaped, lineTerm, start string
	optionally, escapedSet                        bool
	ignoreLines                                   int
}

func randomLoadOptions(rng *rand.Rand) loadOptions {
	o := loadOptions{
		fieldTerm: []string{",", "\t", "||", ";"}[rng.IntN(4)],
		lineTerm:  []string{"\n", "\r\n", "|\n"}[rng.IntN(3)],
		escaped:   `\`,
	}
	if rng.IntN(2) == 0 {
		o.enclosed = []string{`"`, `'`, `$`}[rng.IntN(3)]
		o.optionally = rng.IntN(2) == 0
	}
	switch rng.IntN(4) {
	case 0:
		o.escaped, o.escapedSet = "", true
	case 1:
		o.escaped, o.escapedSet = `$`, true
	}
	if rng.IntN(4) == 0 {
		o.start = "xx"
	}
	o.ignoreLines = rng.IntN(3)
	return o
}

func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s) + "'"
}

func (o loadOptions) clause() string {
	var b strings.Builder
	b.WriteString(" FIELDS TERMINATED BY " + sqlString(o.fieldTerm))
	if o.enclosed != "" {
		if o.optionally {
			b.WriteString(" OPTIONALLY")
		}
		b.WriteString(" ENCLOSED BY " + sqlString(o.enclosed))
	}
	if o.escapedSet {
		b.WriteString(" ESCAPED BY " + sqlString(o.escaped))
	}
	b.WriteString(" LINES")
	if o.start != "" {
		b.WriteString(" STARTING BY " + sqlString(o.start))
	}
	b.WriteString(" TERMINATED BY " + sqlString(o.lineTerm))
	if o.ignoreLines > 0 {
		fmt.Fprintf(&b, " IGNORE %d LINES", o.ignoreLines)
	}
	return b.String()
}

// field writes v as a field: enclosed, escaped, or as it is (a value with
// a terminator inside then splits, on both paths alike).
func (o loadOptions) field(rng *rand.Rand, v string) string {
	if v == "\x00NULL" {
		if o.escaped != "" {
			return o.escaped + "N"
		}
		return "NULL"
	}
	if o.enclosed != "" && rng.IntN(2) == 0 {
		return o.enclosed + strings.ReplaceAll(v, o.enclosed, o.enclosed+o.enclosed) + o.enclosed
	}
	if o.escaped != "" && rng.IntN(2) == 0 {
		r := strings.NewReplacer(o.fieldTerm, o.escaped+o.fieldTerm, "\t", o.escaped+"t", "\n", o.escaped+"n")
		return r.Replace(v)
	}
	return v
}

// randomLoadValue is a field's text for column col: usually canonical,
// often not.
func randomLoadValue(rng *rand.Rand, col string, row int) string {
	odd := []string{"", "NULL", "\x00NULL", " 5", "+5", "5abc", "1e3", "0x10", "007", "-", "abc", "99999999999999999999", "-2147483649", "3.7", "-0"}
	if rng.IntN(4) == 0 {
		return odd[rng.IntN(len(odd))]
	}
	switch col {
	case "id":
		return fmt.Sprint(int64(row)*1_000_000_007 - rng.Int64N(1<<40))
	case "i", "nn":
		return fmt.Sprint(rng.Int32() - 1<<30)
	case "s":
		return []string{"plain", "with space", "comma,inside", "tab\tinside", `quote"d`, "it's", "Straße", "日本", "back\\slash", "$dollar", "NULL", "null"}[rng.IntN(12)]
	case "f":
		return []string{"1.5", "-0.25", "1e-3", "12345.678", "0", ".5", "5.", "1E+10", "2.5e400"}[rng.IntN(9)]
	case "d":
		return []string{"2024-01-05", "1999-12-31", "2024-02-29", "2023-02-29", "2024-1-5", "20240105", "0000-00-00", "9999-12-31", "1000-01-01", "0999-01-01", "2024-01-05 10:00:00"}[rng.IntN(11)]
	case "ts":
		return []string{"2024-01-05 10:11:12", "2024-01-05 10:11:12.5", "2024-01-05 10:11:12.123456", "2024-01-05", "2024-01-05T10:11:12", "2024-13-01 00:00:00", "1970-01-01 00:00:00"}[rng.IntN(7)]
	case "m":
		return []string{"12.34", "-0.5", "99999999.99", "123456789.12", "1.005", "7"}[rng.IntN(6)]
	case "b":
		return []string{"1", "0", "true", "false", "2", "yes"}[rng.IntN(6)]
	}
	return "?"
}

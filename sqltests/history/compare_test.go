package history

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	vmysql "github.com/dolthub/vitess/go/mysql"
	"github.com/go-sql-driver/mysql"
)

func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		v      any
		dbType string
		want   string
	}{
		{nil, "INT", "NULL"},
		{true, "BOOLEAN", "1"},
		{[]byte("1"), "TINYINT", "1"},
		{int64(-5), "BIGINT", "-5"},
		{float64(2.50), "DOUBLE", "2.5"},
		{[]byte("-0"), "DOUBLE", "0"},
		{[]byte("12.3000"), "DECIMAL", "12.3"},
		{[]byte("1e15"), "DOUBLE", "1000000000000000"},
		{[]byte("2024-01-02"), "DATE", "2024-01-02"},
		{[]byte("2024-01-02 00:00:00.000000"), "DATETIME", "2024-01-02"},
		{[]byte("2024-01-02 03:04:05.120000"), "DATETIME", "2024-01-02 03:04:05.12"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "DATETIME", "2024-01-02 03:04:05"},
		{"apple ", "TEXT", "apple "},
	} {
		if got := canonical(tc.v, tc.dbType); got != tc.want {
			t.Errorf("canonical(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestDiff(t *testing.T) {
	rows := func(cells ...string) [][]string {
		var out [][]string
		for _, c := range cells {
			out = append(out, []string{c})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		got, want [][]string
		ordered   bool
		same      bool
	}{
		{"multiset in any order", rows("1", "2", "2"), rows("2", "1", "2"), false, true},
		{"a duplicate too many", rows("1", "2", "2"), rows("1", "2"), false, false},
		{"a duplicate instead of another row", rows("1", "1"), rows("1", "2"), false, false},
		{"order matters when ordered", rows("1", "2"), rows("2", "1"), true, false},
		{"doubles are exact (floatsum.go bounds sums)", rows("0.30000000000000004"), rows("0.3"), false, false},
		{"MySQL's AVG keeps 4 decimals", rows("3.333333333"), rows("3.3333"), false, true},
		{"decimals that differ", rows("3.34"), rows("3.3333"), false, false},
		{"NULL is not 0", rows("0"), rows("NULL"), false, false},
		{"strings are exact", rows("apple"), rows("apple "), false, false},
	} {
		if d := Diff(tc.got, tc.want, tc.ordered); (d == "") != tc.same {
			t.Errorf("%s: Diff = %q, want same = %v", tc.name, d, tc.same)
		}
	}
}

func TestConfigOn(t *testing.T) {
	c := DefaultConfig()
	c.Off["join/cross-right"] = "known"
	for shape, want := range map[string]bool{
		"join/cross-right":           false,
		"join/cross-right/aggregate": false,
		"join/cross":                 true,
		"join/right-cross":           true,
	} {
		if got := c.on(shape); got != want {
			t.Errorf("on(%q) = %v, want %v", shape, got, want)
		}
	}
}

// A known issue turns its shapes off, and names shapes the generator
// checks (a misspelt shape would exclude nothing); the fixed-seed run
// prints one line per issue.
func TestKnownIssuesExclude(t *testing.T) {
	c := DefaultConfig()
	shapes := []string{"join/cross-right", "window/running-sum", "arith/bigint-overflow"}
	lines := c.without([]KnownIssue{{Name: "an issue", Why: "a reproduction", Shapes: shapes}})
	for _, shape := range shapes {
		if c.on(shape) {
			t.Errorf("%s is on", shape)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "an issue") {
		t.Errorf("lines printed for one known issue: %q", lines)
	}
	for _, k := range KnownIssues() {
		for _, shape := range k.Shapes {
			if !DefaultConfig().on(shape) {
				t.Errorf("known issue %q names shape %s, which the default run does not draw", k.Name, shape)
			}
		}
	}
}

// TestOverflowOneSided: a 1690 on one side where another answered is the
// plan's choice of rows, no difference, when icesql's full evaluation of
// the expression overflows too (overflowConfirmed); unconfirmed it is one
// (a side may have wrapped or raised it wrongly), and so is any other
// one-sided error.
func TestOverflowOneSided(t *testing.T) {
	overflow := fmt.Errorf("filter: %w", vmysql.NewSQLError(vmysql.ERDataOutOfRange, "22003", "BIGINT value is out of range in '(a.id - 2)'"))
	mariaOverflow := Result{Err: &mysql.MySQLError{Number: 1690, Message: "BIGINT value is out of range"}}
	rows := Result{Rows: [][]string{{"1"}}}
	other := Result{Rows: [][]string{{"2"}}}
	for _, tc := range []struct {
		name      string
		c         check
		oneSided  bool
		confirmed bool
		diff      bool
	}{
		{"icesql out of range", check{on: Result{Err: overflow}, off: Result{Err: overflow}, oracle: rows}, true, true, false},
		{"icesql out of range, unconfirmed", check{on: Result{Err: overflow}, off: Result{Err: overflow}, oracle: rows}, true, false, true},
		{"MariaDB out of range", check{on: rows, off: rows, oracle: mariaOverflow}, true, true, false},
		{"MariaDB out of range, unconfirmed", check{on: rows, off: rows, oracle: mariaOverflow}, true, false, true},
		{"vector path only", check{on: Result{Err: overflow}, off: rows, oracle: rows}, true, true, false},
		{"vector path only, unconfirmed", check{on: Result{Err: overflow}, off: rows, oracle: rows}, true, false, true},
		{"vector path only, other rows off", check{on: Result{Err: overflow}, off: other, oracle: rows}, true, true, true},
		{"every side", check{on: Result{Err: overflow}, off: Result{Err: overflow}, oracle: mariaOverflow}, false, false, false},
		{"another error", check{on: Result{Err: errors.New("unable to find field")}, off: Result{Err: errors.New("x")}, oracle: rows}, false, false, true},
	} {
		if got := tc.c.overflowOneSided(); got != tc.oneSided {
			t.Errorf("%s: overflowOneSided %v, want %v", tc.name, got, tc.oneSided)
		}
		tc.c.overflowConfirmed = tc.confirmed
		if got := tc.c.difference(false) != ""; got != tc.diff {
			t.Errorf("%s: difference %v, want %v", tc.name, got, tc.diff)
		}
	}
	if (outcome{iceErr: overflow}).oneSided() != true || (outcome{mErr: overflow, overflow: true}).oneSided() != false {
		t.Error("a statement's one-sided 1690 is accepted only when confirmed")
	}
}

// TestOverflowProbes: the overflow-prone expressions and the tables they
// are evaluated on are found in the generator's queries and statements.
func TestOverflowProbes(t *testing.T) {
	for _, tc := range []struct {
		sql    string
		tables []string
		want   []string
	}{
		{"SELECT l.x AS c0 FROM h.t2 AS l WHERE ((l.id - 2) < 18) AND (l.b IS NULL) UNION ALL SELECT l.x AS c0 FROM `h`.`t3` AS l", nil,
			[]string{"SELECT COUNT(l.id - 2) FROM h.t2 AS l", "SELECT COUNT(l.id - 2) FROM `h`.`t3` AS l"}},
		{"SELECT COUNT(*) AS c0 FROM t3 VERSION AS OF 6795 AS a WHERE ((a.id - 2) < 55) AND (a.ts <=> '2024-02-29') UNION SELECT 1 FROM t1 VERSION AS OF 'b' AS a", nil,
			[]string{"SELECT COUNT(a.id - 2) FROM t3 VERSION AS OF 6795 AS a", "SELECT COUNT(a.id - 2) FROM t1 VERSION AS OF 'b' AS a"}},
		{"UPDATE h.t1.branch_b SET k = 1 WHERE ((id - 2) < 36) AND (id IN (26, 30, 17))", []string{"h.t1.branch_b"},
			[]string{"SELECT COUNT(id - 2) FROM h.t1.branch_b"}},
		{"DELETE FROM t1 WHERE (k - 2) < 3", []string{"t1", "t2"},
			[]string{"SELECT COUNT(k - 2) FROM t1", "SELECT COUNT(k - 2) FROM t2"}},
	} {
		if got := overflowProbes(tc.sql, tc.tables); !slices.Equal(got, tc.want) {
			t.Errorf("%s: probes %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// TestExactArithmetic: MariaDB's retry of a statement it refused by an
// overflow icesql's plan skipped computes the same expressions in DECIMAL.
func TestExactArithmetic(t *testing.T) {
	got := exactArithmetic([]string{
		"UPDATE t2 SET s = 'a' WHERE ((id - 2) < 36) AND (id IN (26, 30))",
		"SELECT 1 FROM t1 AS a WHERE (a.k - 2) < 3 OR (k - 2) > 1",
	})
	want := []string{
		"UPDATE t2 SET s = 'a' WHERE ((CAST(id AS DECIMAL(21)) - 2) < 36) AND (id IN (26, 30))",
		"SELECT 1 FROM t1 AS a WHERE (CAST(a.k AS DECIMAL(21)) - 2) < 3 OR (CAST(k AS DECIMAL(21)) - 2) > 1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

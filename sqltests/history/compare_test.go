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

// TestOverflowOnIcesql: a 1690 on icesql where MariaDB answered is the
// plan's choice of rows, no difference; MariaDB's 1690 where icesql
// answered still is one (icesql may have wrapped), and so is any other
// one-sided error.
func TestOverflowOnIcesql(t *testing.T) {
	overflow := fmt.Errorf("filter: %w", vmysql.NewSQLError(vmysql.ERDataOutOfRange, "22003", "BIGINT value is out of range in '(a.id - 2)'"))
	rows := Result{Rows: [][]string{{"1"}}}
	for _, tc := range []struct {
		name string
		c    check
		diff bool
	}{
		{"icesql out of range", check{on: Result{Err: overflow}, off: Result{Err: overflow}, oracle: rows}, false},
		{"MariaDB out of range", check{on: rows, off: rows, oracle: Result{Err: &mysql.MySQLError{Number: 1690, Message: "BIGINT value is out of range"}}}, true},
		{"one path only", check{on: Result{Err: overflow}, off: rows, oracle: rows}, true},
		{"another error", check{on: Result{Err: errors.New("unable to find field")}, off: Result{Err: errors.New("x")}, oracle: rows}, true},
	} {
		if got := tc.c.difference(false) != ""; got != tc.diff {
			t.Errorf("%s: difference %v, want %v", tc.name, got, tc.diff)
		}
	}
}

// TestOverflowConfirmedPatterns: the overflow-prone expressions and the
// tables their aliases name are found in the generator's queries.
func TestOverflowConfirmedPatterns(t *testing.T) {
	q := "SELECT l.x AS c0 FROM h.t2 AS l WHERE ((l.id - 2) < 18) AND (l.b IS NULL) UNION ALL SELECT l.x AS c0 FROM `h`.`t3` AS l"
	var got []string
	tables := map[string][]string{}
	for _, m := range tableAlias.FindAllStringSubmatch(q, -1) {
		tables[m[2]] = append(tables[m[2]], m[1])
	}
	for _, m := range overflowing.FindAllStringSubmatch(q, -1) {
		got = append(got, strings.Join(tables[m[1]], ",")+" "+m[1]+"."+m[2])
	}
	if want := []string{"h.t2,`h`.`t3` l.id"}; !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
	c := check{on: Result{Rows: [][]string{}}, off: Result{Rows: [][]string{}},
		oracle: Result{Err: &mysql.MySQLError{Number: 1690, Message: "BIGINT value is out of range"}}, overflowConfirmed: true}
	if d := c.difference(false); d != "" {
		t.Errorf("a confirmed MariaDB 1690 is a difference: %s", d)
	}
}

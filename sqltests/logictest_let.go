package sqltests

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// # Variables
//
// "let $name" runs its query, which must return exactly one row of one
// value, and binds the value to $name, as in CockroachDB's logic tests:
//
//	let $snap
//	SELECT snapshot_id FROM db.t.snapshots ORDER BY committed_at LIMIT 1
//
// Later records see $name replaced by the value in their SQL, their error
// pattern and their expected results, so a file can name what differs
// from run to run (Iceberg snapshot ids are random).

var letName = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*$`)

func (rec *record) parseLetHeader(header string, f []string) error {
	if len(f) != 2 || !letName.MatchString(f[1]) {
		return fmt.Errorf("let needs one $name: %q", header)
	}
	rec.label = f[1]
	return nil
}

// let runs a let record.
func (r *runner) let(rec *record) bool {
	r.t.Helper()
	rows, err := r.fetch(rec)
	if err != nil {
		return r.fail(rec, "let %s: %d: %s", rec.label, errorNumber(err), errorMessage(err))
	}
	if len(rows.values) != 1 || len(rows.values[0]) != 1 {
		return r.fail(rec, "let %s: want one row of one value, got %d rows of %d columns", rec.label, len(rows.values), len(rows.cols))
	}
	if r.vars == nil {
		r.vars = map[string]string{}
	}
	r.vars[rec.label] = rows.values[0][0]
	return true
}

// expand returns rec with the bound variables replaced, longest names
// first so that $a does not replace the start of $ab.
func (r *runner) expand(rec *record) *record {
	if len(r.vars) == 0 {
		return rec
	}
	names := slices.Collect(maps.Keys(r.vars))
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(names))
	for _, n := range names {
		pairs = append(pairs, n, r.vars[n])
	}
	rep := strings.NewReplacer(pairs...)
	out := *rec
	out.sql = rep.Replace(rec.sql)
	out.expected = make([]string, len(rec.expected))
	for i, l := range rec.expected {
		out.expected[i] = rep.Replace(l)
	}
	if rec.errPat.re != nil {
		out.errPat.re = regexp.MustCompile(rep.Replace(rec.errPat.re.String()))
	}
	return &out
}

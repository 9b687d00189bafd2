package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// keyedInShapes are correlated IN and NOT IN subqueries whose conditions
// give no equality key (an OR across the correlation, a range), which
// planrules/keyedin.go splits at the OR and keys by the subquery's value: keys of each kind, NULLs in
// the values and on the left, subqueries empty for some or all outer rows,
// in WHERE, under NOT and OR, and in the SELECT list (where NULL and FALSE
// differ).
var keyedInShapes = []string{
	"SELECT l.id FROM o AS l WHERE l.k NOT IN (SELECT q.k FROM i AS q WHERE q.s = l.s OR q.x > 7)",
	"SELECT l.id FROM o AS l WHERE l.k IN (SELECT q.k FROM i AS q WHERE q.s = l.s OR q.x > 7)",
	"SELECT l.id FROM o AS l WHERE l.k NOT IN (SELECT CAST(q.k AS SIGNED) FROM i AS q WHERE q.id < l.id AND q.b)",
	"SELECT l.id FROM o AS l WHERE l.s IN (SELECT q.s FROM i AS q WHERE q.k = l.k AND q.id > 100 OR q.k BETWEEN 3 AND 4)",
	"SELECT l.id FROM o AS l WHERE l.s NOT IN (SELECT q.s FROM i AS q WHERE q.k < l.k)",
	"SELECT l.id FROM o AS l WHERE l.m NOT IN (SELECT q.m FROM i AS q WHERE q.x > l.x)",
	"SELECT l.id FROM o AS l WHERE l.d IN (SELECT q.d FROM i AS q WHERE q.k > l.k OR q.s = l.s)",
	"SELECT l.id FROM o AS l WHERE l.x NOT IN (SELECT q.x FROM i AS q WHERE q.id <> l.id AND q.k <= l.k)",
	"SELECT l.id FROM o AS l WHERE l.k NOT IN (SELECT q.k FROM i AS q WHERE q.k > l.k + 100)",
	"SELECT l.id FROM o AS l WHERE l.k NOT IN (SELECT q.k FROM i AS q WHERE q.id > l.id + 1000 OR q.id < 0)",
	"SELECT l.id FROM o AS l WHERE l.k NOT IN (SELECT q.k FROM i AS q WHERE q.k IS NOT NULL AND q.id < l.id)",
	"SELECT l.id FROM o AS l WHERE NOT (l.k IN (SELECT q.k FROM i AS q WHERE q.s <> l.s)) OR l.b",
	"SELECT l.id, l.k IN (SELECT q.k FROM i AS q WHERE q.x < l.x), l.k NOT IN (SELECT q.k FROM i AS q WHERE q.s > l.s) FROM o AS l",
	"SELECT COUNT(*), SUM(l.m) FROM o AS l WHERE l.k NOT IN (SELECT q.k FROM i AS q WHERE q.s = l.s OR q.b) AND l.b",
	"SELECT l.id, l.k IN (SELECT q.k FROM i AS q WHERE q.s = l.s OR q.id = 7 OR q.x > l.x) FROM o AS l",
	"SELECT l.id, l.s NOT IN (SELECT q.s FROM i AS q WHERE q.k = l.k AND q.b OR q.m IS NULL) FROM o AS l",
}

// Each shape answers as the subquery over every row does (icesql_decorrelate
// = OFF), on the vector path and off it, and EXPLAIN shows the keyed source.
func TestKeyedInMatchesRowPath(t *testing.T) {
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	conn := openConnOn(t, e)
	mustExec(t, conn, "CREATE DATABASE ki", "USE ki")
	createSubqueryTables(t, conn)
	for _, q := range keyedInShapes {
		for _, vectorize := range []string{"ON", "OFF"} {
			mustExec(t, conn, "SET icesql_vectorize = "+vectorize, "SET icesql_decorrelate = ON")
			if plan := strings.Join(explainLines(t, conn, q), "\n"); !strings.Contains(plan, "KeyedSource(") {
				t.Errorf("vectorize %s: %s is not keyed:\n%s", vectorize, q, plan)
			}
			got := queryStrings(t, conn, q)
			mustExec(t, conn, "SET icesql_decorrelate = OFF")
			if plan := strings.Join(explainLines(t, conn, q), "\n"); strings.Contains(plan, "IN's value") {
				t.Errorf("icesql_decorrelate = OFF keyed %s", q)
			}
			want := queryStrings(t, conn, q)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("vectorize %s: %s\n got %v\nwant %v", vectorize, q, got, want)
			}
		}
	}
}

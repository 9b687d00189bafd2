package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// A correlated subquery whose WHERE holds an equality with the outer row
// reads its table once per statement, by key (planrules/correlated.go), and answers
// exactly what re-running it per outer row answers: the same query with
// the equality written as (a = b) IS TRUE, which the rule does not key,
// is the oracle. The keys cover every key kind, with NULLs, -0 beside 0,
// decimals of different scales and keys no row has; each query runs on
// both paths and, through a derived table, where go-mysql-server pushes
// the filter below the keyed source.
func TestCorrelatedSubqueryKeyedMatchesRowPath(t *testing.T) {
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn, "CREATE DATABASE cs", "USE cs")
	cols := "id BIGINT, k BIGINT, s STRING, d DATE, x DOUBLE, m DECIMAL(10,2), b BOOLEAN"
	mustExec(t, conn, "CREATE TABLE o ("+cols+")", "CREATE TABLE i ("+cols+") PARTITIONED BY (bucket(2, id))")
	value := func(n, col int) string {
		if (n+col)%7 == 0 {
			return "NULL"
		}
		switch col {
		case 1:
			return fmt.Sprint(n % 9)
		case 2:
			return fmt.Sprintf("'w%d'", n%5)
		case 3:
			return fmt.Sprintf("'2024-01-%02d'", 1+n%6)
		case 4:
			return []string{"0", "-0.0", "1.5", "2", "-3.25"}[n%5]
		case 5:
			return []string{"1.50", "2", "0", "-0.00", "3.25"}[n%5]
		case 6:
			return []string{"TRUE", "FALSE"}[n%2]
		}
		return fmt.Sprint(n)
	}
	for _, tbl := range []struct {
		name    string
		inserts int
		per     int
		offset  int
	}{{"o", 2, 20, 0}, {"i", 3, 25, 3}} {
		for ins := range tbl.inserts {
			var rows []string
			for j := range tbl.per {
				n := ins*tbl.per + j + tbl.offset
				vals := make([]string, 7)
				for c := range vals {
					vals[c] = value(n, c)
				}
				rows = append(rows, "("+strings.Join(vals, ", ")+")")
			}
			mustExec(t, conn, "INSERT INTO "+tbl.name+" VALUES "+strings.Join(rows, ", "))
		}
	}
	for _, key := range []string{"k", "s", "d", "x", "m", "b"} {
		eq := fmt.Sprintf("q.%s = l.%s", key, key)
		for _, q := range []string{
			"SELECT l.id, (SELECT MAX(q.x) FROM i AS q WHERE " + eq + ") FROM o AS l ORDER BY l.id",
			"SELECT l.id, (SELECT COUNT(*) FROM i AS q WHERE " + eq + " AND q.id > 10) FROM o AS l ORDER BY l.id",
			"SELECT l.id, (SELECT SUM(q.m) FROM i AS q WHERE q.b AND " + eq + ") FROM o AS l ORDER BY l.id",
			"SELECT COUNT(*), SUM(c), COUNT(c) FROM (SELECT l.id, (SELECT COUNT(q.s) FROM i AS q WHERE " + eq + ") AS c FROM o AS l) AS z",
			"SELECT COUNT(*), SUM(c) FROM (SELECT l.id, (SELECT MIN(q.id) FROM i AS q WHERE " + eq + " AND q.x > l.x) AS c FROM o AS l) AS z",
			"SELECT l.id FROM o AS l WHERE l.s IN (SELECT q.s FROM i AS q WHERE " + eq + ") ORDER BY l.id",
			"SELECT l.id FROM o AS l WHERE l.s NOT IN (SELECT q.s FROM i AS q WHERE " + eq + ") ORDER BY l.id",
			"SELECT l.id FROM o AS l WHERE l.id > (SELECT AVG(q.id) FROM i AS q WHERE " + eq + ") ORDER BY l.id",
		} {
			oracle := strings.ReplaceAll(q, eq, "("+eq+") IS TRUE")
			for _, vectorize := range []string{"ON", "OFF"} {
				mustExec(t, conn, "SET icesql_vectorize = "+vectorize)
				// EXPLAIN prints a subquery within a WHERE clause as
				// its SQL text, without its plan.
				plan := strings.Join(explainLines(t, conn, q), "\n")
				if !strings.Contains(plan, "Subquery(select") && !strings.Contains(plan, "KeyedSource") && !strings.Contains(plan, "GroupedLeftJoin") {
					t.Errorf("vectorize %s: %s is not keyed:\n%s", vectorize, q, plan)
				}
				got := queryStrings(t, conn, q)
				// The oracle runs per outer row (groupedsubquery.go off).
				mustExec(t, conn, "SET icesql_decorrelate = OFF")
				want := queryStrings(t, conn, oracle)
				mustExec(t, conn, "SET icesql_decorrelate = ON")
				if !slices.Equal(got, want) {
					t.Errorf("vectorize %s: %s\n got %v\nwant %v", vectorize, q, got, want)
				}
			}
		}
	}
}

package engine_test

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// groupedShapes are correlated scalar subqueries that groupedsubquery.go
// runs as a left join on grouped rows: equality keys of each kind, ranges,
// both, joins within the subquery, in the SELECT list, WHERE and HAVING.
var groupedShapes = []string{
	"SELECT l.id, (SELECT COUNT(*) FROM i AS q WHERE q.k = l.k), (SELECT SUM(q.m) FROM i AS q WHERE q.k = l.k) FROM o AS l",
	"SELECT l.id, (SELECT AVG(q.m) FROM i AS q WHERE q.s = l.s AND q.b), (SELECT MIN(q.x) FROM i AS q WHERE q.d = l.d) FROM o AS l",
	"SELECT l.id, (SELECT COUNT(q.x) + 1 FROM i AS q WHERE q.m = l.m AND q.k = l.k) FROM o AS l",
	"SELECT l.id FROM o AS l WHERE l.m < (SELECT 2 * AVG(q.m) FROM i AS q WHERE q.k = l.k)",
	"SELECT COUNT(*), SUM(l.m) FROM o AS l WHERE l.x > (SELECT AVG(q.x) FROM i AS q WHERE q.k < l.k)",
	"SELECT l.id, (SELECT MAX(q.id) FROM i AS q WHERE q.s = l.s AND q.x > l.x) FROM o AS l",
	"SELECT l.id, (SELECT COUNT(*) FROM i AS q WHERE q.d BETWEEN l.d AND l.d + INTERVAL 3 DAY) FROM o AS l",
	"SELECT l.id, (SELECT MIN(q.m) FROM i AS q, o AS r WHERE q.id = r.k AND q.k = l.k) FROM o AS l",
	"SELECT l.k, COUNT(*) FROM o AS l GROUP BY l.k HAVING COUNT(*) <= (SELECT COUNT(*) FROM i AS q WHERE q.k = l.k)",
	"SELECT SUM(c), COUNT(c) FROM (SELECT (SELECT SUM(q.m) FROM i AS q WHERE q.k = l.k) AS c FROM o AS l) AS z",
}

// Each grouped shape answers as the subquery run per outer row does
// (icesql_decorrelate = OFF), on the vector path and off it, and EXPLAIN
// shows the join.
func TestGroupedSubqueriesMatchRowPath(t *testing.T) {
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	conn := openConnOn(t, e)
	mustExec(t, conn, "CREATE DATABASE gs", "USE gs")
	createSubqueryTables(t, conn)
	for _, q := range groupedShapes {
		for _, vectorize := range []string{"ON", "OFF"} {
			mustExec(t, conn, "SET icesql_vectorize = "+vectorize, "SET icesql_decorrelate = ON")
			plan := strings.Join(explainLines(t, conn, q), "\n")
			// The scan's vectorized note names the expression the vector
			// rule saw, before the subquery was grouped: not a plan node.
			nodes := strings.Join(slices.DeleteFunc(explainLines(t, conn, q), func(l string) bool {
				return strings.Contains(l, "vectorized")
			}), "\n")
			if !strings.Contains(plan, "GroupedLeftJoin(outer row;") || strings.Contains(nodes, "Subquery(") {
				t.Errorf("vectorize %s: %s is not decorrelated:\n%s", vectorize, q, plan)
			}
			got := queryStrings(t, conn, q)
			mustExec(t, conn, "SET icesql_decorrelate = OFF")
			want := queryStrings(t, conn, q)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("vectorize %s: %s\n got %v\nwant %v", vectorize, q, got, want)
			}
		}
	}
	// A prepared statement's parameter within the subquery, in process and
	// over the wire (server-side prepared statements).
	wire := wireConn(t, wireServer(t, e))
	mustExec(t, wire, "USE gs")
	param := "SELECT l.id, (SELECT COUNT(*) FROM i AS q WHERE q.k = l.k AND q.id > ?) FROM o AS l ORDER BY l.id"
	for _, c := range []*sql.Conn{conn, wire} {
		var runs [][]string
		for _, decorrelate := range []string{"ON", "OFF"} {
			mustExec(t, c, "SET icesql_decorrelate = "+decorrelate)
			for _, arg := range []int{10, 150} {
				runs = append(runs, queryStrings(t, c, param, arg))
			}
		}
		if !slices.Equal(runs[0], runs[2]) || !slices.Equal(runs[1], runs[3]) || slices.Equal(runs[0], runs[1]) {
			t.Errorf("%s: decorrelated %v and %v, per outer row %v and %v", param, runs[0], runs[1], runs[2], runs[3])
		}
	}
}

// createSubqueryTables makes tables o (120 rows, 2 files) and i (200 rows,
// 4 files, bucketed) with the same columns, a NULL in about one value in
// eleven, keys that repeat and ids that overlap.
func createSubqueryTables(t *testing.T, conn *sql.Conn) {
	cols := "id BIGINT, k BIGINT, s STRING, d DATE, x DOUBLE, m DECIMAL(10,2), b BOOLEAN"
	mustExec(t, conn, "CREATE TABLE o ("+cols+")", "CREATE TABLE i ("+cols+") PARTITIONED BY (bucket(4, id))")
	value := func(n, col int) string {
		if (n*7+col)%11 == 0 {
			return "NULL"
		}
		switch col {
		case 1:
			return fmt.Sprint(n % 13)
		case 2:
			return fmt.Sprintf("'w%d'", n%6)
		case 3:
			return fmt.Sprintf("'2024-01-%02d'", 1+n%9)
		case 4:
			return fmt.Sprintf("%d.25", n%17-5)
		case 5:
			return fmt.Sprintf("%d.%02d", n%10, n%4*25)
		case 6:
			return []string{"TRUE", "FALSE"}[n%2]
		}
		return fmt.Sprint(n)
	}
	for _, tbl := range []struct {
		name             string
		inserts, per, at int
	}{{"o", 2, 60, 0}, {"i", 4, 50, 7}} {
		for ins := range tbl.inserts {
			var rows []string
			for j := range tbl.per {
				n := ins*tbl.per + j + tbl.at
				vals := make([]string, 7)
				for c := range vals {
					vals[c] = value(n, c)
				}
				rows = append(rows, "("+strings.Join(vals, ", ")+")")
			}
			mustExec(t, conn, "INSERT INTO "+tbl.name+" VALUES "+strings.Join(rows, ", "))
		}
	}
}

// BenchmarkDecorrelated times correlated subqueries over issue 16's
// tables with the rewrite on and off:
//
//	go test ./engine -run '^$' -bench Decorrelated -benchtime 3x
func BenchmarkDecorrelated(b *testing.B) {
	e := openEngine(b, engine.Config{Warehouse: b.TempDir()})
	conn := openConnOn(b, e)
	for _, s := range []string{"CREATE DATABASE cliffs", "USE cliffs"} {
		if _, err := conn.ExecContext(b.Context(), s); err != nil {
			b.Fatal(err)
		}
	}
	createCliffTables(b, conn)
	shapes := []struct{ name, q string }{
		{"equality", "SELECT l.id, (SELECT MAX(q.x) FROM t2 AS q WHERE q.k = l.k) FROM t1 AS l"},
		{"equality-decimal-where", "SELECT COUNT(*) FROM t1 AS l WHERE l.m < (SELECT 2 * AVG(q.m) FROM t2 AS q WHERE q.k = l.k)"},
		{"range", "SELECT COUNT(*) FROM t1 AS l WHERE l.x > (SELECT AVG(q.x) FROM t2 AS q WHERE q.k < l.k)"},
	}
	for _, vectorize := range []string{"ON", "OFF"} {
		for _, decorrelate := range []string{"ON", "OFF"} {
			for _, s := range []string{"SET icesql_vectorize = " + vectorize, "SET icesql_decorrelate = " + decorrelate} {
				if _, err := conn.ExecContext(b.Context(), s); err != nil {
					b.Fatal(err)
				}
			}
			for _, s := range shapes {
				b.Run("vectorize="+vectorize+"/decorrelate="+decorrelate+"/"+s.name, func(b *testing.B) {
					for b.Loop() {
						queryStrings(b, conn, s.q)
					}
				})
			}
		}
	}
}

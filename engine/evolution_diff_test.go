package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestEvolvedReadsMatch builds a table history of schema changes (added,
// dropped, re-added with another type, renamed, reordered and widened
// columns) with deletes and updates between them, in both write modes and
// both format versions, and after every step runs each query shape on
// every column with the vector path on and off. Any error is a failure
// (the bug of issue 21 was an error on both paths, which a comparison of
// the two alone let through), the two paths must agree, and the plain
// scan must give the rows a model of the history holds.
func TestEvolvedReadsMatch(t *testing.T) {
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		for _, version := range []string{"2", "3"} {
			t.Run(mode+"/v"+version, func(t *testing.T) {
				_, conn, _ := openCounting(t)
				mustExec(t, conn, "CREATE DATABASE db", "USE db")
				h := &history{t: t, conn: conn}
				h.run(fmt.Sprintf("CREATE TABLE h (id BIGINT, a INT, f FLOAT, p DECIMAL(9,2), s STRING, old STRING) TBLPROPERTIES "+
					"('format-version'='%s', 'write.delete.mode'='%s', 'write.update.mode'='%s', 'write.merge.mode'='%s')",
					version, mode, mode, mode))
				h.cols = []string{"id", "a", "f", "p", "s", "old"}
				h.insert([]string{"1", "10", "1.5", "1.25", "'x'", "'o1'"}, []string{"2", "NULL", "NULL", "NULL", "NULL", "NULL"},
					[]string{"3", "-7", "-2.5", "-3.50", "'y'", "'o3'"})
				h.check()

				h.run("ALTER TABLE h ADD COLUMN tier STRING")
				h.addColumn("tier")
				h.check()
				h.insert([]string{"4", "4", "4.5", "4.00", "'z'", "'o4'", "'gold'"})
				h.check()

				h.run("ALTER TABLE h ALTER COLUMN a TYPE BIGINT", "ALTER TABLE h MODIFY f DOUBLE", "ALTER TABLE h ALTER COLUMN p TYPE DECIMAL(18,2)")
				h.insert([]string{"5", "3000000000", "0.25", "123456789.01", "'w'", "NULL", "NULL"})
				h.check()

				h.run("ALTER TABLE h RENAME COLUMN s TO s2", "ALTER TABLE h ALTER COLUMN tier FIRST")
				h.rename("s", "s2")
				h.move("tier", 0)
				h.check()

				h.run("ALTER TABLE h DROP COLUMN old", "ALTER TABLE h ADD COLUMN old INT")
				h.dropColumn("old")
				h.addColumn("old")
				h.check()
				h.insert([]string{"'silver'", "6", "6", "6.5", "6.00", "'v'", "66"})
				h.check()

				h.run("DELETE FROM h WHERE old IS NULL AND id = 2")
				h.remove("2")
				h.check()
				h.run("UPDATE h SET tier = 'bronze', old = 7 WHERE tier IS NULL AND id < 4")
				h.set(func(r map[string]string) bool { return r["tier"] == "NULL" && r["id"] < "4" }, map[string]string{"tier": "bronze", "old": "7"})
				h.check()

				// Every column of the first files dropped: they hold none
				// of the table's columns, with and without deletes.
				h.run("ALTER TABLE h DROP COLUMN a", "ALTER TABLE h DROP COLUMN f", "ALTER TABLE h DROP COLUMN p", "ALTER TABLE h DROP COLUMN s2")
				for _, c := range []string{"a", "f", "p", "s2"} {
					h.dropColumn(c)
				}
				h.check()
				h.run("DELETE FROM h WHERE tier = 'gold'")
				h.removeWhere(func(r map[string]string) bool { return r["tier"] == "gold" })
				h.check()
				h.run("UPDATE h SET old = 8 WHERE old = 7")
				h.set(func(r map[string]string) bool { return r["old"] == "7" }, map[string]string{"old": "8"})
				h.check()
				t.Logf("%d queries compared", h.queries)
			})
		}
	}
}

// history is a table h and a model of its rows: each row's values as the
// client prints them, by column name.
type history struct {
	t       *testing.T
	conn    *sql.Conn
	cols    []string
	rows    []map[string]string
	queries int
}

func (h *history) run(stmts ...string) {
	h.t.Helper()
	mustExec(h.t, h.conn, stmts...)
}

// insert inserts rows given as SQL literals in column order.
func (h *history) insert(rows ...[]string) {
	h.t.Helper()
	var vals []string
	for _, r := range rows {
		vals = append(vals, "("+strings.Join(r, ", ")+")")
		m := map[string]string{}
		for i, c := range h.cols {
			m[c] = strings.Trim(r[i], "'")
		}
		h.rows = append(h.rows, m)
	}
	h.run("INSERT INTO h VALUES " + strings.Join(vals, ", "))
}

func (h *history) addColumn(c string) {
	h.cols = append(h.cols, c)
	for _, r := range h.rows {
		r[c] = "NULL"
	}
}

func (h *history) dropColumn(c string) {
	h.cols = slices.DeleteFunc(h.cols, func(x string) bool { return x == c })
	for _, r := range h.rows {
		delete(r, c)
	}
}

func (h *history) rename(from, to string) {
	h.cols[slices.Index(h.cols, from)] = to
	for _, r := range h.rows {
		r[to] = r[from]
		delete(r, from)
	}
}

func (h *history) move(c string, to int) {
	h.cols = slices.DeleteFunc(h.cols, func(x string) bool { return x == c })
	h.cols = slices.Insert(h.cols, to, c)
}

func (h *history) remove(id string) {
	h.removeWhere(func(r map[string]string) bool { return r["id"] == id })
}

func (h *history) removeWhere(f func(map[string]string) bool) {
	h.rows = slices.DeleteFunc(h.rows, f)
}

func (h *history) set(where func(map[string]string) bool, to map[string]string) {
	for _, r := range h.rows {
		if where(r) {
			for k, v := range to {
				r[k] = v
			}
		}
	}
}

// check compares the plain scan with the model, then every query shape on
// every column with the vector path on and off.
func (h *history) check() {
	h.t.Helper()
	var want []string
	for _, r := range h.rows {
		var vals []string
		for _, c := range h.cols {
			vals = append(vals, r[c])
		}
		want = append(want, strings.Join(vals, "|"))
	}
	slices.Sort(want)
	mustExec(h.t, h.conn, "SET icesql_vectorize = OFF")
	got, err := plainRows(h.conn, "SELECT * FROM h")
	if err != nil {
		h.t.Fatalf("SELECT * FROM h: %v", err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Errorf("SELECT * FROM h (columns %v):\n  got  %v\n  want %v", h.cols, got, want)
	}
	for _, q := range evolvedQueries(h.cols) {
		h.queries++
		mustExec(h.t, h.conn, "SET icesql_vectorize = OFF")
		off, offErr := resultRows(h.conn, q)
		mustExec(h.t, h.conn, "SET icesql_vectorize = ON")
		on, onErr := resultRows(h.conn, q)
		switch {
		case offErr != nil || onErr != nil:
			h.t.Errorf("%s: vector path error %v, row path error %v", q, onErr, offErr)
		case on != off:
			h.t.Errorf("%s:\n  vectorized %s\n  row path   %s", q, on, off)
		}
	}
}

// evolvedQueries are the query shapes of every read path over each
// column: aggregates (vectorized, from metadata), filters that prune,
// GROUP BY, DISTINCT, ORDER BY ... LIMIT, a join.
func evolvedQueries(cols []string) []string {
	out := []string{"SELECT COUNT(*) FROM h"}
	for _, c := range cols {
		for _, q := range []string{
			"SELECT COUNT(%[1]s), MIN(%[1]s), MAX(%[1]s) FROM h",
			"SELECT COUNT(*) FROM h WHERE %[1]s IS NULL",
			"SELECT COUNT(*) FROM h WHERE %[1]s IS NOT NULL",
			"SELECT COUNT(*), MAX(%[1]s) FROM h WHERE %[1]s > '0' OR %[1]s < '0'",
			"SELECT %[1]s, COUNT(*) FROM h GROUP BY %[1]s",
			"SELECT DISTINCT %[1]s FROM h",
			"SELECT %[1]s FROM h ORDER BY %[1]s, id LIMIT 3",
			"SELECT %[1]s FROM h ORDER BY %[1]s DESC LIMIT 1",
			"SELECT %[1]s FROM h WHERE %[1]s IS NULL",
			"SELECT x.%[1]s, y.%[1]s FROM h x JOIN h y ON x.id = y.id",
			"SELECT COUNT(*) FROM h x JOIN h y ON x.%[1]s = y.%[1]s",
		} {
			out = append(out, fmt.Sprintf(q, "`"+c+"`"))
		}
	}
	return out
}

// plainRows is q's rows as text, NULL for NULL, sorted.
func plainRows(conn *sql.Conn, q string) ([]string, error) {
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var parts []string
		for _, v := range vals {
			if !v.Valid {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, v.String)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out, rows.Err()
}

package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// tpchShapes reads sqltests' tpch_shapes.test: the statements that make its
// tables, and its queries by the name of the comment above them. The rows
// they return are checked there, in-process and over the wire.
func tpchShapes(t *testing.T) (statements []string, queries map[string]string) {
	t.Helper()
	data, err := os.ReadFile("../sqltests/testdata/tpch_shapes.test")
	if err != nil {
		t.Fatal(err)
	}
	queries = map[string]string{}
	for _, rec := range strings.Split(string(data), "\n\n") {
		lines := strings.Split(strings.TrimSpace(rec), "\n")
		var name string
		for i, l := range lines {
			switch {
			case strings.HasPrefix(l, "# ") && name == "":
				name, _, _ = strings.Cut(strings.TrimPrefix(l, "# "), ":")
			case l == "statement ok" && i+1 < len(lines):
				statements = append(statements, lines[i+1])
			case strings.HasPrefix(l, "query ") && i+1 < len(lines):
				queries[name] = lines[i+1]
			}
		}
	}
	return statements, queries
}

// TestJoinConditionsReachCrossJoins checks that the TPC-H shapes that were
// nested loops are hashed joins now, on the vector path and off it: join
// conditions in the WHERE clause reach the cross joins below the semi and
// anti joins of IN and NOT IN (Q16), an OR's shared join condition is taken
// out of it (Q19), a LEFT or RIGHT JOIN's ON conditions on its inner side
// alone filter that side (Q13), and a semi join over a GROUP BY no longer
// keeps the join planner from hashing the other joins (Q18). The rows are
// tpch_shapes.test's.
func TestJoinConditionsReachCrossJoins(t *testing.T) {
	statements, queries := tpchShapes(t)
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn, statements...)
	for _, vectorize := range []string{"ON", "OFF"} {
		mustExec(t, conn, "SET icesql_vectorize = "+vectorize)
		for _, name := range []string{"q13", "q16", "q18", "q19", "q21", "notin_null", "notin_nullable_comment", "or_shared_alone",
			"or_shared_nulls", "right_join_on", "left_join_null_padded", "in_semi_cross", "exists_residual", "not_exists_residual", "not_exists_null_key"} {
			q, ok := queries[name]
			if !ok {
				t.Fatalf("tpch_shapes.test has no query %s", name)
			}
			plan := explainText(t, conn, q)
			for _, l := range strings.Split(plan, "\n") {
				// Q18's semi join probes the grouped subquery's rows,
				// computed once and held in memory: few, as HAVING keeps.
				cached := name == "q18" && strings.Contains(l, "SemiJoin(") && strings.Contains(l, "; lineitem_icesql_sq1)")
				if strings.Contains(l, "nested loop") && !cached || strings.Contains(l, "CrossJoin") {
					t.Errorf("vectorize %s: %s plans a nested loop:\n%s", vectorize, name, plan)
					break
				}
			}
		}
	}
}

package engine_test

import (
	"strings"
	"testing"
)

// TestVectorizedExactSums checks that the vector path gives MySQL's exact
// DECIMAL SUM and AVG where a float64 would lose digits (sums past 2^53
// and past the 64-bit range) and rounds AVG half away from zero at the
// argument's scale plus 4, as the row path's exact aggregate does.
func TestVectorizedExactSums(t *testing.T) {
	_, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE big (l BIGINT, d DECIMAL(10,2), g INT)",
		`INSERT INTO big VALUES
		 (9223372036854775807, 0.01, 1), (9223372036854775807, 0.01, 1), (9223372036854775807, 0.01, 1),
		 (9007199254740993, -0.01, 2), (1, -0.01, 2), (NULL, -0.02, 2)`)
	for _, c := range []struct{ q, want string }{
		{"SELECT g, SUM(l), AVG(l), SUM(d), AVG(d) FROM big GROUP BY g ORDER BY g",
			"g:INT,SUM(l):DECIMAL,AVG(l):DECIMAL,SUM(d):DECIMAL,AVG(d):DECIMAL\n" +
				"int64:1|string:27670116110564327421|string:9223372036854775807.0000|string:0.03|string:0.010000|\n" +
				"int64:2|string:9007199254740994|string:4503599627370497.0000|string:-0.04|string:-0.013333|"},
		{"SELECT SUM(l), AVG(l * 2) FROM big WHERE g = 2",
			"SUM(l):DECIMAL,AVG(l * 2):DECIMAL\nstring:9007199254740994|string:9007199254740994.0000|"},
	} {
		for _, mode := range []string{"OFF", "ON"} {
			mustExec(t, conn, "SET icesql_vectorize = "+mode)
			got, err := resultRows(conn, c.q)
			if err != nil {
				t.Fatalf("%s (vectorize %s): %v", c.q, mode, err)
			}
			if got != c.want {
				t.Errorf("%s (vectorize %s):\n got  %s\n want %s", c.q, mode, got, c.want)
			}
		}
		if plan := explainText(t, conn, c.q); !strings.Contains(plan, "VectorizedGroupBy") {
			t.Errorf("%s: not vectorized:\n%s", c.q, plan)
		}
	}
}

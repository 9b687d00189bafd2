package engine_test

import (
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestExistsSidesReadTheirColumns checks that the lineitem scans on the
// right of TPC-H Q4's and Q21's EXISTS and NOT EXISTS joins read the
// columns their conditions name, not all 16 that SELECT * lists
// (planrules/semijoins.go, pruneSemiJoinSides). The rows are tpch_shapes.test's.
func TestExistsSidesReadTheirColumns(t *testing.T) {
	statements, queries := tpchShapes(t)
	conn := openConn(t, engine.Config{Warehouse: t.TempDir()})
	mustExec(t, conn, statements...)
	for _, vectorize := range []string{"ON", "OFF"} {
		mustExec(t, conn, "SET icesql_vectorize = "+vectorize)
		for name, want := range map[string][]string{
			"q04": {"[l_orderkey l_commitdate l_receiptdate]"},
			"q21": {"[l_orderkey l_suppkey l_commitdate l_receiptdate]", "[l_orderkey l_suppkey]"},
		} {
			plan := explainText(t, conn, queries[name])
			for _, cols := range want {
				if !strings.Contains(plan, "columns: "+cols) {
					t.Errorf("vectorize %s: %s reads no scan of %s:\n%s", vectorize, name, cols, plan)
				}
			}
			if strings.Contains(plan, "l_comment") {
				t.Errorf("vectorize %s: %s reads l_comment:\n%s", vectorize, name, plan)
			}
		}
	}
}

package planner

import "testing"

func TestRewriteTimeTravel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT * FROM t VERSION AS OF 123", "SELECT * FROM t AS OF 123"},
		{"SELECT * FROM t VERSION AS OF 'tag1' WHERE x = 1", "SELECT * FROM t AS OF 'tag1' WHERE x = 1"},
		{"SELECT * FROM icesql.db.t version as of 5 AS a", "SELECT * FROM db.t as of 5 AS a"},
		// vitess lexes FOR VERSION as one token and the grammar takes it as AS OF
		{"SELECT * FROM t FOR VERSION AS OF 123", "SELECT * FROM t FOR VERSION AS OF 123"},
		{"SELECT * FROM t FOR SYSTEM_VERSION AS OF 123", "SELECT * FROM t AS OF 123"},
		{"SELECT * FROM t TIMESTAMP AS OF '2024-01-01 10:00:00'", "SELECT * FROM t AS OF TIMESTAMP('2024-01-01 10:00:00')"},
		{"SELECT * FROM t FOR TIMESTAMP AS OF '2024-01-01'", "SELECT * FROM t AS OF TIMESTAMP('2024-01-01')"},
		{"SELECT * FROM t TIMESTAMP AS OF 1700000000", "SELECT * FROM t AS OF FROM_UNIXTIME(1700000000)"},
		{"SELECT * FROM t TIMESTAMP AS OF NOW()", "SELECT * FROM t AS OF NOW()"},
		{"SELECT * FROM a VERSION AS OF 1 JOIN b TIMESTAMP AS OF '2024-01-01' ON a.id = b.id",
			"SELECT * FROM a AS OF 1 JOIN b AS OF TIMESTAMP('2024-01-01') ON a.id = b.id"},
		// MySQL's own forms and look-alikes pass unchanged
		{"SELECT * FROM t AS OF 123", "SELECT * FROM t AS OF 123"},
		{"SELECT * FROM t FOR SYSTEM_TIME AS OF '2024-01-01'", "SELECT * FROM t FOR SYSTEM_TIME AS OF '2024-01-01'"},
		{"SELECT 'VERSION AS OF 1' FROM t", "SELECT 'VERSION AS OF 1' FROM t"},
		{"SELECT version AS v FROM t", "SELECT version AS v FROM t"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkRewrite(t, tt.in, tt.want) })
	}
}

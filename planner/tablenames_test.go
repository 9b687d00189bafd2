package planner

import "testing"

func TestRewriteTableSuffixNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT * FROM db.t.snapshots", "SELECT * FROM db.`t$snapshots`"},
		{"SELECT * FROM icesql.db.t.snapshots", "SELECT * FROM db.`t$snapshots`"},
		{"SELECT * FROM `db`.`t`.`history` h", "SELECT * FROM `db`.`t$history` h"},
		{"SELECT h.snapshot_id FROM db.t.history h JOIN db.t.snapshots s ON h.snapshot_id = s.snapshot_id",
			"SELECT h.snapshot_id FROM db.`t$history` h JOIN db.`t$snapshots` s ON h.snapshot_id = s.snapshot_id"},
		{"SELECT * FROM db.t.files, db.t.manifests WHERE 1 = 1", "SELECT * FROM db.`t$files`, db.`t$manifests` WHERE 1 = 1"},
		{"SELECT * FROM x WHERE id IN (SELECT snapshot_id FROM db.t.snapshots)",
			"SELECT * FROM x WHERE id IN (SELECT snapshot_id FROM db.`t$snapshots`)"},
		{"DESCRIBE db.t.files", "DESCRIBE db.`t$files`"},
		{"SELECT * FROM a FOR SYSTEM_TIME AS OF '2024-01-01', db.t.snapshots", "SELECT * FROM a FOR SYSTEM_TIME AS OF '2024-01-01', db.`t$snapshots`"},
		{"SHOW CREATE TABLE db.t.snapshots", "SHOW CREATE TABLE db.`t$snapshots`"},
		{"INSERT INTO db.t.branch_dev VALUES (1)", "INSERT INTO db.`t$branch_dev` VALUES (1)"},
		// MySQL's fully qualified columns stay as they are.
		{"SELECT db.t.history, db.t.id FROM db.t WHERE db.t.files > 1 ORDER BY db.t.id",
			"SELECT db.t.history, db.t.id FROM db.t WHERE db.t.files > 1 ORDER BY db.t.id"},
		{"SELECT EXTRACT(YEAR FROM db.t.ts) FROM db.t", "SELECT EXTRACT(YEAR FROM db.t.ts) FROM db.t"},
		{"SELECT a, db.t.b FROM db.t", "SELECT a, db.t.b FROM db.t"},
		{"SELECT 'FROM db.t.snapshots'", "SELECT 'FROM db.t.snapshots'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkRewrite(t, tt.in, tt.want) })
	}
}

func TestRewriteSubscripts(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT s.summary['spark.app.id'] FROM s`, `SELECT JSON_UNQUOTE(JSON_EXTRACT(s.summary, '$."spark.app.id"')) FROM s`},
		{`SELECT summary["added-records"] FROM s`, `SELECT JSON_UNQUOTE(JSON_EXTRACT(summary, '$."added-records"')) FROM s`},
		{`SELECT m['a']['b'], l[0] FROM s`, `SELECT JSON_UNQUOTE(JSON_EXTRACT(m, '$."a"."b"')), JSON_UNQUOTE(JSON_EXTRACT(l, '$[0]')) FROM s`},
		{`SELECT f(x)['k'] FROM s`, `SELECT JSON_UNQUOTE(JSON_EXTRACT(f(x), '$."k"')) FROM s`},
		{`SELECT m['it''s'] FROM s`, `SELECT JSON_UNQUOTE(JSON_EXTRACT(m, '$."it''s"')) FROM s`},
		{`SELECT '[x]' FROM s`, `SELECT '[x]' FROM s`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkRewrite(t, tt.in, tt.want) })
	}
}

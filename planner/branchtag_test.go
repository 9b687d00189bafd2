package planner

import (
	"context"
	"reflect"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// TestRefDDL checks the branch and tag forms of ALTER TABLE.
func TestRefDDL(t *testing.T) {
	day := int64(24 * 3600 * 1000)
	tests := []struct {
		query string
		want  *RefDDL
	}{
		{"ALTER TABLE t CREATE BRANCH b", &RefDDL{Name: "b", Create: true}},
		{"ALTER TABLE t CREATE BRANCH IF NOT EXISTS `audit-branch`", &RefDDL{Name: "audit-branch", Create: true, IfNotExists: true}},
		{"ALTER TABLE t CREATE BRANCH b1 AS OF VERSION 42 RETAIN 10 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS 2 days",
			&RefDDL{Name: "b1", Create: true, SnapshotID: ptr(int64(42)), MaxRefAgeMs: ptr(10 * day),
				MinSnapshotsToKeep: ptr(2), MaxSnapshotAgeMs: ptr(2 * day)}},
		{"ALTER TABLE t CREATE BRANCH b WITH SNAPSHOT RETENTION 3 HOURS", &RefDDL{Name: "b", Create: true, MaxSnapshotAgeMs: ptr(int64(3 * 3600 * 1000))}},
		{"ALTER TABLE t CREATE OR REPLACE BRANCH b RETAIN 5 MINUTES", &RefDDL{Name: "b", Create: true, Replace: true, MaxRefAgeMs: ptr(int64(300000))}},
		{"alter table t replace branch b as of version 7", &RefDDL{Name: "b", Replace: true, SnapshotID: ptr(int64(7))}},
		{"ALTER TABLE t DROP BRANCH IF EXISTS b", &RefDDL{Name: "b", Drop: true, IfExists: true}},
		{"ALTER TABLE t CREATE TAG v1 AS OF VERSION 1 RETAIN 7 DAYS", &RefDDL{Tag: true, Name: "v1", Create: true, SnapshotID: ptr(int64(1)), MaxRefAgeMs: ptr(7 * day)}},
		{"ALTER TABLE t CREATE OR REPLACE TAG v1", &RefDDL{Tag: true, Name: "v1", Create: true, Replace: true}},
		{"ALTER TABLE t REPLACE TAG v1", &RefDDL{Tag: true, Name: "v1", Replace: true}},
		{"ALTER TABLE t DROP TAG v1", &RefDDL{Tag: true, Name: "v1", Drop: true}},
	}
	for _, tt := range tests {
		stmt, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), tt.query, ';', false, ast.ParserOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		inj, ok := stmt.(ast.InjectedStatement)
		if !ok {
			t.Fatalf("%s: parsed as %T", tt.query, stmt)
		}
		a := inj.Statement.(*AlterTable)
		if !reflect.DeepEqual(a.Action, tt.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tt.query, a.Action, tt.want)
		}
	}
}

// TestRefDDLErrors checks that malformed branch and tag DDL is a syntax
// error naming what was expected.
func TestRefDDLErrors(t *testing.T) {
	for _, q := range []string{
		"ALTER TABLE t CREATE BRANCH",
		"ALTER TABLE t CREATE BRANCH 123",
		"ALTER TABLE t CREATE BRANCH b RETAIN",
		"ALTER TABLE t CREATE BRANCH b RETAIN 1 SECONDS",
		"ALTER TABLE t CREATE BRANCH b WITH SNAPSHOT RETENTION",
		"ALTER TABLE t CREATE BRANCH b AS OF VERSION 'x'",
		"ALTER TABLE t CREATE TAG v RETAIN 1 DAYS WITH SNAPSHOT RETENTION 1 SNAPSHOTS",
		"ALTER TABLE t REPLACE BRANCH IF NOT EXISTS b",
		"ALTER TABLE t DROP TAG v1 RETAIN 1 DAYS",
	} {
		_, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), q, ';', false, ast.ParserOptions{})
		if err == nil {
			t.Errorf("%s: parsed, want a syntax error", q)
		}
	}
}

// TestSparkSet checks Spark's SET of the WAP settings.
func TestSparkSet(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"SET spark.wap.branch = audit-branch", "SET @@SESSION.icesql_wap_branch = 'audit-branch'"},
		{"SET spark.wap.branch='audit'", "SET @@SESSION.icesql_wap_branch = 'audit'"},
		{"set icesql.wap.id = it's", "SET @@SESSION.icesql_wap_id = 'it''s'"},
		{"SET spark.wap.id =", "SET @@SESSION.icesql_wap_id = ''"},
		{"RESET spark.wap.branch", "SET @@SESSION.icesql_wap_branch = ''"},
		{"SET spark.wap.id", "SELECT 'spark.wap.id' AS `key`, @@SESSION.icesql_wap_id AS `value`"},
	} {
		checkRewrite(t, tt.in, tt.want)
	}
	// Other dotted names keep their MySQL meaning.
	if _, got := rewriteOne(t, "SET a.b = 1"); got != "SET a.b = 1" {
		t.Errorf("SET a.b = 1 rewritten to %q", got)
	}
}

package planner

import (
	"context"
	"reflect"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func TestParseCall(t *testing.T) {
	tests := []struct {
		in       string
		name     string
		argNames []string
		args     []string // the argument expressions as vitess prints them
	}{
		{"CALL system.register_table('db.t', '/x/metadata')", "register_table", []string{"", ""}, []string{"'db.t'", "'/x/metadata'"}},
		{"CALL icesql.system.rollback_to_snapshot(table => 'db.t', snapshot_id => 123)", "rollback_to_snapshot",
			[]string{"table", "snapshot_id"}, []string{"'db.t'", "123"}},
		{"call ICESQL.SYSTEM.expire_snapshots('db.t', older_than => now() - interval 1 day, retain_last=>5)", "expire_snapshots",
			[]string{"", "older_than", "retain_last"}, []string{"'db.t'", "now() - interval 1 day", "5"}},
		{"CALL `system`.ancestors_of('db.t', concat('a', 'b'))", "ancestors_of", []string{"", ""}, []string{"'db.t'", "concat('a', 'b')"}},
		{"CALL system.rewrite_manifests", "rewrite_manifests", nil, nil},
		{"CALL system.rewrite_manifests()", "rewrite_manifests", nil, nil},
		// Spark's collection literals become JSON values
		{"CALL system.rewrite_data_files(table => 'db.t', options => map('min-input-files', '2', 'map', 'array(1)'))", "rewrite_data_files",
			[]string{"table", "options"}, []string{"'db.t'", "JSON_OBJECT('min-input-files', '2', 'map', 'array(1)')"}},
		{"CALL system.expire_snapshots('db.t', snapshot_ids => ARRAY (1, 2))", "expire_snapshots",
			[]string{"", "snapshot_ids"}, []string{"'db.t'", "JSON_ARRAY(1, 2)"}},
		// ALTER TABLE ... EXECUTE: Trino's names and retention, Doris' "name" = value
		{"ALTER TABLE icesql.db.t EXECUTE optimize_manifests", "rewrite_manifests", []string{"table"}, []string{"'`icesql`.`db`.`t`'"}},
		{"ALTER TABLE t EXECUTE expire_snapshots(retention_threshold => '7d')", "expire_snapshots",
			[]string{"table", "older_than"}, []string{"'`t`'", "NOW() - interval 7 DAY"}},
		{`ALTER TABLE db.t EXECUTE rollback_to_snapshot("snapshot_id" = 5)`, "rollback_to_snapshot",
			[]string{"table", "snapshot_id"}, []string{"'`db`.`t`'", "5"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			stmt, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), tt.in, ';', false, ast.ParserOptions{})
			if err != nil {
				t.Fatal(err)
			}
			inj, ok := stmt.(ast.InjectedStatement)
			if !ok {
				t.Fatalf("got %T, want an injected statement", stmt)
			}
			call, ok := inj.Statement.(*Call)
			if !ok {
				t.Fatalf("got %T, want *Call", inj.Statement)
			}
			if call.Name != tt.name || !reflect.DeepEqual(call.ArgNames, tt.argNames) {
				t.Errorf("got %s %q, want %s %q", call.Name, call.ArgNames, tt.name, tt.argNames)
			}
			var args []string
			for _, e := range inj.Children {
				args = append(args, ast.String(e))
			}
			if !reflect.DeepEqual(args, tt.args) {
				t.Errorf("arguments %q, want %q", args, tt.args)
			}
		})
	}
}

func TestParseCallLeavesMySQLCalls(t *testing.T) {
	for _, in := range []string{"CALL p(1)", "CALL db.p(1, 2)", "CALL sys.p()"} {
		stmt, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), in, ';', false, ast.ParserOptions{})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if _, ok := stmt.(*ast.Call); !ok {
			t.Errorf("%s: got %T, want MySQL's *ast.Call", in, stmt)
		}
	}
}

func TestParseCallErrors(t *testing.T) {
	for _, in := range []string{
		"CALL system.x(a => )",
		"CALL system.x(1,)",
		"CALL system.x(1",
		"CALL system.x(1) extra",
	} {
		if _, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), in, ';', false, ast.ParserOptions{}); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

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

package planner

import (
	"reflect"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func TestRewriteInsertOverwrite(t *testing.T) {
	tests := []struct{ in, want string }{
		{"INSERT OVERWRITE t SELECT * FROM s",
			"INSERT INTO `t#icesql-overwrite:{}` SELECT * FROM s"},
		{"INSERT OVERWRITE TABLE icesql.db.t VALUES (1, 'a')",
			"INSERT INTO db.`t#icesql-overwrite:{}` VALUES (1, 'a')"},
		{"insert overwrite table t partition (region = 'eu', day) select id, day from s",
			"insert INTO `t#icesql-overwrite:{\"static\":[{\"column\":\"region\",\"value\":\"eu\"}],\"dynamic\":[\"day\"]}` select id, day from s"},
		{"INSERT OVERWRITE t PARTITION (n = -5, d = DATE '2024-01-02', z = NULL) SELECT 1",
			"INSERT INTO `t#icesql-overwrite:{\"static\":[{\"column\":\"n\",\"value\":\"-5\"},{\"column\":\"d\",\"value\":\"2024-01-02\"},{\"column\":\"z\",\"null\":true}]}` SELECT 1"},
		{"SET spark.sql.sources.partitionOverwriteMode = DYNAMIC",
			"SET icesql_partition_overwrite_mode = 'dynamic'"},
		{"SET spark.sql.sources.partitionOverwriteMode='static'",
			"SET icesql_partition_overwrite_mode = 'static'"},
	}
	for _, tt := range tests {
		checkRewrite(t, tt.in, tt.want)
	}
}

func TestOverwriteTarget(t *testing.T) {
	stmt, _ := rewriteOne(t, "INSERT OVERWRITE t PARTITION (`a b` = 'x`y', c) SELECT 1")
	ins, ok := stmt.(*ast.Insert)
	if !ok {
		t.Fatalf("parsed %T, want *ast.Insert", stmt)
	}
	name, o, ok, err := OverwriteTarget(ins.Table.Name.String())
	if err != nil || !ok {
		t.Fatalf("OverwriteTarget(%q) = %v, %v", ins.Table.Name.String(), ok, err)
	}
	want := Overwrite{Static: []StaticValue{{Column: "a b", Value: "x`y"}}, Dynamic: []string{"c"}}
	if name != "t" || !reflect.DeepEqual(o, want) {
		t.Errorf("OverwriteTarget = %q, %+v; want t, %+v", name, o, want)
	}
	if _, _, ok, _ := OverwriteTarget("plain"); ok {
		t.Errorf("OverwriteTarget(plain) reports an overwrite")
	}
}

func TestRewriteInsertOverwriteErrors(t *testing.T) {
	for _, in := range []string{
		"INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT 1",
		"INSERT OVERWRITE t PARTITION (p = 1 + 1) SELECT 1",
		"INSERT OVERWRITE t PARTITION (p = 1, p = 2) SELECT 1",
		"INSERT OVERWRITE t PARTITION (p = 1) IF NOT EXISTS SELECT 1",
	} {
		stmt, _, _, err := NewParser("icesql").ParseWithOptions(t.Context(), in, ';', false, ast.ParserOptions{})
		if _, injected := stmt.(ast.InjectedStatement); err == nil && !injected {
			t.Errorf("%s: parsed as %T, want an error", in, stmt)
		}
	}
}

func TestRewriteReplaceTable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CREATE OR REPLACE TABLE t (id INT)",
			"CREATE TABLE t (id INT) COMMENT='icesql:{\"replace\":\"create-or-replace\"}'"},
		{"REPLACE TABLE t (id INT) PARTITIONED BY (id)",
			"CREATE TABLE t (id INT) COMMENT='icesql:{\"partition_by\":[\"id\"],\"replace\":\"replace\"}'"},
	}
	for _, tt := range tests {
		checkRewrite(t, tt.in, tt.want)
	}
	stmt, _ := rewriteOne(t, "CREATE OR REPLACE TABLE t USING iceberg AS SELECT 1 AS x")
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.TableSpec == nil {
		t.Fatalf("parsed %T, want a CREATE TABLE with options", stmt)
	}
	var comment string
	for _, o := range ddl.TableSpec.TableOpts {
		if o.Name == "COMMENT" {
			comment = o.Value
		}
	}
	opts, err := DecodeTableOptions(comment)
	if err != nil || opts.Replace != ReplaceOrCreate {
		t.Errorf("CTAS options %q: %+v, %v; want Replace %q", comment, opts, err, ReplaceOrCreate)
	}
}

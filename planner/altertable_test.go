package planner

import (
	"context"
	"reflect"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func ptr[T any](v T) *T { return &v }

// TestAlterTableForms checks the Spark/Iceberg ALTER TABLE forms the Parser
// injects, in every spelling, in single and multi-statement parsing.
func TestAlterTableForms(t *testing.T) {
	id := func(col string) PartitionTerm { return PartitionTerm{Transform: TransformIdentity, Column: col} }
	tests := []struct {
		query  string
		db     string
		action any
	}{
		{"ALTER TABLE t ADD PARTITION FIELD bucket(16, id)", "",
			&AddPartitionField{Term: PartitionTerm{Transform: TransformBucket, Param: 16, Column: "id"}}},
		{"ALTER TABLE icesql.db.t ADD PARTITION FIELD truncate(id, 4) AS short", "db",
			&AddPartitionField{Term: PartitionTerm{Transform: TransformTruncate, Param: 4, Column: "id"}, Name: "short"}},
		{"alter table db.t add partition field `region`", "db", &AddPartitionField{Term: id("region")}},
		{"ALTER TABLE t ADD PARTITION FIELD date_hour(ts)", "", &AddPartitionField{Term: PartitionTerm{Transform: TransformHour, Column: "ts"}}},
		{"ALTER TABLE t DROP PARTITION FIELD shard", "", &DropPartitionField{Term: id("shard")}},
		{"ALTER TABLE t DROP PARTITION FIELD months(ts)", "", &DropPartitionField{Term: PartitionTerm{Transform: TransformMonth, Column: "ts"}}},
		{"ALTER TABLE t REPLACE PARTITION FIELD ts_day WITH hour(ts) AS h", "",
			&ReplacePartitionField{From: id("ts_day"), To: PartitionTerm{Transform: TransformHour, Column: "ts"}, Name: "h"}},
		{"ALTER TABLE t WRITE ORDERED BY a, b DESC, c ASC NULLS LAST, years(d) NULLS FIRST", "", &WriteOrder{Distribution: "range", Fields: []SortTerm{
			{Term: id("a"), NullsFirst: true},
			{Term: id("b"), Descending: true},
			{Term: id("c")},
			{Term: PartitionTerm{Transform: TransformYear, Column: "d"}, NullsFirst: true},
		}}},
		{"ALTER TABLE t WRITE LOCALLY ORDERED BY a DESC NULLS FIRST", "", &WriteOrder{Distribution: "none", Fields: []SortTerm{{Term: id("a"), Descending: true, NullsFirst: true}}}},
		{"ALTER TABLE t WRITE DISTRIBUTED BY PARTITION", "", &WriteOrder{Distribution: "hash"}},
		{"ALTER TABLE t WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY a", "", &WriteOrder{Distribution: "hash", Fields: []SortTerm{{Term: id("a"), NullsFirst: true}}}},
		{"ALTER TABLE t WRITE UNORDERED", "", &WriteOrder{Distribution: "none"}},
		{"ALTER TABLE t SET TBLPROPERTIES ('a.b' = 'c', d.e = 1)", "", &SetProperties{Properties: map[string]string{"a.b": "c", "d.e": "1"}}},
		{"ALTER TABLE t UNSET TBLPROPERTIES ('a.b', d.e)", "", &UnsetProperties{Keys: []string{"a.b", "d.e"}}},
		{"ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('a')", "", &UnsetProperties{Keys: []string{"a"}, IfExists: true}},
		{"ALTER TABLE t ALTER COLUMN id TYPE BIGINT", "", &AlterColumn{Column: "id", Type: "BIGINT"}},
		{"ALTER TABLE t ALTER COLUMN s TYPE string", "", &AlterColumn{Column: "s", Type: "LONGTEXT"}},
		{"ALTER TABLE t ALTER id SET DATA TYPE DECIMAL(12, 2)", "", &AlterColumn{Column: "id", Type: "DECIMAL(12, 2)"}},
		{"ALTER TABLE t ALTER COLUMN id FIRST", "", &AlterColumn{Column: "id", First: true}},
		{"ALTER TABLE t ALTER COLUMN id AFTER name", "", &AlterColumn{Column: "id", After: "name"}},
		{"ALTER TABLE t ALTER COLUMN id COMMENT 'the id'", "", &AlterColumn{Column: "id", Comment: ptr("the id")}},
		{"ALTER TABLE t ALTER COLUMN id DROP NOT NULL", "", &AlterColumn{Column: "id", Nullable: ptr(true)}},
		{"ALTER TABLE t ALTER COLUMN id SET NOT NULL", "", &AlterColumn{Column: "id", Nullable: ptr(false)}},
	}
	for _, tt := range tests {
		for _, multi := range []bool{false, true} {
			stmt, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), tt.query+"; SELECT 1", ';', multi, ast.ParserOptions{})
			if !multi {
				stmt, _, _, err = NewParser("icesql").ParseWithOptions(context.Background(), tt.query, ';', false, ast.ParserOptions{})
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.query, err)
			}
			inj, ok := stmt.(ast.InjectedStatement)
			if !ok {
				t.Fatalf("%s: parsed as %T, want an injected statement", tt.query, stmt)
			}
			a, ok := inj.Statement.(*AlterTable)
			if !ok {
				t.Fatalf("%s: injected %T", tt.query, inj.Statement)
			}
			if a.Table.Name.String() != "t" || a.Table.DbQualifier.String() != tt.db {
				t.Errorf("%s: table %s.%s", tt.query, a.Table.DbQualifier, a.Table.Name)
			}
			if !reflect.DeepEqual(a.Action, tt.action) {
				t.Errorf("%s:\n got %#v\nwant %#v", tt.query, a.Action, tt.action)
			}
		}
	}
}

// TestAlterTableRewrites checks the Spark forms that become MySQL text, and
// that MySQL's own ALTER forms pass through.
func TestAlterTableRewrites(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ALTER TABLE t ADD COLUMNS (a INT, b STRING COMMENT 'x')", "ALTER TABLE t ADD COLUMN a INT, ADD COLUMN b LONGTEXT COMMENT 'x'"},
		{"ALTER TABLE icesql.db.t DROP COLUMNS (a, b)", "ALTER TABLE db.t DROP COLUMN a, DROP COLUMN b"},
		{"ALTER TABLE t ALTER COLUMN a SET DEFAULT 1", "ALTER TABLE t ALTER COLUMN a SET DEFAULT 1"},
		{"ALTER TABLE t ADD COLUMN a STRING FIRST", "ALTER TABLE t ADD COLUMN a LONGTEXT FIRST"},
		{"ALTER TABLE t RENAME TO u", "ALTER TABLE t RENAME TO u"},
	} {
		_, parsed, _, err := NewParser("icesql").ParseWithOptions(context.Background(), tt.in, ';', false, ast.ParserOptions{})
		if err != nil || parsed != tt.want {
			t.Errorf("%s:\n got %q, %v\nwant %q", tt.in, parsed, err, tt.want)
		}
	}
}

// TestAlterTableSyntaxErrors checks that malformed Spark forms are syntax
// errors that say what was expected.
func TestAlterTableSyntaxErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ALTER TABLE t ADD PARTITION FIELD", "syntax error near end of statement: expected a column or a partition transform"},
		{"ALTER TABLE t ADD PARTITION FIELD bucket(x, id)", "syntax error near 'x': bucket needs a whole number of buckets"},
		{"ALTER TABLE t ADD PARTITION FIELD weeks(ts)", "syntax error near 'weeks': unknown partition transform weeks: use years, months, days, hours, bucket or truncate"},
		{"ALTER TABLE t ADD PARTITION FIELD id AS", "syntax error near 'AS': expected AS name at the end"},
		{"ALTER TABLE t REPLACE PARTITION FIELD a", "syntax error near end of statement: REPLACE PARTITION FIELD expects WITH"},
		{"ALTER TABLE t WRITE ORDERED BY", "syntax error near end of statement: ORDERED BY expects at least one column"},
		{"ALTER TABLE t SET TBLPROPERTIES ('a')", "syntax error near ')': TBLPROPERTIES expects 'key' = 'value' pairs"},
		{"ALTER TABLE t UNSET TBLPROPERTIES ('a' = 'b')", "syntax error near ''a'': UNSET TBLPROPERTIES expects a list of 'key' strings"},
		{"ALTER TABLE t ADD COLUMNS (a INT,)", "syntax error near ')': empty column in ADD COLUMNS"},
		{"CREATE TABLE t (id INT) WRITE ORDERED BY", "syntax error near end of statement: WRITE ORDERED BY expects a column or a transform"},
	} {
		_, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), tt.in, ';', false, ast.ParserOptions{})
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestParsePartitionField(t *testing.T) {
	term, name, err := ParsePartitionField("bucket(16, id) AS `my shard`")
	if err != nil || name != "my shard" || term != (PartitionTerm{Transform: TransformBucket, Param: 16, Column: "id"}) {
		t.Errorf("got %+v %q %v", term, name, err)
	}
	if _, _, err := ParsePartitionField("id AS"); err == nil {
		t.Error("id AS parsed")
	}
}

// TestPartitionTermRoundTrip checks that String reads back as the same term.
func TestPartitionTermRoundTrip(t *testing.T) {
	for _, in := range []string{"region", "days(ts)", "bucket(16, id)", "truncate(4, `name`)", "years(d)", "months(d)", "hours(ts)", "`select`", "`a b`", "s.field", "s.`inner`"} {
		term, err := ParsePartitionTerm(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if term.String() != in {
			t.Errorf("%s prints as %s", in, term.String())
		}
		again, err := ParsePartitionTerm(term.String())
		if err != nil || again != term {
			t.Errorf("%s: read back %+v, %v", in, again, err)
		}
	}
}

package procedures

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

var testProc = &Procedure{
	Name: "p",
	Params: []Param{
		{Name: "table", Kind: String, Required: true},
		{Name: "snapshot_id", Kind: Int64},
		{Name: "dry_run", Kind: Bool, Default: false},
	},
}

func TestBind(t *testing.T) {
	tests := []struct {
		args    []Arg
		want    Args
		wantErr string
	}{
		{args: []Arg{{Value: "db.t"}}, want: Args{"table": "db.t", "snapshot_id": nil, "dry_run": false}},
		{args: []Arg{{Value: "db.t"}, {Value: int8(5)}, {Value: int8(1)}}, want: Args{"table": "db.t", "snapshot_id": int64(5), "dry_run": true}},
		{args: []Arg{{Name: "DRY_RUN", Value: "true"}, {Name: "table", Value: []byte("db.t")}},
			want: Args{"table": "db.t", "snapshot_id": nil, "dry_run": true}},
		{args: []Arg{{Value: "db.t"}, {Name: "snapshot_id", Value: "9223372036854775807"}},
			want: Args{"table": "db.t", "snapshot_id": int64(9223372036854775807), "dry_run": false}},
		{args: nil, wantErr: "missing required argument 'table'"},
		{args: []Arg{{Name: "tbl", Value: "x"}}, wantErr: "unknown argument 'tbl'; its arguments are table, snapshot_id, dry_run"},
		{args: []Arg{{Value: "x"}, {Name: "table", Value: "y"}}, wantErr: "argument 'table' is given twice"},
		{args: []Arg{{Name: "table", Value: "y"}, {Value: "x"}}, wantErr: "positional argument 2 follows a named argument"},
		{args: []Arg{{Value: "x"}, {Value: 1}, {Value: true}, {Value: 4}}, wantErr: "too many arguments"},
		{args: []Arg{{Value: "x"}, {Value: "abc"}}, wantErr: "argument 'snapshot_id': want an integer, got 'abc'"},
		{args: []Arg{{Value: "x"}, {Value: uint64(1 << 63)}}, wantErr: "argument 'snapshot_id': 9223372036854775808 is out of the BIGINT range"},
		{args: []Arg{{Value: nil}}, wantErr: "argument 'table' may not be NULL"},
		{args: []Arg{{Value: 1.5}}, wantErr: "argument 'table': want a string"},
	}
	for _, tt := range tests {
		got, err := Bind(testProc, tt.args)
		if tt.wantErr != "" {
			if err == nil || !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Bind(%v): %v, want an ErrArgument containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Bind(%v) = %v, %v; want %v", tt.args, got, err, tt.want)
		}
	}
}

func TestTableIdent(t *testing.T) {
	env := Env{CatalogName: "icesql"}
	for in, want := range map[string]table.Identifier{
		"db.t":              {"db", "t"},
		"icesql.db.t":       {"db", "t"},
		"ICESQL.db.t":       {"db", "t"},
		"`my.db`.`t``x`":    {"my.db", "t`x"},
		"`icesql`.`db`.`t`": {"db", "t"},
	} {
		got, err := env.TableIdent("table", in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("TableIdent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"t", "other.db.t", "db.", "`db.t", "a.b.c.d"} {
		if _, err := env.TableIdent("table", in); !errors.Is(err, ErrArgument) {
			t.Errorf("TableIdent(%q): %v, want ErrArgument", in, err)
		}
	}
}

func TestBuiltin(t *testing.T) {
	r := Builtin()
	p, ok := r.Lookup("Register_Table")
	if !ok || p.Name != "register_table" {
		t.Fatalf("Lookup(Register_Table) = %v, %v", p, ok)
	}
	var cols []string
	for _, c := range p.Output {
		cols = append(cols, c.Name)
	}
	// Spark's output columns
	if want := []string{"current_snapshot_id", "total_records_count", "total_data_files_count"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("register_table columns %v, want %v", cols, want)
	}
}

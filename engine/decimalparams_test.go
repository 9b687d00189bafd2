package engine

import (
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// TestDecimalParams: a parameter the client binds as MYSQL_TYPE_NEWDECIMAL
// (vitess reads it as VarBinary text) is bound as a DECIMAL, its ? in a
// CAST that keeps its digits; ?s in strings and comments, and parameters of
// other types, are left alone. (Over the wire with Connector/Python's
// prepared cursor and Decimal values, the answers match MariaDB 10.11:
// d > 2.499 keeps 2.50, m = 0.10000000000000000001 misses 0.1.)
func TestDecimalParams(t *testing.T) {
	decimal, text := int32(sqltypes.Decimal), int32(sqltypes.VarChar)
	bind := func(typ querypb.Type, v string) *querypb.BindVariable {
		return &querypb.BindVariable{Type: typ, Value: []byte(v)}
	}
	for _, c := range []struct {
		query  string
		types  []int32
		values []string
		want   string // "" when nothing changes
	}{
		{"SELECT id FROM t WHERE d > ?", []int32{decimal}, []string{"2.499"},
			"SELECT id FROM t WHERE d > CAST(? AS DECIMAL(65, 3))"},
		{"SELECT '?', ? /* ? */ + d FROM t WHERE m IN (?, ?)", []int32{decimal, text, decimal}, []string{"-0.001", "x", "7"},
			"SELECT '?', CAST(? AS DECIMAL(65, 3)) /* ? */ + d FROM t WHERE m IN (?, CAST(? AS DECIMAL(65, 0)))"},
		{"SELECT ?", []int32{text}, []string{"2.5"}, ""},
		{"SELECT ?", []int32{decimal}, []string{"1e5"}, ""},                               // not a plain decimal: left as text
		{"SELECT ?", []int32{decimal}, []string{"0.1234567890123456789012345678901"}, ""}, // 31 digits after the point
	} {
		p := &mysql.PrepareData{PrepareStmt: c.query, ParamsType: c.types, BindVars: map[string]*querypb.BindVariable{}}
		for i, v := range c.values {
			p.BindVars["v"+string(rune('1'+i))] = bind(sqltypes.VarBinary, v)
		}
		got, ok := decimalParams(p)
		if c.want == "" {
			if ok {
				t.Errorf("%q %v: rewritten as %q, want unchanged", c.query, c.values, got.PrepareStmt)
			}
			continue
		}
		if !ok {
			t.Errorf("%q %v: unchanged, want %q", c.query, c.values, c.want)
			continue
		}
		if got.PrepareStmt != c.want {
			t.Errorf("%q %v: got %q, want %q", c.query, c.values, got.PrepareStmt, c.want)
		}
		for i, typ := range c.types {
			name := "v" + string(rune('1'+i))
			want := sqltypes.VarBinary
			if typ == decimal {
				want = sqltypes.Decimal
			}
			if got.BindVars[name].Type != want || string(got.BindVars[name].Value) != c.values[i] {
				t.Errorf("%q: %s bound as %v %q, want %v %q", c.query, name, got.BindVars[name].Type, got.BindVars[name].Value, want, c.values[i])
			}
			if p.BindVars[name].Type != sqltypes.VarBinary {
				t.Errorf("%q: the prepared statement's own %s changed", c.query, name)
			}
		}
		if p.PrepareStmt != c.query {
			t.Errorf("the prepared statement's own text changed to %q", p.PrepareStmt)
		}
	}
}

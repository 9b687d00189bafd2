package sqltests

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/icesql/icesql/sqltests/fixtures"
)

// TestFixtureDefaults reads every row of the fixture tables whose columns
// were added with an initial-default after files were written, at the top
// level and inside a struct, with the vector path on and off: the files
// written before read as the defaults, the others as what they hold. The
// expected rows are DuckDB's (duckdb-iceberg test/sql/local/
// initial_default_all_types.test and initial_default_in_struct_all_types.test,
// its Europe/Amsterdam times given here in UTC) and, for the uuid column
// DuckDB skips and Impala's v3 table, the values the files and metadata
// hold. The defaults are ISO strings in the metadata, which iceberg-go
// cannot read (storage/defaults.go), and the uuid column is stored without
// its Parquet annotation (pushdown/plainuuid.go).
func TestFixtureDefaults(t *testing.T) {
	fx := fixtures.Dir(t)
	idx := loadFixtureIndex(t, fx)
	conn := fixtureServer(t, fixtureRemap(fx, idx))
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE fx"); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tb := range idx.Tables {
		name := "fx." + fixtureName(tb.Dir)
		for _, suffix := range []string{"/add_columns_with_defaults", "/add_columns_with_defaults_in_struct", "/iceberg_v3_all_types"} {
			if strings.HasSuffix(tb.Dir, suffix) {
				metadata := filepath.Join(fx, tb.Dir, "metadata", tb.MetadataFile)
				if _, err := conn.ExecContext(ctx, "CALL icesql.system.register_table(table => ?, metadata_file => ?)", name, metadata); err != nil {
					t.Fatalf("register %s: %v", tb.Dir, err)
				}
				names[suffix[1:]] = name
			}
		}
	}
	if len(names) != 3 {
		t.Fatalf("fixture tables found: %v", names)
	}
	type check struct {
		query string
		rows  []string
	}
	checks := []check{
		{
			"SELECT col1, col_boolean, col_integer, col_long, col_float, col_double, col_decimal, " +
				"DATE_FORMAT(col_date, '%Y-%m-%d'), col_time, DATE_FORMAT(col_timestamp, '%Y-%m-%d %H:%i:%s.%f'), " +
				"col_timestamptz, col_string, col_uuid, HEX(col_fixed), HEX(col_binary) FROM " + names["add_columns_with_defaults"] + " ORDER BY col1",
			[]string{
				"click|1|342342|-9223372036854775808|0.34234|0.342343242342342|12345.00|2003-10-20|00:00:00.012345|1970-01-01 00:00:00.012345|1970-01-01 00:00:00.012345|HELLO|f79c3e09-677c-4bbd-a479-3f349cb785e7|010203FF03|0102",
				"purchase|1|342342|-9223372036854775808|0.34234|0.342343242342342|12345.00|2003-10-20|00:00:00.012345|1970-01-01 00:00:00.012345|1970-01-01 00:00:00.012345|HELLO|f79c3e09-677c-4bbd-a479-3f349cb785e7|010203FF03|0102",
				"test|0|453243|328725092345834|23.34342|23.343424523423433|3423434.23|0011-03-05|12:06:45.000000|0011-03-05 12:06:45.000000|2023-05-15 14:30:45.000000|World|020d4fc7-acd6-45ac-b216-7873f4038e1f|8000800080|800080",
			},
		},
		{
			"SELECT COUNT(*), COUNT(col_date), MIN(col_integer), MAX(col_integer), SUM(col_integer), MIN(col_string) FROM " +
				names["add_columns_with_defaults"],
			[]string{"3|3|342342|453243|1137927|HELLO"},
		},
		{
			"SELECT col_string, COUNT(*) FROM " + names["add_columns_with_defaults"] + " WHERE col_date = '2003-10-20' AND col_uuid = 'f79c3e09-677c-4bbd-a479-3f349cb785e7' GROUP BY col_string",
			[]string{"HELLO|2"},
		},
		{
			"SELECT id, col_boolean, col_int, col_bigint, col_float, col_double, col_decimal, col_string, col_date, " +
				"col_timestamp, HEX(col_binary), col_timestamp_epoch, col_timestamp_iso FROM " + names["iceberg_v3_all_types"] + " WHERE id = 1",
			[]string{"1|0|-1|-1|1.5|2.5|123.45|initial_default|2024-01-01|1969-12-31 23:59:59.123456|0102030405060708|1970-01-01 00:00:00.000000|2024-01-15 10:30:45.123456"},
		},
	}
	structWant := []map[string]any{
		{"col1": "test", "col_boolean": true, "col_integer": json.Number("342342"), "col_long": json.Number("-9223372036854775808"),
			"col_float": json.Number("0.34234"), "col_double": json.Number("0.342343242342342"), "col_decimal": "12345.00",
			"col_date": "2003-10-20", "col_time": "00:00:00.012345", "col_timestamp": "1970-01-01 00:00:00.012345",
			"col_timestamptz": "1970-01-01 00:00:00.012345", "col_string": "HELLO", "col_uuid": "f79c3e09-677c-4bbd-a479-3f349cb785e7",
			"col_fixed": "AQID/wM=", "col_binary": "AQI="}, // base64 of 01 02 03 ff 03 and 01 02
		{"col1": "test", "col_boolean": false, "col_integer": json.Number("453243"), "col_long": json.Number("328725092345834"),
			"col_float": json.Number("23.34342"), "col_double": json.Number("23.343424523423433"), "col_decimal": "3423434.23",
			"col_date": "0011-03-05", "col_time": "12:06:45", "col_timestamp": "0011-03-05 12:06:45",
			"col_timestamptz": nil, "col_string": "World", "col_uuid": nil, "col_fixed": nil, "col_binary": "gACA"}, // 80 00 80
	}
	for _, vec := range []string{"ON", "OFF"} {
		if _, err := conn.ExecContext(ctx, "SET icesql_vectorize = "+vec); err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			rows, err := queryRows(ctx, conn, c.query)
			if err != nil {
				t.Errorf("vectorize %s: %s: %v", vec, c.query, err)
				continue
			}
			if got := joinRows(rows); !reflect.DeepEqual(got, c.rows) {
				t.Errorf("vectorize %s: %s:\n got %q\nwant %q", vec, c.query, got, c.rows)
			}
		}
		q := "SELECT a FROM " + names["add_columns_with_defaults_in_struct"] + " ORDER BY JSON_EXTRACT(a, '$.col_integer')"
		rows, err := queryRows(ctx, conn, q)
		if err != nil {
			t.Errorf("vectorize %s: %s: %v", vec, q, err)
			continue
		}
		var got []map[string]any
		for _, r := range rows {
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(*r[0]))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatalf("%s: %v", *r[0], err)
			}
			got = append(got, m)
		}
		if !reflect.DeepEqual(got, structWant) {
			t.Errorf("vectorize %s: %s:\n got %v\nwant %v", vec, q, got, structWant)
		}
	}
}

// joinRows is each row's values joined by |, NULL for a null.
func joinRows(rows [][]*string) []string {
	var out []string
	for _, r := range rows {
		vals := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = *v
			}
		}
		out = append(out, strings.Join(vals, "|"))
	}
	return out
}

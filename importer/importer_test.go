package importer

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// columns is "name TYPE, ..." of a source.
func columns(s *Source) string {
	var out []string
	for _, c := range s.Columns() {
		out = append(out, c.Name+" "+c.SQLType)
	}
	return strings.Join(out, ", ")
}

func TestInferCSV(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          string // columns, or "error: ..." for an error containing it
		delim         rune
		header        bool
	}{
		{"quoted delimiters and quotes", "id,name,city\n1,\"Smith, John\",\"Paris\"\n2,\"O\"\"Brien\",Rome\n",
			"id BIGINT, name STRING, city STRING", ',', true},
		{"semicolons, commas inside", "a;b;c\n1;x,y;2.5\n2;z;3\n", "a BIGINT, b STRING, c DOUBLE", ';', true},
		{"tabs", "a\tb\n1\tx\n2\ty\n", "a BIGINT, b STRING", '\t', true},
		{"bars", "a|b\n1|2024-01-01\n2|2024-01-02\n", "a BIGINT, b DATE", '|', true},
		{"null markers in numbers", "n,m,k\n1,\\N,\n NULL_NOT,NULL,2\n", "n STRING, m STRING, k BIGINT", ',', true},
		{"null markers keep the type", "n,m\n1,\\N\nNULL,2.5\n,3\n3,null\n", "n BIGINT, m DOUBLE", ',', true},
		{"mixed int and float", "x\n1\n2.5\n3\n1e3\n", "x DOUBLE", ',', true},
		{"int beyond 64 bits", "x\n1\n99999999999999999999\n", "x DOUBLE", ',', true},
		{"leading zeros stay text", "zip\n00123\n02134\n", "zip STRING", ',', true},
		{"dates", "d\n2024-01-31\n2024-02-29\n", "d DATE", ',', true},
		{"not a day", "d\n2023-02-29\n", "d STRING", ',', true},
		{"dates and timestamps", "d\n2024-01-31\n2024-02-01 10:11:12\n2024-02-01T10:11:12.123456\n", "d DATETIME(6)", ',', true},
		{"timestamps with zones", "t\n2024-01-31T10:00:00Z\n2024-01-31 10:00:00+02:00\n", "t TIMESTAMP_LTZ", ',', true},
		{"zoned and unzoned mixed", "t\n2024-01-31T10:00:00Z\n2024-01-31 10:00:00\n", "t STRING", ',', true},
		{"booleans", "b,i\ntrue,1\nFALSE,0\n", "b BOOLEAN, i BIGINT", ',', true},
		{"no header", "1,2024-01-01,x\n2,2024-01-02,y\n", "column_1 BIGINT, column_2 DATE, column_3 STRING", ',', false},
		{"text header over text", "name,city\nann,paris\nbob,rome\n", "name STRING, city STRING", ',', true},
		{"header only", "id,name\n", "id STRING, name STRING", ',', true},
		{"empty and duplicate names", "a, ,a\n1,2,3\n", "a BIGINT, column_2 BIGINT, a_2 BIGINT", ',', true},
		{"CRLF and BOM", "\ufeffa,b\r\n1,x\r\n2,y\r\n", "a BIGINT, b STRING", ',', true},
		{"line break in a quoted field", "a,b\n1,\"two\nlines\"\n2,x\n", "a BIGINT, b STRING", ',', true},
		{"all null column", "a,b\n1,\n2,\n", "a BIGINT, b STRING", ',', true},
		{"empty file", "", "error: is empty", 0, false},
		{"blank lines only", "\n\n", "error: is empty", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "f.csv", tc.content)
			s, err := Open(context.Background(), LocalFS{}, p, Options{})
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error %v, want one containing %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := columns(s); got != tc.want {
				t.Errorf("columns %q, want %q", got, tc.want)
			}
			if s.Delimiter() != tc.delim || s.Header() != tc.header {
				t.Errorf("delimiter %q header %v, want %q %v", s.Delimiter(), s.Header(), tc.delim, tc.header)
			}
		})
	}
}

// targetOf is the Arrow schema of a source's inferred columns, as a table
// would have it (nullable columns).
func targetOf(t *testing.T, s *Source) *arrow.Schema {
	t.Helper()
	var fields []arrow.Field
	for _, c := range s.Columns() {
		var dt arrow.DataType
		switch c.SQLType {
		case "BIGINT":
			dt = arrow.PrimitiveTypes.Int64
		case "DOUBLE":
			dt = arrow.PrimitiveTypes.Float64
		case "BOOLEAN":
			dt = arrow.FixedWidthTypes.Boolean
		case "DATE":
			dt = arrow.FixedWidthTypes.Date32
		case "DATETIME(6)":
			dt = &arrow.TimestampType{Unit: arrow.Microsecond}
		case "TIMESTAMP_LTZ":
			dt = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case "INT":
			dt = arrow.PrimitiveTypes.Int32
		default:
			dt = arrow.BinaryTypes.String
		}
		fields = append(fields, arrow.Field{Name: c.Name, Type: dt, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// readAll reads every row as text, one line per row, "|" between values.
func readAll(t *testing.T, s *Source, target *arrow.Schema, opts ReadOptions) ([]string, error) {
	t.Helper()
	rd, err := s.Read(context.Background(), target, opts)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	var out []string
	for rd.Next() {
		rec := rd.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			var vals []string
			for j := 0; j < int(rec.NumCols()); j++ {
				vals = append(vals, rec.Column(j).ValueStr(i))
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	return out, rd.Err()
}

func TestReadCSVValues(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "f.csv", "id,name,price,day,ts,ok\n"+
		"1,\"Smith, John\",1.5,2024-01-02,2024-01-02 10:00:00.25,true\n"+
		"2,\"multi\nline\",NULL,\\N,2024-01-03T00:00:00,false\n"+
		"3,,7,2024-01-04,2024-01-04,\n")
	s, err := Open(context.Background(), LocalFS{}, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readAll(t, s, targetOf(t, s), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1|Smith, John|1.5|2024-01-02|2024-01-02T10:00:00.25|true",
		"2|multi\nline|(null)|(null)|2024-01-03T00:00:00|false",
		"3|(null)|7|2024-01-04|2024-01-04T00:00:00|(null)",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestBadRows: a value that does not convert stops the read with its
// line (counting the lines of a quoted line break) and column; with
// MaxErrors the bad rows are skipped and reported in order, and one more
// than MaxErrors fails.
func TestBadRows(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,v\n")
	b.WriteString("0,\"two\nlines\"\n") // lines 2-3
	for i := 1; i < 20000; i++ {
		fmt.Fprintf(&b, "%d,x%d\n", i, i)
	}
	content := b.String()
	// The sample (the first 100 rows) sees integers; rows 10000 and 15000
	// have bad ids and one row a field too many.
	content = strings.Replace(content, "\n10000,", "\nten thousand,", 1)
	content = strings.Replace(content, "\n15000,", "\n15000.5,", 1)
	content = strings.Replace(content, "\n17000,x17000\n", "\n17000,x,y\n", 1)
	p := writeFile(t, dir, "f.csv", content)
	s, err := Open(context.Background(), LocalFS{}, p, Options{SampleRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	target := targetOf(t, s)
	_, err = readAll(t, s, target, ReadOptions{})
	var rowErr *RowError
	if !errors.As(err, &rowErr) {
		t.Fatalf("error %v, want a RowError", err)
	}
	if rowErr.Line != 10003 || rowErr.Column != "id" || rowErr.Value != "ten thousand" {
		t.Errorf("error %v, want line 10003, column id", err)
	}
	if want := `f.csv line 10003, column "id": value "ten thousand" is not a BIGINT`; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want it to end %q", err, want)
	}

	var skipped []string
	rows, err := readAll(t, s, target, ReadOptions{MaxErrors: 3, OnBadRow: func(e *RowError) {
		skipped = append(skipped, fmt.Sprintf("%d %s", e.Line, e.Column))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 20000-3 {
		t.Errorf("%d rows, want %d", len(rows), 20000-3)
	}
	if got := strings.Join(skipped, ","); got != "10003 id,15003 id,17003 " {
		t.Errorf("skipped %q", got)
	}
	_, err = readAll(t, s, target, ReadOptions{MaxErrors: 2})
	if !errors.As(err, &rowErr) || rowErr.Line != 17003 || !strings.Contains(err.Error(), "3 fields, expected 2") {
		t.Errorf("error %v, want the third bad row", err)
	}
}

func TestReadJSONLines(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "f.jsonl", `{"id": 1, "name": "a", "at": "2024-01-02 03:04:05", "tags": [1, 2], "n": "12"}
{"id": 2.5, "name": null, "at": "2024-01-02", "n": "x"}

{"name": "c", "id": 3}
`)
	s, err := Open(context.Background(), LocalFS{}, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A JSON string of digits is text, never a number.
	if got, want := columns(s), "id DOUBLE, name STRING, at DATETIME(6), tags STRING, n STRING"; got != want {
		t.Errorf("columns %q, want %q", got, want)
	}
	rows, err := readAll(t, s, targetOf(t, s), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "1|a|2024-01-02T03:04:05|[1, 2]|12\n2.5|(null)|2024-01-02T00:00:00|(null)|x\n3|c|(null)|(null)|(null)"
	if got := strings.Join(rows, "\n"); got != want {
		t.Errorf("rows\n%s\nwant\n%s", got, want)
	}
	bad := writeFile(t, dir, "bad.jsonl", "{\"id\": 1}\n{\"id\": \"x\"}\n")
	s, err = Open(context.Background(), LocalFS{}, bad, Options{SampleRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, s, targetOf(t, s), ReadOptions{})
	if err == nil || !strings.HasSuffix(err.Error(), `bad.jsonl line 2, column "id": value "x" is not a BIGINT`) {
		t.Errorf("error %v", err)
	}
}

// TestFolder reads a folder of gzipped and plain CSV files with headers,
// in name order, skipping hidden files.
func TestFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b.csv", "id,v\n3,c\n")
	writeFile(t, dir, "_SUCCESS", "")
	writeFile(t, dir, ".hidden.csv", "id,v\n9,z\n")
	writeFile(t, dir, "sub/c.csv", "v,id\nd,4\n") // columns in another order
	f, err := os.Create(filepath.Join(dir, "a.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	gz.Write([]byte("id,v\n1,a\n2,b\n"))
	gz.Close()
	f.Close()
	s, err := Open(context.Background(), LocalFS{}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Files() != 3 {
		t.Errorf("%d files, want 3", s.Files())
	}
	rows, err := readAll(t, s, targetOf(t, s), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows, " "); got != "1|a 2|b 3|c 4|d" {
		t.Errorf("rows %q", got)
	}
}

func TestReadParquet(t *testing.T) {
	dir := t.TempDir()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	b.Field(1).(*array.LargeStringBuilder).AppendValues([]string{"a", ""}, []bool{true, false})
	b.Field(2).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_000_000_000, 2_000_000_000}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(filepath.Join(dir, "f.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), LocalFS{}, filepath.Join(dir, "f.parquet"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := columns(s), "id INT, name STRING, ts DATETIME(6)"; got != want {
		t.Errorf("columns %q, want %q", got, want)
	}
	// The table's types: long ids, string names, microsecond timestamps,
	// and a column the file lacks.
	target := arrow.NewSchema([]arrow.Field{
		{Name: "extra", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ID", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	}, nil)
	rows, err := readAll(t, s, target, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rows, " "), "(null)|1|a|1970-01-01T00:00:01 (null)|2|(null)|1970-01-01T00:00:02"; got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
}

func TestParseTimestamp(t *testing.T) {
	for _, tc := range []struct {
		in     string
		micros int64
		zoned  bool
		ok     bool
	}{
		{"1970-01-01", 0, false, true},
		{"1970-01-01 00:00:01.5", 1_500_000, false, true},
		{"1970-01-01T00:00:01.1234567", 1_123_456, false, true},
		{"1970-01-01T01:00:00+01:00", 0, true, true},
		{"1970-01-01 01:00:00 +0100", 0, true, true},
		{"1970-01-01T00:00Z", 0, true, true},
		{"1969-12-31 23:59:59", -1_000_000, false, true},
		{"1970-01-01 24:00:00", 0, false, false},
		{"1970-01-01 00:00:00.", 0, false, false},
		{"1970-01-01X00:00:00", 0, false, false},
		{"1970-01-01 00:00:00 PST", 0, false, false},
	} {
		us, zoned, ok := parseTimestamp(tc.in)
		if ok != tc.ok || (ok && (us != tc.micros || zoned != tc.zoned)) {
			t.Errorf("parseTimestamp(%q) = %d, %v, %v; want %d, %v, %v", tc.in, us, zoned, ok, tc.micros, tc.zoned, tc.ok)
		}
	}
}

package pushdown

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeStrings writes one nullable string column as Parquet: value i is
// NULL when i%11 == 3, else one of distinct strings; small pages so that
// batches cross page boundaries.
func writeStrings(t *testing.T, n, distinct int, opts ...parquet.WriterProperty) ([]byte, []*string) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	want := make([]*string, n)
	for i := range n {
		if i%11 == 3 {
			b.AppendNull()
			continue
		}
		s := fmt.Sprintf("value-%d", (i*7)%distinct)
		if i%distinct == 5 {
			s = "" // the empty string is a value, not NULL
		}
		want[i] = &s
		b.Append(s)
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithDataPageSize(512), parquet.WithMaxRowGroupLength(int64(n / 2))}, opts...)...)
	w, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), want
}

func TestStrPagesMatchValues(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		version := parquet.DataPageV1
		if v2 {
			version = parquet.DataPageV2
		}
		data, want := writeStrings(t, 5000, 37, parquet.WithDataPageVersion(version))
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var bufs columnBuffers
		row := 0
		for rg := range pf.NumRowGroups() {
			rgr := pf.RowGroup(rg)
			s, ok, err := openStrPages(rgr, 0, pf.MetaData().Schema.Column(0))
			if err != nil || !ok {
				t.Fatalf("v2=%v row group %d: fits %v, %v", v2, rg, ok, err)
			}
			for left := int(rgr.NumRows()); left > 0; {
				n := min(left, 777)
				arr, err := s.readArray(n, &bufs)
				if err != nil {
					t.Fatalf("v2=%v row %d: %v", v2, row, err)
				}
				d := arr.(*array.Dictionary)
				dict := d.Dictionary().(*array.String)
				for i := range n {
					w := want[row+i]
					switch {
					case w == nil && d.IsValid(i):
						t.Fatalf("v2=%v row %d: %q, want NULL", v2, row+i, dict.Value(d.GetValueIndex(i)))
					case w != nil && (d.IsNull(i) || dict.Value(d.GetValueIndex(i)) != *w):
						t.Fatalf("v2=%v row %d: null=%v, want %q", v2, row+i, d.IsNull(i), *w)
					}
				}
				arr.Release()
				row += n
				left -= n
			}
			s.close()
		}
		if row != len(want) {
			t.Errorf("v2=%v: %d rows read, want %d", v2, row, len(want))
		}
		pf.Close()
	}
}

// A chunk whose dictionary overflowed into PLAIN pages is left to
// arrow-go's record reader.
func TestStrPagesFitRefusesPlainPages(t *testing.T) {
	data, _ := writeStrings(t, 5000, 4000, parquet.WithDictionaryPageSizeLimit(256))
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	if strPagesFit(cc) {
		t.Errorf("a chunk with PLAIN data pages (encodings %v) fits strPages", cc.Encodings())
	}
}

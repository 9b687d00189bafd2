package pushdown

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// sparseColumn writes vals (NULL where !valid) as a one-column Parquet file
// of pages of about fifty rows in one row group, and returns the pages of
// its column chunk as flbaPages reads them.
func sparseColumn(t *testing.T, typ arrow.DataType, vals []int64, valid []bool, dict bool, v2 bool) *flbaPages {
	t.Helper()
	mem := memory.DefaultAllocator
	var b array.Builder
	switch typ.ID() {
	case arrow.INT32:
		ib := array.NewInt32Builder(mem)
		for i, v := range vals {
			if valid[i] {
				ib.Append(int32(v))
			} else {
				ib.AppendNull()
			}
		}
		b = ib
	case arrow.INT64:
		ib := array.NewInt64Builder(mem)
		for i, v := range vals {
			if valid[i] {
				ib.Append(v)
			} else {
				ib.AppendNull()
			}
		}
		b = ib
	default:
		db := array.NewDecimal128Builder(mem, typ.(*arrow.Decimal128Type))
		for i, v := range vals {
			if valid[i] {
				db.Append(decimal128.FromI64(v))
			} else {
				db.AppendNull()
			}
		}
		b = db
	}
	arr := b.NewArray()
	defer arr.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "c", Type: typ, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	version := parquet.DataPageV1
	if v2 {
		version = parquet.DataPageV2
	}
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict), parquet.WithDataPageSize(64),
		parquet.WithBatchSize(50), parquet.WithDataPageVersion(version), parquet.WithMaxRowGroupLength(1<<20))
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	descr := pf.MetaData().Schema.Column(0)
	pages, err := pf.RowGroup(0).GetColumnPageReader(0)
	if err != nil {
		t.Fatal(err)
	}
	f := &flbaPages{pages: pages, maxDef: descr.MaxDefinitionLevel()}
	switch descr.PhysicalType() {
	case parquet.Types.Int32:
		f.width, f.little = 4, true
	case parquet.Types.Int64:
		f.width, f.little = 8, true
	default:
		f.width = descr.TypeLength()
	}
	return f
}

// TestFlbaPagesSelective reads column chunks of many pages (dictionary and
// PLAIN, data pages v1 and v2, with and without NULLs, INT32, INT64 and
// FIXED_LEN_BYTE_ARRAY decimals) through random runs of skip, read, gather
// and selectRows, and checks every value against what was written.
func TestFlbaPagesSelective(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	const n = 1500
	types := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, &arrow.Decimal128Type{Precision: 15, Scale: 2}}
	for _, typ := range types {
		for _, dict := range []bool{true, false} {
			for _, v2 := range []bool{true, false} {
				for _, nulls := range []bool{false, true} {
					name := fmt.Sprintf("%s dict=%v v2=%v nulls=%v", typ, dict, v2, nulls)
					vals, valid := make([]int64, n), make([]bool, n)
					for i := range vals {
						vals[i] = int64(rng.IntN(200)) - 100
						if typ.ID() != arrow.INT32 {
							vals[i] *= 1 << 33
						}
						valid[i] = !nulls || rng.IntN(5) != 0
					}
					if nulls {
						for i := 300; i < 420; i++ { // pages of NULLs only
							valid[i] = false
						}
					}
					f := sparseColumn(t, typ, vals, valid, dict, v2)
					checkSelective(t, name, rng, f, vals, valid)
				}
			}
		}
	}
}

func checkSelective(t *testing.T, name string, rng *rand.Rand, f *flbaPages, vals []int64, valid []bool) {
	t.Helper()
	keepNull := rng.IntN(2) == 0
	pred := func(v int64) bool { return v%3 == 0 }
	kept := func(row int) bool {
		if !valid[row] {
			return keepNull
		}
		return pred(vals[row])
	}
	rf := rowFilter{
		keepFor: func(f *flbaPages) (*dictKeep, error) {
			k := &dictKeep{gen: f.dictGen, keep: make([]uint8, len(f.dict)), keepNull: keepNull}
			for i, v := range f.dict {
				if pred(v) {
					k.keep[i] = 1
				}
			}
			return k, nil
		},
		pick: func(vs []int64, defs []int16) ([]int32, error) {
			var out []int32
			for i, v := range vs {
				if defs != nil && defs[i] == 0 {
					if keepNull {
						out = append(out, int32(i))
					}
				} else if pred(v) {
					out = append(out, int32(i))
				}
			}
			return out, nil
		},
	}
	wantDef := func(row int) int16 {
		if valid[row] {
			return f.maxDef
		}
		return 0
	}
	for pos := 0; pos < len(vals); {
		k := min(1+rng.IntN(180), len(vals)-pos)
		var defs []int16
		if f.maxDef > 0 {
			defs = make([]int16, k)
		}
		switch op := rng.IntN(4); op {
		case 0:
			f.skip(k)
		case 1:
			dst := make([]int64, k)
			if _, err := f.read(dst, defs); err != nil {
				t.Fatalf("%s: read %d at %d: %v", name, k, pos, err)
			}
			for i := range k {
				if valid[pos+i] && dst[i] != vals[pos+i] || defs != nil && defs[i] != wantDef(pos+i) {
					t.Fatalf("%s: read row %d: got %d, want %d (valid %v)", name, pos+i, dst[i], vals[pos+i], valid[pos+i])
				}
			}
		case 2:
			var sel []int32
			every := 1 + rng.IntN(20) // sometimes dense, sometimes sparse
			for i := range k {
				if rng.IntN(every) == 0 {
					sel = append(sel, int32(i))
				}
			}
			dst := make([]int64, len(sel))
			var d []int16
			if defs != nil {
				d = defs[:len(sel)]
			}
			if _, err := f.gather(k, sel, dst, d); err != nil {
				t.Fatalf("%s: gather %d at %d: %v", name, k, pos, err)
			}
			for i, s := range sel {
				row := pos + int(s)
				if valid[row] && dst[i] != vals[row] || d != nil && d[i] != wantDef(row) {
					t.Fatalf("%s: gather row %d: got %d, want %d (valid %v)", name, row, dst[i], vals[row], valid[row])
				}
			}
		default:
			var d []int16
			if defs != nil {
				d = defs[:0]
			}
			sel, got, gotDefs, err := f.selectRows(k, rf, nil, nil, d)
			if err != nil {
				t.Fatalf("%s: selectRows %d at %d: %v", name, k, pos, err)
			}
			var want []int32
			for i := range k {
				if kept(pos + i) {
					want = append(want, int32(i))
				}
			}
			if fmt.Sprint(sel) != fmt.Sprint(want) {
				t.Fatalf("%s: selectRows at %d: got %v, want %v", name, pos, sel, want)
			}
			for i, s := range sel {
				row := pos + int(s)
				if valid[row] && got[i] != vals[row] || gotDefs != nil && gotDefs[i] != wantDef(row) {
					t.Fatalf("%s: selected row %d: got %d, want %d (valid %v)", name, row, got[i], vals[row], valid[row])
				}
			}
		}
		pos += k
	}
	if err := f.settle(); err != nil {
		t.Fatalf("%s: settle at the end: %v", name, err)
	}
}

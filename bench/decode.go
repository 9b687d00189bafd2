package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pgo "github.com/parquet-go/parquet-go"
)

// The decoder comparison the issue asks for: the columns Q1 reads, decoded
// from icesql's own lineitem data files into Arrow arrays, one file after
// the other on one goroutine, by arrow-go's pqarrow (what iceberg-go's scan
// uses) and by parquet-go's typed page readers. Nothing else (no Iceberg
// planning, no deletes) is in either figure.

var decodeColumns = []string{"l_quantity", "l_extendedprice", "l_discount", "l_tax",
	"l_returnflag", "l_linestatus", "l_shipdate"}

// compareDecoders prints one line with the median time of each decoder.
func compareDecoders(ctx context.Context, warehouse string, runs int) error {
	files, err := filepath.Glob(filepath.Join(warehouse, "tpch", "lineitem", "data", "*.parquet"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no lineitem data files in %s (%v)", warehouse, err)
	}
	median := func(decode func(string) (int64, error)) (time.Duration, int64, error) {
		var times []time.Duration
		var rows int64
		for range runs + 1 {
			start := time.Now()
			rows = 0
			for _, f := range files {
				n, err := decode(f)
				if err != nil {
					return 0, 0, fmt.Errorf("%s: %w", f, err)
				}
				rows += n
			}
			times = append(times, time.Since(start))
		}
		times = times[1:] // the first run warms the page cache
		slices.Sort(times)
		return times[len(times)/2], rows, nil
	}
	pq, pqRows, err := median(func(f string) (int64, error) { return decodePqarrow(ctx, f) })
	if err != nil {
		return fmt.Errorf("pqarrow: %w", err)
	}
	pg, pgRows, err := median(decodeParquetGo)
	if err != nil {
		return fmt.Errorf("parquet-go: %w", err)
	}
	if pqRows != pgRows {
		return fmt.Errorf("pqarrow decoded %d rows, parquet-go %d", pqRows, pgRows)
	}
	fmt.Printf("bench decode files=%d rows=%d columns=%d pqarrow_ms=%.1f parquetgo_ms=%.1f pqarrow_over_parquetgo=%.2f\n",
		len(files), pqRows, len(decodeColumns), ms(pq), ms(pg), float64(pq)/float64(max(pg, 1)))
	return nil
}

func decodePqarrow(ctx context.Context, path string) (int64, error) {
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 1 << 17}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	var cols []int
	for _, name := range decodeColumns {
		cols = append(cols, f.MetaData().Schema.ColumnIndexByName(name))
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var rows int64
	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return rows, nil
}

// decodeParquetGo reads each column chunk page by page through parquet-go's
// typed value readers and appends the values to Arrow builders, converting
// decimals from Parquet's big-endian bytes as pqarrow does.
func decodeParquetGo(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := pgo.OpenFile(f, st.Size())
	if err != nil {
		return 0, err
	}
	var cols []int
	for _, name := range decodeColumns {
		leaf, ok := pf.Schema().Lookup(name)
		if !ok {
			return 0, fmt.Errorf("no column %s", name)
		}
		cols = append(cols, leaf.ColumnIndex)
	}
	var rows int64
	for _, rg := range pf.RowGroups() {
		for _, ci := range cols {
			arr, err := decodeChunk(rg.ColumnChunks()[ci])
			if err != nil {
				return 0, err
			}
			if ci == cols[0] {
				rows += int64(arr.Len())
			}
			arr.Release()
		}
	}
	return rows, nil
}

func decodeChunk(cc pgo.ColumnChunk) (arrow.Array, error) {
	pages := cc.Pages()
	defer pages.Close()
	var b array.Builder
	var i32 []int32
	var raw []byte
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if p.NumNulls() != 0 {
			pgo.Release(p)
			return nil, fmt.Errorf("page with nulls: this comparison reads TPC-H's non-null columns only")
		}
		n := int(p.NumValues())
		vals := p.Values()
		switch r := vals.(type) {
		case pgo.Int32Reader:
			if b == nil {
				b = array.NewDate32Builder(memory.DefaultAllocator)
			}
			i32 = slices.Grow(i32[:0], n)[:n]
			if _, err := r.ReadInt32s(i32); err != nil && err != io.EOF {
				return nil, err
			}
			db := b.(*array.Date32Builder)
			db.Reserve(n)
			for _, v := range i32 {
				db.UnsafeAppend(arrow.Date32(v))
			}
		case pgo.FixedLenByteArrayReader:
			size := cc.Type().Length()
			if b == nil {
				b = array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 15, Scale: 2})
			}
			raw = slices.Grow(raw[:0], n*size)[:n*size]
			if _, err := r.ReadFixedLenByteArrays(raw); err != nil && err != io.EOF {
				return nil, err
			}
			db := b.(*array.Decimal128Builder)
			db.Reserve(n)
			for k := range n {
				db.UnsafeAppend(bigEndianDecimal(raw[k*size : (k+1)*size]))
			}
		case pgo.ByteArrayReader:
			if b == nil {
				b = array.NewStringBuilder(memory.DefaultAllocator)
			}
			sb := b.(*array.StringBuilder)
			sb.Reserve(n)
			buf := make([]byte, 0, 64<<10)
			for read := 0; read < n; {
				buf = buf[:cap(buf)]
				m, err := r.ReadByteArrays(buf)
				for off := 0; off < len(buf) && m > 0; m-- {
					l := int(binary.LittleEndian.Uint32(buf[off:]))
					sb.BinaryBuilder.Append(buf[off+4 : off+4+l])
					off += 4 + l
					read++
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, err
				}
			}
		default:
			// Dictionary-encoded pages have no typed reader: values come
			// out as parquet.Value, dictionary lookups done.
			if b == nil {
				b = newBuilderFor(cc.Type())
			}
			if err := appendValues(b, vals, n); err != nil {
				pgo.Release(p)
				return nil, err
			}
		}
		pgo.Release(p)
	}
	if b == nil {
		return array.NewNull(0), nil
	}
	defer b.Release()
	return b.NewArray(), nil
}

// bigEndianDecimal is a Parquet FIXED_LEN_BYTE_ARRAY decimal (big-endian
// two's complement, at most 16 bytes) as an Arrow decimal.
func bigEndianDecimal(be []byte) decimal128.Num {
	var hi int64
	var lo uint64
	if len(be) > 0 && be[0]&0x80 != 0 {
		hi, lo = -1, ^uint64(0)
	}
	for _, c := range be {
		hi = hi<<8 | int64(lo>>56)
		lo = lo<<8 | uint64(c)
	}
	return decimal128.New(hi, lo)
}

func newBuilderFor(t pgo.Type) array.Builder {
	switch t.Kind() {
	case pgo.Int32:
		return array.NewDate32Builder(memory.DefaultAllocator)
	case pgo.FixedLenByteArray:
		return array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 15, Scale: 2})
	}
	return array.NewStringBuilder(memory.DefaultAllocator)
}

func appendValues(b array.Builder, r pgo.ValueReader, n int) error {
	buf := make([]pgo.Value, min(n, 4096))
	for read := 0; read < n; {
		m, err := r.ReadValues(buf)
		for _, v := range buf[:m] {
			switch bb := b.(type) {
			case *array.Date32Builder:
				bb.Append(arrow.Date32(v.Int32()))
			case *array.Decimal128Builder:
				bb.Append(bigEndianDecimal(v.ByteArray()))
			case *array.StringBuilder:
				bb.BinaryBuilder.Append(v.ByteArray())
			}
		}
		read += m
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if m == 0 {
			return fmt.Errorf("no progress reading values")
		}
	}
	return nil
}

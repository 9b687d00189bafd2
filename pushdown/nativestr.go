package pushdown

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// A dictionary-encoded string column (TPC-H's flags and modes) reaches the
// vector kernels as dictionary indices. Through arrow-go's record reader
// every index goes through a dictionary builder, a tenth of TPC-H Q1's
// CPU; strPages decodes the pages itself: the dictionary page once per
// column chunk into an Arrow string array, which every batch of the chunk
// shares, and the data pages' indices unpacked straight into the batch's
// index buffer. A chunk that any data page of which is not dictionary
// encoded (a writer's fallback to PLAIN when the dictionary grows large)
// goes through the record reader instead (strPagesFit).

// Parquet's page types, as page encoding statistics give them.
const (
	pageTypeData   = 0
	pageTypeDataV2 = 3
)

// strPagesFit says the chunk's statistics show every data page dictionary
// encoded.
func strPagesFit(cc *metadata.ColumnChunkMetaData) bool {
	stats := cc.EncodingStats()
	if !cc.HasDictionaryPage() || len(stats) == 0 {
		return false
	}
	for _, s := range stats {
		switch int32(s.PageType) {
		case pageTypeData, pageTypeDataV2:
			if s.Encoding != parquet.Encodings.PlainDict && s.Encoding != parquet.Encodings.RLEDict {
				return false
			}
		}
	}
	return true
}

// strPages decodes one dictionary-encoded BYTE_ARRAY column chunk. The
// decoding of pages and definition levels is flbaPages's: it reads the
// pages through strPageReader, which takes in the dictionary page and
// hands flbaPages in its place a dictionary of the indices themselves, so
// that the values it decodes are the indices.
type strPages struct {
	pages *flbaPages
	dict  *array.String // the chunk's dictionary, shared by its batches
}

func newStrPages(pages file.PageReader, maxDef int16) *strPages {
	s := &strPages{}
	s.pages = newFlbaPages(&strPageReader{PageReader: pages, s: s}, 4, maxDef)
	return s
}

// strPageReader is the page reader of a string chunk as strPages's
// flbaPages sees it.
type strPageReader struct {
	file.PageReader
	s   *strPages
	cur file.Page
	err error
}

func (r *strPageReader) Next() bool {
	if r.err != nil || !r.PageReader.Next() {
		return false
	}
	switch pg := r.PageReader.Page().(type) {
	case *file.DictionaryPage:
		if r.err = r.s.readDictionary(pg); r.err != nil {
			return false
		}
		r.cur = identityDictionary(r.s.dict.Len())
		return true
	case *file.DataPageV1:
		r.err = dictionaryEncoded(parquet.Encoding(pg.Encoding()))
	case *file.DataPageV2:
		r.err = dictionaryEncoded(parquet.Encoding(pg.Encoding()))
	}
	r.cur = r.PageReader.Page()
	return r.err == nil
}

func (r *strPageReader) Page() file.Page { return r.cur }

func (r *strPageReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.PageReader.Err()
}

// dictionaryEncoded refuses a data page whose values are not dictionary
// indices (strPagesFit reads the statistics; this checks the pages).
func dictionaryEncoded(e parquet.Encoding) error {
	if e != parquet.Encodings.PlainDict && e != parquet.Encodings.RLEDict {
		return fmt.Errorf("string data page in encoding %s", e)
	}
	return nil
}

// identityDictionary is a PLAIN dictionary page of n 4-byte big-endian
// values 0 to n-1, as flbaPages (width 4) reads it.
func identityDictionary(n int) *file.DictionaryPage {
	data := make([]byte, 4*n)
	for i := range n {
		binary.BigEndian.PutUint32(data[4*i:], uint32(i))
	}
	return file.NewDictionaryPage(memory.NewBufferBytes(data), int32(n), parquet.Encodings.Plain)
}

// readArray reads the next n rows as a dictionary array.
func (s *strPages) readArray(n int, bufs *columnBuffers) (arrow.Array, error) {
	var defs []int16
	if s.pages.maxDef > 0 {
		bufs.defs = grown(bufs.defs, n)
		defs = bufs.defs
	}
	bufs.i64 = grown(bufs.i64, n)
	packed, err := s.pages.read(bufs.i64, defs)
	if err != nil {
		return nil, err
	}
	idx := allocValues[int32](n)
	for i, v := range bufs.i64 {
		idx.v[i] = int32(v)
	}
	if s.dict == nil {
		// Every row NULL and no dictionary page: an empty dictionary.
		if err := s.setDictionary(0, nil, nil); err != nil {
			idx.buf.Release()
			return nil, err
		}
	}
	indices := idx.array(arrow.PrimitiveTypes.Int32, defs, packed)
	defer indices.Release()
	return array.NewDictionaryArray(nativeDictType, indices, s.dict), nil
}

// readDictionary takes in a dictionary page: PLAIN byte arrays, each a
// 4-byte little-endian length and its bytes. The indices of the chunk's
// data pages are checked against its size (flbaPages's dict, which is
// the identity of the same size).
func (s *strPages) readDictionary(pg *file.DictionaryPage) error {
	if e := parquet.Encoding(pg.Encoding()); e != parquet.Encodings.Plain && e != parquet.Encodings.PlainDict {
		return fmt.Errorf("dictionary page in encoding %s", e)
	}
	n := int(pg.NumValues())
	data := pg.Data()
	if n < 0 || n > len(data)/4 {
		return fmt.Errorf("dictionary page: %w", errPageFormat)
	}
	offsets := allocValues[int32](n + 1)
	total := 0
	for i, at := 0, 0; i < n; i++ {
		if at+4 > len(data) {
			offsets.buf.Release()
			return fmt.Errorf("dictionary page: %w", errPageFormat)
		}
		l := int(binary.LittleEndian.Uint32(data[at:]))
		if l < 0 || l > len(data)-at-4 {
			offsets.buf.Release()
			return fmt.Errorf("dictionary page: %w", errPageFormat)
		}
		offsets.v[i] = int32(total)
		total += l
		at += 4 + l
	}
	offsets.v[n] = int32(total)
	bytes := pool.Allocate(total)
	for i, at := 0, 0; i < n; i++ {
		l := int(binary.LittleEndian.Uint32(data[at:]))
		copy(bytes[offsets.v[i]:], data[at+4:at+4+l])
		at += 4 + l
	}
	return s.setDictionary(n, offsets.buf, memory.NewBufferWithAllocator(bytes, pool))
}

// setDictionary makes the string array of n values the chunk's
// dictionary, taking over the buffers.
func (s *strPages) setDictionary(n int, offsets, data *memory.Buffer) error {
	if offsets == nil {
		o := allocValues[int32](1)
		o.v[0] = 0
		offsets, data = o.buf, memory.NewBufferBytes(nil)
	}
	arr := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offsets, data}, nil, 0, 0)
	offsets.Release()
	data.Release()
	if s.dict != nil {
		s.dict.Release()
	}
	s.dict = array.NewStringData(arr)
	arr.Release()
	return nil
}

func (s *strPages) close() {
	s.pages.close()
	if s.dict != nil {
		s.dict.Release()
		s.dict = nil
	}
}

// openStrPages opens the string column chunk leaf of a row group with
// strPages, or says it does not fit.
func openStrPages(rgr *file.RowGroupReader, leaf int, descr *schema.Column) (*strPages, bool, error) {
	cc, err := rgr.MetaData().ColumnChunk(leaf)
	if err != nil {
		return nil, false, err
	}
	if !strPagesFit(cc) {
		return nil, false, nil
	}
	pages, err := rgr.GetColumnPageReader(leaf)
	if err != nil {
		return nil, false, err
	}
	return newStrPages(pages, descr.MaxDefinitionLevel()), true, nil
}

package pushdown

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// A decimal stored as FIXED_LEN_BYTE_ARRAY (how iceberg-go and so icesql
// write every decimal) decodes through arrow-go's column reader as one
// slice header per value, looked up in the dictionary when the page is
// dictionary-encoded: most of the cost of reading TPC-H's prices and
// discounts. flbaPages decodes such a column chunk page by page itself,
// straight to int64s: the dictionary converted once per chunk, the
// indices unpacked from their RLE / bit-packed runs. It handles the
// encodings Parquet writers use for such columns (PLAIN and dictionary
// values, RLE definition levels); a chunk that lists any other encoding is
// read through arrow-go's column reader instead (flbaPagesFit).

// flbaPages decodes one FIXED_LEN_BYTE_ARRAY decimal column chunk.
type flbaPages struct {
	pages  file.PageReader
	width  int
	maxDef int16
	dict   []int64
	vals   []int64 // the current page's rows (0 where NULL)
	defs   []int16 // their definition levels; nil when maxDef is 0
	full   bool    // every row of the current page holds a value
	pos    int     // rows of the current page already handed out
	idx    []uint32

	// little says the values are INT32 or INT64 (little-endian, width 4
	// or 8) instead of big-endian decimal bytes; nativesparse.go decodes a
	// selective scan's filter column through this type too.
	little bool
	// A page's values are converted only when rows of it are read: a
	// selective scan skips the rows it rejects (nativesparse.go).
	rows     int              // rows of the current page
	enc      parquet.Encoding // of its values
	data     []byte           // its values section, valid until the next page is read
	present  int              // its rows holding a value
	ready    bool             // vals holds its rows
	idxReady bool             // idx holds its dictionary indices
	debt     int              // rows to skip before the next read
	dictGen  int64            // identifies the current dictionary, for what is derived from it (dictGens)
}

// flbaPagesFit says the chunk uses only encodings flbaPages decodes.
func flbaPagesFit(cc *metadata.ColumnChunkMetaData) bool {
	for _, e := range cc.Encodings() {
		switch e {
		case parquet.Encodings.Plain, parquet.Encodings.PlainDict, parquet.Encodings.RLEDict, parquet.Encodings.RLE:
		default:
			return false
		}
	}
	return true
}

var errPageFormat = errors.New("malformed page")

// read fills the next len(dst) rows: values in dst, definition levels in
// defs (when the column has them); it returns how many rows hold a value.
func (f *flbaPages) read(dst []int64, defs []int16) (packed int, err error) {
	if err := f.settle(); err != nil {
		return 0, err
	}
	filled := 0
	for filled < len(dst) {
		if f.pos == f.rows {
			if err := f.nextPage(); err != nil {
				return 0, err
			}
			continue
		}
		if err := f.materialize(); err != nil {
			return 0, err
		}
		k := min(len(dst)-filled, f.rows-f.pos)
		copy(dst[filled:filled+k], f.vals[f.pos:f.pos+k])
		switch {
		case f.maxDef > 0 && f.full:
			for i := range defs[filled : filled+k] {
				defs[filled+i] = f.maxDef
			}
			packed += k
		case f.maxDef > 0:
			copy(defs[filled:filled+k], f.defs[f.pos:f.pos+k])
			for _, d := range f.defs[f.pos : f.pos+k] {
				if d == f.maxDef {
					packed++
				}
			}
		default:
			packed += k
		}
		f.pos += k
		filled += k
	}
	return packed, nil
}

// nextPage decodes the next data page, taking in a dictionary page on
// the way.
func (f *flbaPages) nextPage() error {
	for f.pages.Next() {
		// The page reader releases each page when it reads the next.
		switch pg := f.pages.Page().(type) {
		case *file.DictionaryPage:
			if err := f.readDictionary(pg); err != nil {
				return err
			}
		case *file.DataPageV1:
			return f.readV1(pg)
		case *file.DataPageV2:
			return f.readV2(pg)
		}
	}
	if err := f.pages.Err(); err != nil {
		return err
	}
	return errors.New("column chunk ended early")
}

func (f *flbaPages) readDictionary(pg *file.DictionaryPage) error {
	if e := parquet.Encoding(pg.Encoding()); e != parquet.Encodings.Plain && e != parquet.Encodings.PlainDict {
		return fmt.Errorf("dictionary page in encoding %s", e)
	}
	n := int(pg.NumValues())
	data := pg.Data()
	if n < 0 || len(data) < n*f.width {
		return fmt.Errorf("dictionary page: %w", errPageFormat)
	}
	f.dict = grown(f.dict, n)
	f.dictGen = dictGens.Add(1)
	if f.little {
		littleEndianInts(f.dict, data, f.width)
		return nil
	}
	for i := range f.dict {
		f.dict[i] = bigEndianInt64(data[i*f.width : (i+1)*f.width])
	}
	return nil
}

func (f *flbaPages) readV1(pg *file.DataPageV1) error {
	n := int(pg.NumValues())
	data := pg.Data()
	if f.maxDef > 0 {
		if pg.DefinitionLevelEncoding() != parquet.Encodings.RLE {
			return fmt.Errorf("definition levels in encoding %s", pg.DefinitionLevelEncoding())
		}
		if len(data) < 4 {
			return fmt.Errorf("data page: %w", errPageFormat)
		}
		size := int(binary.LittleEndian.Uint32(data))
		if size < 0 || len(data) < 4+size {
			return fmt.Errorf("data page levels: %w", errPageFormat)
		}
		if err := f.readDefs(data[4:4+size], n); err != nil {
			return err
		}
		data = data[4+size:]
	}
	return f.readValues(parquet.Encoding(pg.Encoding()), data, n)
}

func (f *flbaPages) readV2(pg *file.DataPageV2) error {
	n := int(pg.NumValues())
	data := pg.Data()
	rep, def := int(pg.RepetitionLevelByteLen()), int(pg.DefinitionLevelByteLen())
	if rep != 0 || def < 0 || len(data) < def {
		return fmt.Errorf("data page v2 levels: %w", errPageFormat)
	}
	if f.maxDef > 0 {
		if err := f.readDefs(data[:def], n); err != nil {
			return err
		}
	}
	return f.readValues(parquet.Encoding(pg.Encoding()), data[def:], n)
}

func (f *flbaPages) readDefs(data []byte, n int) error {
	// A page without NULLs is one RLE run of the maximum level.
	width := bits.Len16(uint16(f.maxDef))
	if h, k := binary.Uvarint(data); k > 0 && h&1 == 0 && int(h>>1) >= n && width <= 8 && len(data) > k && int16(data[k]) == f.maxDef {
		f.full = true
		return nil
	}
	f.idx = grown(f.idx, n)
	if err := rleHybrid(data, width, f.idx); err != nil {
		return fmt.Errorf("definition levels: %w", err)
	}
	f.defs = grown(f.defs, n)
	present := 0
	for i, d := range f.idx {
		f.defs[i] = int16(d)
		if int16(d) == f.maxDef {
			present++
		}
	}
	f.full = present == n
	return nil
}

// readValues takes in the page's values section for its n rows; they are
// converted when read (materialize).
func (f *flbaPages) readValues(enc parquet.Encoding, data []byte, n int) error {
	present := n
	if f.maxDef > 0 && !f.full {
		present = 0
		for _, d := range f.defs[:n] {
			if d == f.maxDef {
				present++
			}
		}
	}
	switch enc {
	case parquet.Encodings.Plain:
		if len(data) < present*f.width {
			return fmt.Errorf("plain values: %w", errPageFormat)
		}
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		if len(data) < 1 {
			return fmt.Errorf("dictionary indices: %w", errPageFormat)
		}
	default:
		return fmt.Errorf("values in encoding %s", enc)
	}
	f.rows, f.pos, f.enc, f.data, f.present = n, 0, enc, data, present
	f.ready, f.idxReady = false, false
	return nil
}

// indices decodes the current dictionary page's indices of its present
// values into idx.
func (f *flbaPages) indices() error {
	if f.idxReady {
		return nil
	}
	f.idx = grown(f.idx, f.present)
	if err := rleHybrid(f.data[1:], int(f.data[0]), f.idx); err != nil {
		return fmt.Errorf("dictionary indices: %w", err)
	}
	f.idxReady = true
	return nil
}

// materialize converts the current page's values into vals, one per row.
func (f *flbaPages) materialize() error {
	if f.ready {
		return nil
	}
	n, present, data := f.rows, f.present, f.data
	f.vals = grown(f.vals, n)
	packed := f.vals[n-present:]
	switch f.enc {
	case parquet.Encodings.Plain:
		if f.little {
			littleEndianInts(packed, data, f.width)
			break
		}
		for i := range packed {
			packed[i] = bigEndianInt64(data[i*f.width : (i+1)*f.width])
		}
	default:
		if err := f.indices(); err != nil {
			return err
		}
		for i, ix := range f.idx {
			if int(ix) >= len(f.dict) {
				return fmt.Errorf("dictionary index %d of %d values: %w", ix, len(f.dict), errPageFormat)
			}
			packed[i] = f.dict[ix]
		}
	}
	if present < n {
		// Move the values, packed at the end, to their rows.
		k := n - present
		for i := range f.vals[:n] {
			if f.defs[i] == f.maxDef {
				f.vals[i] = f.vals[k]
				k++
			} else {
				f.vals[i] = 0
			}
		}
	}
	f.vals = f.vals[:n]
	f.ready = true
	return nil
}

// rleHybrid decodes len(out) values of width bits from Parquet's RLE /
// bit-packing hybrid encoding.
func rleHybrid(data []byte, width int, out []uint32) error {
	if width < 0 || width > 32 {
		return fmt.Errorf("bit width %d: %w", width, errPageFormat)
	}
	bytesPerValue := (width + 7) / 8
	mask := uint64(1)<<width - 1
	for i := 0; i < len(out); {
		h, k := binary.Uvarint(data)
		if k <= 0 {
			return fmt.Errorf("run header: %w", errPageFormat)
		}
		data = data[k:]
		if h&1 == 0 {
			if len(data) < bytesPerValue {
				return fmt.Errorf("run value: %w", errPageFormat)
			}
			var v uint32
			for b := range bytesPerValue {
				v |= uint32(data[b]) << (8 * b)
			}
			data = data[bytesPerValue:]
			run := min(int(h>>1), len(out)-i)
			for j := range run {
				out[i+j] = v
			}
			i += run
			continue
		}
		groups := int(h >> 1)
		size := groups * width
		if groups < 0 || len(data) < size {
			return fmt.Errorf("bit-packed run: %w", errPageFormat)
		}
		run := min(groups*8, len(out)-i)
		packed := data[:size]
		j := 0
		if width > 0 && width <= 8 {
			// A group of eight values fills width bytes: one load each.
			for ; j+8 <= run && j/8*width+8 <= len(packed); j += 8 {
				w := binary.LittleEndian.Uint64(packed[j/8*width:])
				o := out[i+j : i+j+8]
				for b := range o {
					o[b] = uint32(w >> (b * width) & mask)
				}
			}
		}
		if width > 8 {
			j = unpackWide(packed, width, out[i:i+run], j) // nativesparse.go
		}
		for ; j < run; j++ {
			bit := j * width
			at := bit / 8
			var w uint64
			if at+8 <= len(packed) {
				w = binary.LittleEndian.Uint64(packed[at:])
			} else {
				for b := at; b < len(packed); b++ {
					w |= uint64(packed[b]) << (8 * (b - at))
				}
			}
			out[i+j] = uint32(w >> (bit % 8) & mask)
		}
		data = data[size:]
		i += run
	}
	return nil
}

package pushdown

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/parquet"
)

// The page-level half of late materialisation: a selective scan skips the
// rows of a column chunk its filter rejected without converting them, and
// converts only the rows it kept. Skipped rows are owed (debt) until rows
// after them are read, so that a row group whose rows are all rejected
// never has its pages of the other columns decompressed; a page whose rows
// are partly kept is decompressed (Parquet pages are compressed whole) but
// only its kept values are converted, read at their position in PLAIN
// pages and looked up by their index in dictionary pages.

// littleEndianInts converts PLAIN INT32 (width 4) or INT64 (width 8)
// values.
func littleEndianInts(dst []int64, data []byte, width int) {
	if width == 4 {
		for i := range dst {
			dst[i] = int64(int32(binary.LittleEndian.Uint32(data[4*i:])))
		}
		return
	}
	for i := range dst {
		dst[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
}

// dictGens numbers the dictionaries read by all scans, so that a verdict
// derived from one is never taken for another's.
var dictGens atomic.Int64

// skip passes over the next n rows.
func (f *flbaPages) skip(n int) { f.debt += n }

// settle moves past the skipped rows, reading the pages they end in.
func (f *flbaPages) settle() error {
	for f.debt > 0 {
		if f.pos == f.rows {
			if err := f.nextPage(); err != nil {
				return err
			}
			continue
		}
		k := min(f.debt, f.rows-f.pos)
		f.pos += k
		f.debt -= k
	}
	return nil
}

// value is row r of the current page, which has no NULL.
func (f *flbaPages) value(r int) (int64, error) {
	if f.ready {
		return f.vals[r], nil
	}
	if f.enc == parquet.Encodings.Plain {
		b := f.data[r*f.width:]
		switch {
		case !f.little:
			return bigEndianInt64(b[:f.width]), nil
		case f.width == 4:
			return int64(int32(binary.LittleEndian.Uint32(b))), nil
		default:
			return int64(binary.LittleEndian.Uint64(b)), nil
		}
	}
	if err := f.indices(); err != nil {
		return 0, err
	}
	ix := f.idx[r]
	if int(ix) >= len(f.dict) {
		return 0, fmt.Errorf("dictionary index %d of %d values: %w", ix, len(f.dict), errPageFormat)
	}
	return f.dict[ix], nil
}

// gather reads the next n rows and keeps those at the offsets sel (in
// increasing order, each below n): their values in dst, and, when the
// column has definition levels, theirs in defs. It returns how many of
// them hold a value.
func (f *flbaPages) gather(n int, sel []int32, dst []int64, defs []int16) (packed int, err error) {
	if err := f.settle(); err != nil {
		return 0, err
	}
	base, k := 0, 0 // the window's offset of the current page's row pos; sel consumed
	for base < n {
		if f.pos == f.rows {
			if err := f.nextPage(); err != nil {
				return 0, err
			}
			continue
		}
		seg := min(n-base, f.rows-f.pos)
		if k < len(sel) && int(sel[k]) < base+seg && (f.maxDef > 0 && !f.full || denseIn(sel[k:], base+seg, f.rows)) {
			// A page with NULLs has its values placed by the definition
			// levels, and a page with many kept rows is converted faster
			// whole: materialize does both once for all its rows.
			if err := f.materialize(); err != nil {
				return 0, err
			}
		}
		for ; k < len(sel) && int(sel[k]) < base+seg; k++ {
			r := f.pos + int(sel[k]) - base
			switch {
			case f.maxDef > 0 && !f.full:
				dst[k], defs[k] = f.vals[r], f.defs[r]
				if f.defs[r] == f.maxDef {
					packed++
				}
				continue
			case defs != nil:
				defs[k] = f.maxDef
			}
			v, err := f.value(r)
			if err != nil {
				return 0, err
			}
			dst[k] = v
			packed++
		}
		f.pos += seg
		base += seg
	}
	return packed, nil
}

// dictKeep is a filter's verdict on each value of a dictionary: whether
// rows holding it are kept, and whether NULL rows are.
type dictKeep struct {
	gen  int64   // the flbaPages dictGen it was computed for
	keep []uint8 // 1: kept

	keepNull bool
}

// rowFilter picks rows of one column for selectRows: keepFor gives the
// verdicts on the current dictionary of f, pick evaluates rows of a page
// without a dictionary (or with NULLs) given their values and definition
// levels (nil: all hold a value), returning the offsets of the kept ones.
type rowFilter struct {
	keepFor func(f *flbaPages) (*dictKeep, error)
	pick    func(vals []int64, defs []int16) ([]int32, error)
}

// selectRows reads the next n rows and appends to sel the offsets of
// those the filter keeps, their values to vals and, when the column has
// definition levels, theirs to defs. On a dictionary page without NULLs
// the filter was evaluated once per dictionary value, and a row costs
// one lookup of its index.
func (f *flbaPages) selectRows(n int, rf rowFilter, sel []int32, vals []int64, defs []int16) ([]int32, []int64, []int16, error) {
	if err := f.settle(); err != nil {
		return nil, nil, nil, err
	}
	for base := 0; base < n; {
		if f.pos == f.rows {
			if err := f.nextPage(); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		seg := min(n-base, f.rows-f.pos)
		var err error
		if f.enc != parquet.Encodings.Plain && (f.maxDef == 0 || f.full) {
			sel, vals, defs, err = f.selectDictRows(seg, base, rf, sel, vals, defs)
		} else {
			sel, vals, defs, err = f.selectPageRows(seg, base, rf, sel, vals, defs)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		f.pos += seg
		base += seg
	}
	return sel, vals, defs, nil
}

func (f *flbaPages) selectDictRows(seg, base int, rf rowFilter, sel []int32, vals []int64, defs []int16) ([]int32, []int64, []int16, error) {
	if err := f.indices(); err != nil {
		return nil, nil, nil, err
	}
	k, err := rf.keepFor(f)
	if err != nil {
		return nil, nil, nil, err
	}
	idx, keep := f.idx[f.pos:f.pos+seg], k.keep
	start := len(sel)
	sel = slices.Grow(sel, seg)[:start+seg]
	// Without a branch on the verdict: a range keeps rows at random.
	kept := start
	for i, ix := range idx {
		if int(ix) >= len(keep) {
			return nil, nil, nil, fmt.Errorf("dictionary index %d of %d values: %w", ix, len(keep), errPageFormat)
		}
		sel[kept] = int32(base + i)
		kept += int(keep[ix])
	}
	sel = sel[:kept]
	for _, o := range sel[start:] {
		vals = append(vals, f.dict[idx[int(o)-base]])
		if f.maxDef > 0 {
			defs = append(defs, f.maxDef)
		}
	}
	return sel, vals, defs, nil
}

func (f *flbaPages) selectPageRows(seg, base int, rf rowFilter, sel []int32, vals []int64, defs []int16) ([]int32, []int64, []int16, error) {
	if err := f.materialize(); err != nil {
		return nil, nil, nil, err
	}
	var d []int16
	if f.maxDef > 0 && !f.full {
		d = f.defs[f.pos : f.pos+seg]
	}
	picked, err := rf.pick(f.vals[f.pos:f.pos+seg], d)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, o := range picked {
		r := f.pos + int(o)
		sel = append(sel, int32(base)+o)
		vals = append(vals, f.vals[r])
		switch {
		case d != nil:
			defs = append(defs, f.defs[r])
		case f.maxDef > 0:
			defs = append(defs, f.maxDef)
		}
	}
	return sel, vals, defs, nil
}

// unpackWide unpacks the whole groups of eight bit-packed values of width
// 9 to 32 from group j/8 on into out, as far as a load of eight bytes at
// the end of a group stays inside packed, and returns the next value to
// unpack. A dictionary of 257 to 65536 values (a date column has some
// thousands) has indices this wide; unpacked value by value they cost
// more than the predicate evaluated on them.
func unpackWide(packed []byte, width int, out []uint32, j int) int {
	mask := uint64(1)<<width - 1
	w := uint(width)
	if width <= 16 {
		// A group fills at most 16 bytes: two loads.
		for ; j+8 <= len(out) && j/8*width+16 <= len(packed); j += 8 {
			g := packed[j/8*width:]
			lo, hi := binary.LittleEndian.Uint64(g), binary.LittleEndian.Uint64(g[8:])
			o := out[j : j+8 : j+8]
			for b := range uint(8) {
				bit := b * w
				var v uint64
				if bit < 64 {
					v = lo>>bit | hi<<(64-bit)
				} else {
					v = hi >> (bit - 64)
				}
				o[b] = uint32(v & mask)
			}
		}
		return j
	}
	for ; j+8 <= len(out) && j/8*width+width+8 <= len(packed); j += 8 {
		g := packed[j/8*width:]
		o := out[j : j+8 : j+8]
		for b := range uint(8) {
			bit := b * w
			o[b] = uint32(binary.LittleEndian.Uint64(g[bit>>3:]) >> (bit & 7) & mask)
		}
	}
	return j
}

// denseIn says the offsets of sel below end are more than one in eight of
// a page's rows.
func denseIn(sel []int32, end, rows int) bool {
	limit := rows / 8
	return len(sel) > limit && int(sel[limit]) < end
}

package pushdown

import "encoding/binary"

// unpackGroups unpacks whole groups of eight bit-packed values of width
// 1 to 32 bits from data into out, as far as 8-byte loads stay within
// data, and returns how many values it wrote (a multiple of eight). Each
// value is one unaligned load, shift and mask, with the eight offsets of a
// group computed once: the per-value offset arithmetic and checks were
// most of the cost of decoding dictionary indices of 9 to 17 bits (TPC-H's
// dates and prices).
func unpackGroups(out []uint32, data []byte, width int, mask uint64) int {
	if width <= 8 {
		return unpackNarrow(out, data, width, mask)
	}
	w := uint(width)
	o1, o2, o3, o4, o5, o6, o7 := w>>3, 2*w>>3, 3*w>>3, 4*w>>3, 5*w>>3, 6*w>>3, 7*w>>3
	s1, s2, s3, s4, s5, s6, s7 := w&7, 2*w&7, 3*w&7, 4*w&7, 5*w&7, 6*w&7, 7*w&7
	j := 0
	for base := 0; j+8 <= len(out) && base+width+8 <= len(data); base += width {
		g := data[base : base+width+8]
		o := (*[8]uint32)(out[j : j+8])
		o[0] = uint32(binary.LittleEndian.Uint64(g) & mask)
		o[1] = uint32(binary.LittleEndian.Uint64(g[o1:]) >> s1 & mask)
		o[2] = uint32(binary.LittleEndian.Uint64(g[o2:]) >> s2 & mask)
		o[3] = uint32(binary.LittleEndian.Uint64(g[o3:]) >> s3 & mask)
		o[4] = uint32(binary.LittleEndian.Uint64(g[o4:]) >> s4 & mask)
		o[5] = uint32(binary.LittleEndian.Uint64(g[o5:]) >> s5 & mask)
		o[6] = uint32(binary.LittleEndian.Uint64(g[o6:]) >> s6 & mask)
		o[7] = uint32(binary.LittleEndian.Uint64(g[o7:]) >> s7 & mask)
		j += 8
	}
	return j
}

// unpackNarrow is unpackGroups for widths up to 8: a group of eight values
// fills width bytes, one load.
func unpackNarrow(out []uint32, data []byte, width int, mask uint64) int {
	w := uint(width)
	j := 0
	for base := 0; j+8 <= len(out) && base+8 <= len(data); base += width {
		v := binary.LittleEndian.Uint64(data[base:])
		o := (*[8]uint32)(out[j : j+8])
		o[0] = uint32(v & mask)
		o[1] = uint32(v >> w & mask)
		o[2] = uint32(v >> (2 * w) & mask)
		o[3] = uint32(v >> (3 * w) & mask)
		o[4] = uint32(v >> (4 * w) & mask)
		o[5] = uint32(v >> (5 * w) & mask)
		o[6] = uint32(v >> (6 * w) & mask)
		o[7] = uint32(v >> (7 * w) & mask)
		j += 8
	}
	return j
}

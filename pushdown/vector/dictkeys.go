package vector

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// maxDictCombos bounds the table of dictGroupIDs: the product of the key
// dictionaries' sizes (each plus one for NULL).
const maxDictCombos = 4096

// dictGroupIDs finds the groups of the selected rows when every grouping
// key is a string column read as a dictionary with few values, as the
// native Parquet reader gives them (TPC-H Q1 groups by two flags): a row's
// group is looked up by its dictionary indices, and the key is encoded and
// hashed once per distinct combination in the batch rather than once per
// row. It reports false, having done nothing, for any other keys.
func (w *worker) dictGroupIDs(nums []*numVec, strs []strVec, sel []int32) bool {
	if len(w.keys) == 0 {
		return false
	}
	type dictKey struct {
		dict  *array.Dictionary
		idx   []int32
		size  int // dictionary values + 1 for NULL
		nulls bool
	}
	keys := make([]dictKey, len(w.keys))
	combos := 1
	for k := range w.keys {
		if nums[k] != nil {
			return false
		}
		d, ok := strs[k].arr.(*array.Dictionary)
		if !ok {
			return false
		}
		ind, ok := d.Indices().(*array.Int32)
		if !ok {
			return false
		}
		keys[k] = dictKey{dict: d, idx: ind.Int32Values(), size: d.Dictionary().Len() + 1, nulls: d.NullN() > 0}
		combos *= keys[k].size
		if combos > maxDictCombos {
			return false
		}
	}
	table := make([]int32, combos)
	for i := range table {
		table[i] = -1
	}
	// The codes key by key: one tight loop per key column.
	codes := grow(w.cbuf, len(sel))
	w.cbuf = codes
	for k, key := range keys {
		dictCodes(codes, sel, key.idx, key.size, key.nulls, key.dict, k == 0)
	}
	for i, row := range sel {
		code := codes[i]
		g := table[code]
		if g < 0 {
			g = w.stringKeyGroup(nums, strs, i, int(row))
			table[code] = g
		}
		w.gids[i] = g
	}
	return true
}

// stringKeyGroup is the group of a row whose keys are all strings, encoded
// exactly as groupIDs encodes them, so that batches grouped either way
// (and workers merged) agree.
func (w *worker) stringKeyGroup(nums []*numVec, strs []strVec, i, row int) int32 {
	buf := w.kbuf[:0]
	for k := range w.keys {
		s, null := strs[k].at(row)
		if null {
			buf = append(buf, 0)
			continue
		}
		buf = append(buf, 1)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	w.kbuf = buf
	if g, ok := w.index[string(buf)]; ok {
		return g
	}
	return w.group(string(buf), w.keyValues(nums, strs, i, row))
}

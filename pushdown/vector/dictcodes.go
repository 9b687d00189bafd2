package vector

import "github.com/apache/arrow-go/v18/arrow/array"

// dictCodes folds one dictionary key into the selected rows' combined
// codes: code·size + index, with size-1 standing for NULL (first: the
// codes start from this key).
func dictCodes(codes, sel, idx []int32, size int, nulls bool, dict *array.Dictionary, first bool) {
	codes = codes[:len(sel)]
	if nulls {
		for i, row := range sel {
			c := int32(size - 1)
			if dict.IsValid(int(row)) {
				c = idx[row]
			}
			if first {
				codes[i] = c
			} else {
				codes[i] = codes[i]*int32(size) + c
			}
		}
		return
	}
	if first {
		for i, row := range sel {
			codes[i] = idx[row]
		}
		return
	}
	s := int32(size)
	for i, row := range sel {
		codes[i] = codes[i]*s + idx[row]
	}
}

package vecexec

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// errBatchShape says a batch holds a column in a form the vectorized
// join aggregate does not handle; the row path computes the query.
var errBatchShape = errors.New("vectorized join: unexpected column type")

// gather is arr's rows idx, in that order (a row may repeat; a negative
// index is a NULL, an outer join's padding), as a new array the caller
// releases. It covers what the vector path's batches
// hold: fixed-width numbers, dates and decimals, strings and binaries,
// and dictionaries of them, whose gathered indices keep the dictionary.
func gather(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	switch a := arr.(type) {
	case *array.Dictionary:
		ind, err := gather(mem, a.Indices(), idx)
		if err != nil {
			return nil, err
		}
		defer ind.Release()
		return array.NewDictionaryArray(a.DataType(), ind, a.Dictionary()), nil
	case *array.String:
		return gatherValues(mem, arr, idx, a.Value)
	case *array.LargeString:
		return gatherValues(mem, arr, idx, a.Value)
	case *array.Binary:
		return gatherValues(mem, arr, idx, a.Value)
	case *array.LargeBinary:
		return gatherValues(mem, arr, idx, a.Value)
	case *array.Boolean: // bits, not bytes
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		b.Reserve(len(idx))
		for _, r := range idx {
			if r < 0 || a.IsNull(int(r)) {
				b.AppendNull()
			} else {
				b.UnsafeAppend(a.Value(int(r)))
			}
		}
		return b.NewArray(), nil
	}
	fw, ok := arr.DataType().(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth()%8 != 0 || len(arr.Data().Buffers()) != 2 {
		return nil, fmt.Errorf("%w: cannot gather a %s column", errBatchShape, arr.DataType())
	}
	return gatherFixed(arr, idx, fw.BitWidth()/8), nil
}

// gatherFixed copies the values of a fixed-width array byte-wise: the
// value buffer is the array's second, its first the validity bitmap.
func gatherFixed(arr arrow.Array, idx []int32, width int) arrow.Array {
	data := arr.Data()
	off := data.Offset()
	src := data.Buffers()[1].Bytes()[off*width:]
	out := make([]byte, len(idx)*width)
	padded := false
	switch width {
	case 8:
		for i, r := range idx {
			if r < 0 {
				padded = true
				continue
			}
			copy(out[i*8:i*8+8], src[int(r)*8:int(r)*8+8])
		}
	case 4:
		for i, r := range idx {
			if r < 0 {
				padded = true
				continue
			}
			copy(out[i*4:i*4+4], src[int(r)*4:int(r)*4+4])
		}
	default:
		for i, r := range idx {
			if r < 0 {
				padded = true
				continue
			}
			copy(out[i*width:(i+1)*width], src[int(r)*width:(int(r)+1)*width])
		}
	}
	var valid *memory.Buffer
	nulls := 0
	if arr.NullN() > 0 || padded {
		bits := make([]byte, bitutil.BytesForBits(int64(len(idx))))
		for i, r := range idx {
			if r >= 0 && arr.IsValid(int(r)) {
				bitutil.SetBit(bits, i)
			} else {
				nulls++
			}
		}
		valid = memory.NewBufferBytes(bits)
	}
	d := array.NewData(arr.DataType(), len(idx), []*memory.Buffer{valid, memory.NewBufferBytes(out)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// gatherValues gathers a string or binary column (V is string or []byte)
// through its builder's Append.
func gatherValues[V string | []byte](mem memory.Allocator, arr arrow.Array, idx []int32, value func(int) V) (arrow.Array, error) {
	b := array.NewBuilder(mem, arr.DataType())
	defer b.Release()
	vb, ok := b.(interface{ Append(V) })
	if !ok {
		return nil, fmt.Errorf("%w: cannot build a %s column", errBatchShape, arr.DataType())
	}
	b.Reserve(len(idx))
	for _, r := range idx {
		if r < 0 || arr.IsNull(int(r)) {
			b.AppendNull()
			continue
		}
		vb.Append(value(int(r)))
	}
	return b.NewArray(), nil
}

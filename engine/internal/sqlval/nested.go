package sqlval

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// nestedValue reads row i of a list, map or struct column as a JSON
// document. Maps become JSON objects keyed by the map's keys written as text
// (Spark's to_json does the same), so that summary['operation'] and
// column_sizes['1'] read as users expect; Arrow's own JSON form of a map is
// a list of key/value pairs.
func nestedValue(arr arrow.Array, i int) (any, error) {
	v, err := plainValue(arr, i)
	if err != nil {
		return nil, err
	}
	return jsonValue(v)
}

// plainValue reads row i of arr as the maps, slices and scalars that
// encoding/json writes.
func plainValue(arr arrow.Array, i int) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case *array.Map:
		start, end := a.ValueOffsets(i)
		obj := make(map[string]any, end-start)
		for j := int(start); j < int(end); j++ {
			k, err := plainValue(a.Keys(), j)
			if err != nil {
				return nil, err
			}
			v, err := plainValue(a.Items(), j)
			if err != nil {
				return nil, err
			}
			obj[fmt.Sprint(k)] = v
		}
		return obj, nil
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			v, err := plainValue(a.ListValues(), j)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		obj := make(map[string]any, a.NumField())
		for f := 0; f < a.NumField(); f++ {
			v, err := plainValue(a.Field(f), i)
			if err != nil {
				return nil, err
			}
			obj[st.Field(f).Name] = v
		}
		return obj, nil
	case *array.Boolean:
		return a.Value(i), nil
	}
	if arr.DataType().ID() == arrow.EXTENSION {
		return arr.GetOneForMarshal(i), nil
	}
	v, err := RowValue(arr, i)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case time.Time:
		if arr.DataType().ID() == arrow.DATE32 {
			return v.Format(time.DateOnly), nil
		}
		return v.Format("2006-01-02 15:04:05.999999"), nil
	case fmt.Stringer:
		return v.String(), nil // decimals and times of day
	}
	return v, nil
}

package metatables

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// The metrics columns of the files tables, each a map keyed by field id.
var metricsColumns = []string{"column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds"}

// readableColumn is one column of the table in readable_metrics.
type readableColumn struct {
	name string
	id   int
	typ  iceberg.Type
}

// readableColumns lists the primitive columns of sc, nested struct fields
// by their dotted names, sorted by name as Spark shows them.
func readableColumns(sc *iceberg.Schema) []readableColumn {
	var out []readableColumn
	var walk func(prefix string, fields []iceberg.NestedField)
	walk = func(prefix string, fields []iceberg.NestedField) {
		for _, f := range fields {
			switch t := f.Type.(type) {
			case *iceberg.StructType:
				walk(prefix+f.Name+".", t.FieldList)
			case iceberg.PrimitiveType:
				out = append(out, readableColumn{name: prefix + f.Name, id: f.ID, typ: t})
			}
		}
	}
	walk("", sc.Fields())
	slices.SortFunc(out, func(a, b readableColumn) int { return strings.Compare(a.name, b.name) })
	return out
}

// readableMetricsField is the Arrow field of Spark's readable_metrics: per
// column, its statistics with the bounds decoded to the column's type.
func readableMetricsField(cols []readableColumn) (arrow.Field, error) {
	id := 1 << 20 // ids only need to be unique within this schema
	next := func() int { id++; return id }
	fields := make([]iceberg.NestedField, 0, len(cols))
	for _, c := range cols {
		fields = append(fields, iceberg.NestedField{ID: next(), Name: c.name, Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: next(), Name: "column_size", Type: iceberg.PrimitiveTypes.Int64},
			{ID: next(), Name: "value_count", Type: iceberg.PrimitiveTypes.Int64},
			{ID: next(), Name: "null_value_count", Type: iceberg.PrimitiveTypes.Int64},
			{ID: next(), Name: "nan_value_count", Type: iceberg.PrimitiveTypes.Int64},
			{ID: next(), Name: "lower_bound", Type: c.typ},
			{ID: next(), Name: "upper_bound", Type: c.typ},
		}}})
	}
	sc, err := table.SchemaToArrowSchema(iceberg.NewSchema(0,
		iceberg.NestedField{ID: next(), Name: "readable_metrics", Type: &iceberg.StructType{FieldList: fields}}), nil, false, false)
	if err != nil {
		return arrow.Field{}, fmt.Errorf("readable_metrics type: %w", err)
	}
	return sc.Field(0), nil
}

// withReadableMetrics adds Spark's readable_metrics column to a reader of
// a files table, computed from its metrics maps, or of an entries table,
// from the maps inside its data_file column. A table without primitive
// columns, or a reader without the maps, is returned as it is.
func withReadableMetrics(rr array.RecordReader, sc *iceberg.Schema) (array.RecordReader, error) {
	cols := readableColumns(sc)
	maps, ok := metricsMaps(rr.Schema())
	if !ok || len(cols) == 0 {
		return rr, nil
	}
	field, err := readableMetricsField(cols)
	if err != nil {
		return nil, err
	}
	fields := append(slices.Clone(rr.Schema().Fields()), field)
	md := rr.Schema().Metadata()
	out := arrow.NewSchema(fields, &md)
	batches := array.IterFromReader(rr)
	rr.Release()
	return array.ReaderFromIter(out, func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range batches {
			if err != nil {
				yield(nil, err)
				return
			}
			metrics, err := readableMetrics(rec, maps(rec), cols, field)
			if err != nil {
				yield(nil, err)
				return
			}
			arrays := append(slices.Clone(rec.Columns()), metrics)
			batch := array.NewRecordBatch(out, arrays, rec.NumRows())
			metrics.Release()
			if !yield(batch, nil) {
				return
			}
		}
	}), nil
}

// metricsMaps finds the metrics maps in a schema: top-level columns (the
// files tables) or fields of the data_file struct (the entries tables). It
// returns a function that picks them out of a batch.
func metricsMaps(sc *arrow.Schema) (func(arrow.RecordBatch) []arrow.Array, bool) {
	top := make([]int, len(metricsColumns))
	found := true
	for i, name := range metricsColumns {
		idx := sc.FieldIndices(name)
		if len(idx) == 0 {
			found = false
			break
		}
		top[i] = idx[0]
	}
	if found {
		return func(rec arrow.RecordBatch) []arrow.Array {
			out := make([]arrow.Array, len(top))
			for i, c := range top {
				out[i] = rec.Column(c)
			}
			return out
		}, true
	}
	df := sc.FieldIndices("data_file")
	if len(df) == 0 {
		return nil, false
	}
	st, ok := sc.Field(df[0]).Type.(*arrow.StructType)
	if !ok {
		return nil, false
	}
	inner := make([]int, len(metricsColumns))
	for i, name := range metricsColumns {
		j, ok := st.FieldIdx(name)
		if !ok {
			return nil, false
		}
		inner[i] = j
	}
	return func(rec arrow.RecordBatch) []arrow.Array {
		s := rec.Column(df[0]).(*array.Struct)
		out := make([]arrow.Array, len(inner))
		for i, j := range inner {
			out[i] = s.Field(j)
		}
		return out
	}, true
}

// readableMetrics builds the readable_metrics column of one batch from its
// metrics maps, in metricsColumns order.
func readableMetrics(rec arrow.RecordBatch, cols []arrow.Array, columns []readableColumn, field arrow.Field) (arrow.Array, error) {
	b := array.NewBuilder(memory.DefaultAllocator, field.Type).(*array.StructBuilder)
	defer b.Release()
	maps := make([]*array.Map, len(cols))
	for i, c := range cols {
		m, ok := c.(*array.Map)
		if !ok {
			return nil, fmt.Errorf("readable_metrics: column %s is %s, not a map", metricsColumns[i], c.DataType())
		}
		maps[i] = m
	}
	for row := 0; row < int(rec.NumRows()); row++ {
		b.Append(true)
		for ci, col := range columns {
			cb := b.FieldBuilder(ci).(*array.StructBuilder)
			cb.Append(true)
			for mi, m := range maps {
				v, found := mapValue(m, row, int32(col.id))
				fb := cb.FieldBuilder(mi)
				if !found {
					fb.AppendNull()
					continue
				}
				if mi < 4 {
					fb.(*array.Int64Builder).Append(v.(int64))
					continue
				}
				lit, err := iceberg.LiteralFromBytes(col.typ, v.([]byte))
				if err != nil {
					fb.AppendNull() // a bound written for an older type of the column
					continue
				}
				appendLiteral(fb, lit.Any())
			}
		}
	}
	return b.NewArray(), nil
}

// mapValue looks key up in row of a map<int, long> or map<int, binary>.
func mapValue(m *array.Map, row int, key int32) (any, bool) {
	if m.IsNull(row) {
		return nil, false
	}
	keys, ok := m.Keys().(*array.Int32)
	if !ok {
		return nil, false
	}
	start, end := m.ValueOffsets(row)
	for j := int(start); j < int(end); j++ {
		if keys.Value(j) != key || m.Items().IsNull(j) {
			continue
		}
		switch items := m.Items().(type) {
		case *array.Int64:
			return items.Value(j), true
		case *array.Binary:
			return items.Value(j), true
		}
	}
	return nil, false
}

// appendLiteral appends a decoded bound to the builder of its column's type.
func appendLiteral(b array.Builder, v any) {
	ok := true
	switch b := b.(type) {
	case *array.BooleanBuilder:
		var x bool
		if x, ok = v.(bool); ok {
			b.Append(x)
		}
	case *array.Int32Builder:
		var x int32
		if x, ok = v.(int32); ok {
			b.Append(x)
		}
	case *array.Int64Builder:
		var x int64
		if x, ok = v.(int64); ok {
			b.Append(x)
		}
	case *array.Float32Builder:
		var x float32
		if x, ok = v.(float32); ok {
			b.Append(x)
		}
	case *array.Float64Builder:
		var x float64
		if x, ok = v.(float64); ok {
			b.Append(x)
		}
	case *array.Decimal128Builder:
		var x iceberg.Decimal
		if x, ok = v.(iceberg.Decimal); ok {
			b.Append(x.Val)
		}
	case *array.Date32Builder:
		var x iceberg.Date
		if x, ok = v.(iceberg.Date); ok {
			b.Append(arrow.Date32(x))
		}
	case *array.Time64Builder:
		var x iceberg.Time
		if x, ok = v.(iceberg.Time); ok {
			b.Append(arrow.Time64(x))
		}
	case *array.TimestampBuilder:
		switch x := v.(type) {
		case iceberg.Timestamp:
			b.Append(arrow.Timestamp(x))
		case iceberg.TimestampNano:
			b.Append(arrow.Timestamp(x))
		default:
			ok = false
		}
	case *array.StringBuilder:
		var x string
		if x, ok = v.(string); ok {
			b.Append(x)
		}
	case *array.BinaryBuilder:
		var x []byte
		if x, ok = v.([]byte); ok {
			b.Append(x)
		}
	case *extensions.UUIDBuilder:
		var x uuid.UUID
		if x, ok = v.(uuid.UUID); ok {
			b.Append(x)
		}
	case *array.FixedSizeBinaryBuilder:
		var x []byte
		if x, ok = v.([]byte); ok {
			b.Append(x)
		}
	default:
		ok = false
	}
	if !ok {
		b.AppendNull()
	}
}

package pushdown

import (
	"context"
	"encoding/hex"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// The spec stores a uuid as a Parquet fixed_len_byte_array(16), which
// should carry the UUID logical type; pyarrow (PyIceberg) writes it plain.
// Java Iceberg and PyIceberg read such a column; iceberg-go v0.7.0 takes it
// for a fixed(16), promotes that to uuid and then has no Arrow cast for it
// ("function 'cast_extension' has no kernel matching input types
// (fixed_size_binary[16])"). A task whose file stores a projected uuid
// column so is read over a view of the table whose uuid fields are
// fixed(16), which iceberg-go reads as they are (a default as the hex form
// of its 16 bytes, the form of a fixed default), and its batches are given
// the uuid type back: the same 16 bytes, re-typed.

// uuidFieldIDs are the ids of the uuid fields of schema, nested ones
// included.
func uuidFieldIDs(schema *iceberg.Schema) (map[int]bool, error) {
	byID, err := iceberg.IndexByID(schema)
	if err != nil {
		return nil, err
	}
	ids := map[int]bool{}
	for id, f := range byID {
		if _, ok := f.Type.(iceberg.UUIDType); ok {
			ids[id] = true
		}
	}
	return ids, nil
}

// splitPlainUUID separates from tasks those whose Parquet file stores a
// projected uuid column as a plain fixed_len_byte_array(16).
func (r Read) splitPlainUUID(tasks []table.FileScanTask) (rest, plain []table.FileScanTask, err error) {
	if len(tasks) == 0 || r.FS == nil || r.Table == nil || r.Widen == nil {
		return tasks, nil, nil
	}
	proj, err := r.Scan.Projection()
	if err != nil {
		return nil, nil, err
	}
	return r.plainUUIDIn(proj, tasks)
}

// plainUUIDIn separates from tasks those whose Parquet file stores a uuid
// column of proj as a plain fixed_len_byte_array(16).
func (r Read) plainUUIDIn(proj *iceberg.Schema, tasks []table.FileScanTask) (rest, plain []table.FileScanTask, err error) {
	ids, err := uuidFieldIDs(proj)
	if err != nil || len(ids) == 0 {
		return tasks, nil, err
	}
	mapping := r.Table.Metadata().NameMapping()
	for _, t := range tasks {
		if t.File.FileFormat() != iceberg.ParquetFile {
			rest = append(rest, t)
			continue
		}
		meta, err := footerOf(r.Caches.footerCache(), r.FS, t.File.FilePath(), t.File.FileSizeBytes())
		if err != nil {
			return nil, nil, err
		}
		found := false
		walkFileFields(meta, mapping, func(col int, node pqschema.Node, id int) {
			c := meta.Schema.Column(col)
			_, annotated := c.LogicalType().(pqschema.UUIDLogicalType)
			if ids[id] && node == c.SchemaNode() && c.PhysicalType() == parquet.Types.FixedLenByteArray &&
				c.TypeLength() == 16 && !annotated {
				found = true
			}
		})
		if found {
			plain = append(plain, t)
		} else {
			rest = append(rest, t)
		}
	}
	return rest, plain, nil
}

// uuidAsFixed is fields with every uuid type, nested ones included, made
// fixed(16), and its defaults the hex of their bytes.
func uuidAsFixed(fields []iceberg.NestedField) ([]iceberg.NestedField, error) {
	out := make([]iceberg.NestedField, len(fields))
	for i, f := range fields {
		t, err := typeUUIDAsFixed(f.Type)
		if err != nil {
			return nil, err
		}
		if _, ok := f.Type.(iceberg.UUIDType); ok {
			if f.InitialDefault, err = uuidHex(f.InitialDefault); err != nil {
				return nil, fmt.Errorf("initial-default of %s: %w", f.Name, err)
			}
			if f.WriteDefault, err = uuidHex(f.WriteDefault); err != nil {
				return nil, fmt.Errorf("write-default of %s: %w", f.Name, err)
			}
		}
		f.Type = t
		out[i] = f
	}
	return out, nil
}

func typeUUIDAsFixed(t iceberg.Type) (iceberg.Type, error) {
	switch t := t.(type) {
	case iceberg.UUIDType:
		return iceberg.FixedTypeOf(16), nil
	case *iceberg.StructType:
		fields, err := uuidAsFixed(t.FieldList)
		if err != nil {
			return nil, err
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case *iceberg.ListType:
		elem, err := typeUUIDAsFixed(t.Element)
		if err != nil {
			return nil, err
		}
		l := *t
		l.Element = elem
		return &l, nil
	case *iceberg.MapType:
		key, err := typeUUIDAsFixed(t.KeyType)
		if err != nil {
			return nil, err
		}
		val, err := typeUUIDAsFixed(t.ValueType)
		if err != nil {
			return nil, err
		}
		m := *t
		m.KeyType, m.ValueType = key, val
		return &m, nil
	}
	return t, nil
}

// uuidHex is a uuid default as a fixed(16) default.
func uuidHex(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case uuid.UUID:
		return hex.EncodeToString(v[:]), nil
	case string:
		u, err := uuid.Parse(v)
		if err != nil {
			return nil, err
		}
		return hex.EncodeToString(u[:]), nil
	}
	return nil, fmt.Errorf("unsupported uuid default %v (%T)", v, v)
}

// readUUIDAsFixed reads tasks over the view whose uuid fields are
// fixed(16), their batches given schema's types.
func (r Read) readUUIDAsFixed(ctx context.Context, schema *arrow.Schema, tasks []table.FileScanTask) (iter.Seq2[arrow.RecordBatch, error], error) {
	proj, err := r.Scan.Projection()
	if err != nil {
		return nil, err
	}
	whole, err := r.schema()
	if err != nil {
		return nil, err
	}
	fields, err := uuidAsFixed(whole.Fields())
	if err != nil {
		return nil, err
	}
	scan, err := r.viewScan(proj, fields)
	if err != nil {
		return nil, err
	}
	_, seq, err := scan.ReadTasks(ctx, splitForCores(tasks))
	if err != nil {
		return nil, err
	}
	return retyped(schema, seq), nil
}

// retyped gives the batches of seq schema's types, where they differ only
// in uuid columns read as fixed_size_binary(16).
func retyped(schema *arrow.Schema, seq iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range seq {
			if err != nil {
				yield(nil, err)
				return
			}
			out, err := retypeBatch(schema, rec)
			rec.Release()
			if !yield(out, err) || err != nil {
				return
			}
		}
	}
}

func retypeBatch(schema *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			releaseAll(cols)
			return nil, fmt.Errorf("uuid read as fixed(16) returned no column %s", f.Name)
		}
		data, ok := retype(rec.Column(idx[0]).Data(), f.Type)
		if !ok {
			releaseAll(cols)
			return nil, fmt.Errorf("uuid read as fixed(16) returned column %s as %s, want %s", f.Name, rec.Column(idx[0]).DataType(), f.Type)
		}
		cols[i] = array.MakeFromData(data)
		data.Release()
	}
	out := array.NewRecordBatch(schema, cols, rec.NumRows())
	releaseAll(cols)
	return out, nil
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// retype is data with type want, when the two differ only where want has
// an extension type whose storage is data's type (a uuid read as
// fixed_size_binary(16)), at any depth.
func retype(data arrow.ArrayData, want arrow.DataType) (arrow.ArrayData, bool) {
	if arrow.TypeEqual(data.DataType(), want) {
		data.Retain()
		return data, true
	}
	if ext, ok := want.(arrow.ExtensionType); ok {
		if !arrow.TypeEqual(ext.StorageType(), data.DataType()) {
			return nil, false
		}
		return array.NewData(want, data.Len(), data.Buffers(), data.Children(), data.NullN(), data.Offset()), true
	}
	nested, ok := want.(arrow.NestedType)
	if !ok || data.DataType().ID() != want.ID() || len(nested.Fields()) != len(data.Children()) {
		return nil, false
	}
	children := make([]arrow.ArrayData, len(data.Children()))
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range data.Children() {
		if children[i], ok = retype(c, nested.Fields()[i].Type); !ok {
			return nil, false
		}
	}
	return array.NewData(want, data.Len(), data.Buffers(), children, data.NullN(), data.Offset()), true
}

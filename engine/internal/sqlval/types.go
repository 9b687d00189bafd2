// Package sqlval converts values between go-mysql-server's SQL types,
// Iceberg's types and Arrow's columns (types.go, nested.go), allocates rows
// in blocks (rowalloc.go), computes SUM and AVG of exact types exactly as
// MySQL does (exactagg.go) and folds date literals (folddates.go). It knows
// nothing of tables or sessions.
package sqlval

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/google/uuid"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// sqlType is the SQL type a column of Iceberg type t shows (DESIGN.md, Types).
func SQLType(t iceberg.Type) sql.Type {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return types.Boolean
	case iceberg.Int32Type:
		return types.Int32
	case iceberg.Int64Type:
		return types.Int64
	case iceberg.Float32Type:
		return types.Float32
	case iceberg.Float64Type:
		return types.Float64
	case iceberg.DecimalType:
		return types.MustCreateDecimalType(uint8(t.Precision()), uint8(t.Scale()))
	case iceberg.StringType:
		return types.LongText
	case iceberg.BinaryType:
		return types.LongBlob
	case iceberg.FixedType:
		return types.MustCreateBinary(sqltypes.Binary, int64(t.Len()))
	case iceberg.UUIDType:
		return types.MustCreateString(sqltypes.Char, 36, sql.Collation_Default)
	case iceberg.DateType:
		return types.Date
	case iceberg.TimeType:
		return types.Time
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		// Never MySQL TIMESTAMP, whose range ends in 2038.
		return types.DatetimeMaxPrecision
	default:
		// list, map, struct, variant and the rest read as JSON documents.
		return types.JSON
	}
}

// SchemaOf presents an Iceberg schema as a SQL schema of table tableName,
// with the column types declared at CREATE TABLE where props remember them.
func SchemaOf(sc *iceberg.Schema, props iceberg.Properties, db, tableName string) sql.Schema {
	out := make(sql.Schema, 0, len(sc.Fields()))
	for _, f := range sc.Fields() {
		typ := SQLType(f.Type)
		if declared, ok := DeclaredType(props, f); ok {
			typ = declared
		}
		out = append(out, &sql.Column{
			Name:           f.Name,
			Type:           typ,
			Nullable:       !f.Required,
			Source:         tableName,
			DatabaseSource: db,
			Comment:        f.Doc,
		})
	}
	return out
}

// DeclaredTypeKey is the table property that remembers the MySQL type a
// column was declared with when it is narrower than what its Iceberg type
// shows: VARCHAR(20) or TEXT for string, SMALLINT for int. It is keyed by
// field id, so a rename keeps it. go-mysql-server then enforces the declared
// length or range on insert, as MySQL would; other engines ignore it.
func DeclaredTypeKey(fieldID int) string { return "icesql.column." + strconv.Itoa(fieldID) + ".type" }

// DeclaredTypeProperties lists the declaredTypeKey properties of new columns.
func DeclaredTypeProperties(sc *iceberg.Schema, cols sql.Schema) iceberg.Properties {
	props := iceberg.Properties{}
	for i, f := range sc.Fields() {
		if DeclaredNarrower(cols[i].Type, f.Type) {
			props[DeclaredTypeKey(f.ID)] = cols[i].Type.String()
		}
	}
	return props
}

// DeclaredNarrower says whether a column declared with typ needs its declared
// type remembered: it shows differently from what its Iceberg type shows.
// TIMESTAMP (what TIMESTAMP_LTZ becomes) never does: it only chooses
// timestamptz, and remembering it would bring back MySQL TIMESTAMP's
// 1970–2038 range.
func DeclaredNarrower(typ sql.Type, t iceberg.Type) bool {
	return typ.Type() != sqltypes.Timestamp && typ.String() != SQLType(t).String()
}

var declaredTypes sync.Map // type text -> sql.Type

// DeclaredType returns a field's declared type if props remember one that
// still fits the field's Iceberg type (a later type change voids it).
func DeclaredType(props iceberg.Properties, f iceberg.NestedField) (sql.Type, bool) {
	text, ok := props[DeclaredTypeKey(f.ID)]
	if !ok {
		return nil, false
	}
	if t, ok := declaredTypes.Load(text); ok {
		return t.(sql.Type), icebergTypeMatches(t.(sql.Type), f)
	}
	stmt, err := sqlparser.Parse("CREATE TABLE t (c " + text + ")")
	if err != nil {
		return nil, false
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.TableSpec == nil || len(ddl.TableSpec.Columns) != 1 {
		return nil, false
	}
	t, err := types.ColumnTypeToType(&ddl.TableSpec.Columns[0].Type)
	if err != nil {
		return nil, false
	}
	declaredTypes.Store(text, t)
	return t, icebergTypeMatches(t, f)
}

func icebergTypeMatches(t sql.Type, f iceberg.NestedField) bool {
	it, err := IcebergType(&sql.Column{Name: f.Name, Type: t})
	return err == nil && it.Equals(f.Type)
}

// IcebergType maps a column type from CREATE TABLE to the Iceberg type that
// stores it, or says why it cannot be stored.
func IcebergType(col *sql.Column) (iceberg.Type, error) {
	t := col.Type
	unsupported := func(why string) error {
		return mysqlerr.NotSupported("column %s has type %s: %s", col.Name, t.String(), why)
	}
	switch {
	case types.IsBoolean(t):
		return iceberg.PrimitiveTypes.Bool, nil
	case types.IsInteger(t):
		switch t.Type() {
		case sqltypes.Int64:
			return iceberg.PrimitiveTypes.Int64, nil
		case sqltypes.Uint64:
			return nil, unsupported("Iceberg has no unsigned 64-bit integer; use BIGINT or DECIMAL(20,0)")
		case sqltypes.Uint32:
			return iceberg.PrimitiveTypes.Int64, nil
		default:
			return iceberg.PrimitiveTypes.Int32, nil
		}
	case t.Type() == sqltypes.Float32:
		return iceberg.PrimitiveTypes.Float32, nil
	case t.Type() == sqltypes.Float64:
		return iceberg.PrimitiveTypes.Float64, nil
	case types.IsDecimal(t):
		d := t.(sql.DecimalType)
		if d.Precision() > 38 {
			return nil, unsupported("Iceberg decimals have at most 38 digits")
		}
		return iceberg.DecimalTypeOf(int(d.Precision()), int(d.Scale())), nil
	case types.IsEnum(t), types.IsSet(t), types.IsYear(t), types.IsBit(t):
		return nil, unsupported("Iceberg has no such type")
	case types.IsTextOnly(t):
		return iceberg.PrimitiveTypes.String, nil
	case t.Type() == sqltypes.Binary && t.(sql.StringType).MaxByteLength() == 0:
		// Iceberg's fixed[0] has no Parquet form (a FIXED_LEN_BYTE_ARRAY
		// needs a length): writing one failed with an internal error.
		return nil, unsupported("BINARY(0) has no Iceberg type (fixed needs a length of at least 1); use BINARY(1) or VARBINARY")
	case t.Type() == sqltypes.Binary:
		return iceberg.FixedTypeOf(int(t.(sql.StringType).MaxByteLength())), nil
	case types.IsBinaryType(t):
		return iceberg.PrimitiveTypes.Binary, nil
	case t.Type() == sqltypes.Date:
		return iceberg.PrimitiveTypes.Date, nil
	case t.Type() == sqltypes.Datetime:
		return iceberg.PrimitiveTypes.Timestamp, nil
	case t.Type() == sqltypes.Timestamp:
		// Only Spark's TIMESTAMP_LTZ arrives as TIMESTAMP (the parser turns
		// MySQL's TIMESTAMP into DATETIME(6), see planner/rewrite.go), and
		// Spark stores TIMESTAMP_LTZ as timestamptz.
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case types.IsTimespan(t):
		return iceberg.PrimitiveTypes.Time, nil
	case types.IsJSON(t):
		return nil, unsupported("Iceberg has no JSON type; store JSON text in a STRING column")
	}
	return nil, unsupported("icesql cannot store it in Iceberg")
}

// RowValue reads row i of an Arrow column as the Go value go-mysql-server
// expects for the column's SQL type.
func RowValue(arr arrow.Array, i int) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return int8(1), nil
		}
		return int8(0), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return Decimal128Value(a.Value(i), scale), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *extensions.UUIDArray:
		return a.Value(i).String(), nil
	case *array.FixedSizeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Date32:
		return Date32Value(a.Value(i)), nil
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		return types.Timespan(a.Value(i).ToTime(unit).Sub(time.Unix(0, 0).UTC()) / time.Microsecond), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC(), nil
	}
	switch arr.DataType().ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.MAP, arrow.STRUCT, arrow.FIXED_SIZE_LIST, arrow.EXTENSION:
		return nestedValue(arr, i)
	}
	return nil, fmt.Errorf("reading Arrow type %s is not supported", arr.DataType())
}

func DecimalValue(coeff *big.Int, scale int32) *apd.Decimal {
	return apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(coeff), -scale)
}

// jsonValue normalises a nested value into the plain maps and slices a
// JSON document holds.
func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode nested value as JSON: %w", err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return types.JSONDocument{Val: out}, nil
}

// AppendValue appends a value go-mysql-server produced for a column to the
// Arrow builder of that column. Values arrive already converted to the
// column's SQL type, so only the Go representations of that type occur.
func AppendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		n, err := ToInt64(v)
		b.Append(n != 0)
		return err
	case *array.Int32Builder:
		n, err := ToInt64(v)
		b.Append(int32(n))
		return err
	case *array.Int64Builder:
		n, err := ToInt64(v)
		b.Append(n)
		return err
	case *array.Float32Builder:
		f, err := toFloat64(v)
		b.Append(float32(f))
		return err
	case *array.Float64Builder:
		f, err := toFloat64(v)
		b.Append(f)
		return err
	case *array.Decimal128Builder:
		dt := b.Type().(*arrow.Decimal128Type)
		n, err := decimal128.FromString(decimalText(v), dt.Precision, dt.Scale)
		if err != nil {
			return fmt.Errorf("decimal value %v does not fit DECIMAL(%d,%d): %w", v, dt.Precision, dt.Scale, err)
		}
		b.Append(n)
	case *array.StringBuilder:
		b.Append(toText(v))
	case *array.LargeStringBuilder:
		b.Append(toText(v))
	case *extensions.UUIDBuilder:
		u, err := uuid.Parse(toText(v))
		if err != nil {
			return fmt.Errorf("invalid UUID %q: %w", toText(v), err)
		}
		b.Append(u)
	case *array.BinaryBuilder:
		b.Append([]byte(toText(v)))
	case *array.FixedSizeBinaryBuilder:
		width := b.Type().(*arrow.FixedSizeBinaryType).ByteWidth
		raw := []byte(toText(v))
		if len(raw) > width {
			return fmt.Errorf("value of %d bytes is too long for BINARY(%d)", len(raw), width)
		}
		// MySQL pads BINARY(n) values with zero bytes.
		b.Append(append(raw, make([]byte, width-len(raw))...))
	case *array.Date32Builder:
		t, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("unexpected %T for a DATE column", v)
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.Time64Builder:
		ts, ok := v.(types.Timespan)
		if !ok {
			return fmt.Errorf("unexpected %T for a TIME column", v)
		}
		if ts < 0 || ts >= types.Timespan(24*time.Hour/time.Microsecond) {
			return fmt.Errorf("time value %s is outside 00:00:00 to 23:59:59.999999, the range of Iceberg's time type", ts)
		}
		b.Append(arrow.Time64(int64(ts)))
	case *array.TimestampBuilder:
		t, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("unexpected %T for a DATETIME column", v)
		}
		unit := b.Type().(*arrow.TimestampType).Unit
		ts, err := arrow.TimestampFromTime(t.UTC(), unit)
		if err != nil {
			return err
		}
		b.Append(ts)
	default:
		return fmt.Errorf("writing Arrow type %s is not supported", b.Type())
	}
	return nil
}

func ToInt64(v any) (int64, error) {
	switch n := v.(type) {
	case int8:
		return int64(n), nil
	case int16:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case uint8:
		return int64(n), nil
	case uint16:
		return int64(n), nil
	case uint32:
		return int64(n), nil
	case bool:
		if n {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("unexpected %T for an integer column", v)
}

func toFloat64(v any) (float64, error) {
	switch n := v.(type) {
	case float32:
		return float64(n), nil
	case float64:
		return n, nil
	}
	i, err := ToInt64(v)
	return float64(i), err
}

func decimalText(v any) string {
	switch d := v.(type) {
	case *apd.Decimal:
		return d.Text('f')
	case apd.Decimal:
		return d.Text('f')
	}
	return fmt.Sprint(v)
}

func toText(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	case fmt.Stringer:
		return s.String()
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

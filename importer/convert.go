package importer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// cell is one field converted, before it is appended: a row is appended
// only when all of its fields converted, so that a bad row can be skipped.
type cell struct {
	null bool
	i    int64
	f    float64
	s    string
	d    decimal128.Num
}

// converter turns a field's text into a cell of one Arrow type and
// appends cells to that type's builder.
type converter struct {
	parse  func(s string) (cell, error)
	append func(b array.Builder, c cell)
}

// errNotA is the error of a value that is not of its column's type.
func errNotA(typ string) error { return fmt.Errorf("not %s", typ) }

// converterFor is the converter into the Arrow type dt (a column of the
// target table), or an error for a type import cannot fill from text.
func converterFor(dt arrow.DataType) (converter, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return converter{
			parse: func(s string) (cell, error) {
				switch strings.ToLower(s) {
				case "true", "t", "yes", "1":
					return cell{i: 1}, nil
				case "false", "f", "no", "0":
					return cell{}, nil
				}
				return cell{}, errNotA("a BOOLEAN (true or false)")
			},
			append: func(b array.Builder, c cell) { b.(*array.BooleanBuilder).Append(c.i == 1) },
		}, nil
	case *arrow.Int32Type:
		return converter{
			parse: func(s string) (cell, error) {
				n, err := strconv.ParseInt(s, 10, 32)
				if err != nil {
					return cell{}, errNotA("an INT")
				}
				return cell{i: n}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.Int32Builder).Append(int32(c.i)) },
		}, nil
	case *arrow.Int64Type:
		return converter{
			parse: func(s string) (cell, error) {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return cell{}, errNotA("a BIGINT")
				}
				return cell{i: n}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.Int64Builder).Append(c.i) },
		}, nil
	case *arrow.Float32Type:
		return converter{
			parse: func(s string) (cell, error) {
				f, err := strconv.ParseFloat(s, 32)
				if err != nil {
					return cell{}, errNotA("a FLOAT")
				}
				return cell{f: f}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.Float32Builder).Append(float32(c.f)) },
		}, nil
	case *arrow.Float64Type:
		return converter{
			parse: func(s string) (cell, error) {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return cell{}, errNotA("a DOUBLE")
				}
				return cell{f: f}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.Float64Builder).Append(c.f) },
		}, nil
	case *arrow.Decimal128Type:
		name := fmt.Sprintf("a DECIMAL(%d,%d)", t.Precision, t.Scale)
		return converter{
			parse: func(s string) (cell, error) {
				d, err := decimal128.FromString(s, t.Precision, t.Scale)
				if err != nil || !d.FitsInPrecision(t.Precision) {
					return cell{}, errNotA(name)
				}
				return cell{d: d}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.Decimal128Builder).Append(c.d) },
		}, nil
	case *arrow.StringType, *arrow.LargeStringType:
		return converter{
			parse: func(s string) (cell, error) {
				if !utf8.ValidString(s) {
					return cell{}, errNotA("UTF-8 text")
				}
				return cell{s: s}, nil
			},
			append: func(b array.Builder, c cell) { b.(array.StringLikeBuilder).Append(c.s) },
		}, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return converter{
			parse:  func(s string) (cell, error) { return cell{s: s}, nil },
			append: func(b array.Builder, c cell) { b.(array.BinaryLikeBuilder).Append([]byte(c.s)) },
		}, nil
	case *arrow.Date32Type:
		return converter{
			parse: func(s string) (cell, error) {
				d, ok := parseDate(s)
				if !ok {
					return cell{}, errNotA("a DATE (YYYY-MM-DD)")
				}
				return cell{i: int64(d)}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.Date32Builder).Append(arrow.Date32(c.i)) },
		}, nil
	case *arrow.TimestampType:
		if t.Unit != arrow.Microsecond && t.Unit != arrow.Nanosecond {
			break
		}
		scale := int64(1)
		if t.Unit == arrow.Nanosecond {
			scale = 1000
		}
		return converter{
			parse: func(s string) (cell, error) {
				us, _, ok := parseTimestamp(s)
				if !ok {
					return cell{}, errNotA("a timestamp (YYYY-MM-DD HH:MM:SS[.ffffff][zone])")
				}
				return cell{i: us}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(c.i * scale)) },
		}, nil
	case *arrow.Time64Type:
		if t.Unit != arrow.Microsecond {
			break
		}
		return converter{
			parse: func(s string) (cell, error) {
				us, ok := parseTime(s)
				if !ok {
					return cell{}, errNotA("a TIME (HH:MM:SS[.ffffff])")
				}
				return cell{i: us}, nil
			},
			append: func(b array.Builder, c cell) { b.(*array.Time64Builder).Append(arrow.Time64(c.i)) },
		}, nil
	}
	return converter{}, fmt.Errorf("import cannot fill a column of type %s from text", dt)
}

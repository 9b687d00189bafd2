package pushdown

import (
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/cockroachdb/apd/v3"
)

// literal converts a SQL constant to an Iceberg literal of type typ, or
// reports false when the conversion could change which rows compare true.
//
// A filter pushed to Iceberg prunes files and row groups before SQL sees a
// row, so a literal that is not exactly the value SQL compares with (a
// rounded float, a decimal with more digits than the column's scale, a string
// SQL would compare as a number) could drop rows SQL keeps. Such predicates
// stay SQL-only: losing pruning is slow, losing rows is wrong.
func literal(typ iceberg.Type, v any) (iceberg.Literal, bool) {
	if v == nil {
		return nil, false
	}
	switch typ := typ.(type) {
	case iceberg.BooleanType:
		return boolLiteral(v)
	case iceberg.Int32Type:
		n, ok := exactInt(v)
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return nil, false
		}
		return iceberg.NewLiteral(int32(n)), true
	case iceberg.Int64Type:
		n, ok := exactInt(v)
		if !ok {
			return nil, false
		}
		return iceberg.NewLiteral(n), true
	case iceberg.Float32Type:
		f, ok := exactFloat(v)
		if !ok || float64(float32(f)) != f {
			return nil, false
		}
		return iceberg.NewLiteral(float32(f)), true
	case iceberg.Float64Type:
		f, ok := exactFloat(v)
		if !ok {
			return nil, false
		}
		return iceberg.NewLiteral(f), true
	case iceberg.DecimalType:
		return decimalLiteral(typ, v)
	case iceberg.StringType:
		// Only a string is compared as a string: MySQL compares a string
		// column with a number numerically.
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		return iceberg.NewLiteral(s), true
	case iceberg.BinaryType:
		switch b := v.(type) {
		case []byte:
			return iceberg.NewLiteral(append([]byte(nil), b...)), true
		case string:
			return iceberg.NewLiteral([]byte(b)), true
		}
		return nil, false
	case iceberg.DateType:
		t, ok := timeValue(v)
		if !ok {
			return nil, false
		}
		// A DATE compared with a DATETIME is compared as a DATETIME: midnight
		// is the only instant that is also a date.
		if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
			return nil, false
		}
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return iceberg.NewLiteral(iceberg.Date(day.Unix() / 86400)), true
	case iceberg.TimestampType, iceberg.TimestampTzType:
		// A timestamp is a wall-clock time; a timestamptz value arrives as
		// the UTC instant (engine/timezone.go reads a literal in the
		// session's time zone), and Iceberg compares the instants.
		t, ok := timeValue(v)
		if !ok || t.Nanosecond()%1000 != 0 {
			return nil, false
		}
		return iceberg.NewLiteral(iceberg.Timestamp(t.UnixMicro())), true
	}
	// time, uuid, fixed, nanosecond timestamps and nested types: their SQL
	// comparison rules (TIME spans, CHAR(36) text, BINARY(n) padding) differ
	// from Iceberg's, so they are not pushed.
	return nil, false
}

func boolLiteral(v any) (iceberg.Literal, bool) {
	if b, ok := v.(bool); ok {
		return iceberg.NewLiteral(b), true
	}
	// BOOLEAN is TINYINT(1): only 0 and 1 mean false and true; any other
	// number compares unequal to both.
	n, ok := exactInt(v)
	if !ok || (n != 0 && n != 1) {
		return nil, false
	}
	return iceberg.NewLiteral(n == 1), true
}

// exactInt returns v as an int64 when v is a number with an integral value
// that an int64 holds exactly.
func exactInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case uint:
		if uint64(n) > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case float32:
		return exactInt(float64(n))
	case float64:
		// Integral and within ±2^53, where every integer is a float64.
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case *apd.Decimal:
		var i apd.Decimal
		if _, err := apd.BaseContext.WithPrecision(80).RoundToIntegralExact(&i, n); err != nil {
			return 0, false
		}
		if i.Cmp(n) != 0 {
			return 0, false
		}
		out, err := i.Int64()
		return out, err == nil
	}
	return 0, false
}

// exactFloat returns v as a float64 when it is one exactly; NaN never is,
// since SQL cannot write it and Iceberg compares it apart from numbers.
func exactFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n)
	case float32:
		return float64(n), !math.IsNaN(float64(n))
	case *apd.Decimal:
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) {
			return 0, false
		}
		var back apd.Decimal
		if _, err := back.SetFloat64(f); err != nil || back.Cmp(n) != 0 {
			return 0, false
		}
		return f, true
	}
	i, ok := exactInt(v)
	if !ok || i > 1<<53 || i < -(1<<53) {
		return 0, false
	}
	return float64(i), true
}

// decimalLiteral gives v at the column's scale, when that holds it exactly
// within the column's precision. Floats are not converted: MySQL compares a
// DECIMAL with a DOUBLE as doubles.
func decimalLiteral(typ iceberg.DecimalType, v any) (iceberg.Literal, bool) {
	var d apd.Decimal
	switch n := v.(type) {
	case *apd.Decimal:
		d.Set(n)
	case float32, float64:
		return nil, false
	default:
		i, ok := exactInt(v)
		if !ok {
			return nil, false
		}
		d.SetInt64(i)
	}
	var scaled apd.Decimal
	// Quantize refuses to round only when the context's precision holds
	// every digit; 80 is above any decimal SQL can write.
	if _, err := apd.BaseContext.WithPrecision(80).Quantize(&scaled, &d, -int32(typ.Scale())); err != nil {
		return nil, false
	}
	if scaled.Cmp(&d) != 0 {
		return nil, false
	}
	coeff := scaled.Coeff.MathBigInt()
	if scaled.Negative {
		coeff.Neg(coeff)
	}
	if len(strings.TrimLeft(new(big.Int).Abs(coeff).String(), "0")) > typ.Precision() {
		return nil, false
	}
	return iceberg.NewLiteral(iceberg.Decimal{Val: decimal128.FromBigInt(coeff), Scale: typ.Scale()}), true
}

func timeValue(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, true
	case string:
		// Only the plain forms, unpadded, which every MySQL conversion
		// reads alike: anything looser is left to SQL.
		parsed, text, ok := ParseDatetime(t)
		return parsed, ok && text.Plain() && t == strings.TrimSpace(t)
	}
	return time.Time{}, false
}

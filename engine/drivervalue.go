package engine

import (
	"database/sql/driver"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/icesql/icesql/engine/internal/vecexec"
)

// directValue is v as the in-process driver hands it over, for the values
// most rows hold, without building their MySQL text and parsing it back
// (wireValue): a signed integer of a signed integer column, and a decimal
// of a DECIMAL column whose digits fit an int64 at the column's scale,
// formatted as that column's text. ok is false for every other value.
func directValue(typ sql.Type, v any) (driver.Value, bool) {
	switch t := typ.Type(); {
	case sqltypes.IsSigned(t):
		var i int64
		switch v := v.(type) {
		case int64:
			i = v
		case int32:
			i = int64(v)
		case int16:
			i = int64(v)
		case int8:
			i = int64(v)
		default:
			return nil, false
		}
		if bits, ok := signedBits[t]; !ok || i < -1<<(bits-1) || i > 1<<(bits-1)-1 {
			return nil, false // the column's conversion decides
		}
		return i, true
	case t == sqltypes.Decimal:
		d, ok := v.(*apd.Decimal)
		dt, isDec := typ.(sql.DecimalType)
		if !ok || !isDec || d.Form != apd.Finite || d.Exponent != -int32(dt.Scale()) || !d.Coeff.IsInt64() ||
			dt.Precision() > 18 || uint64(d.Coeff.Int64()) >= vecexec.Pow10[dt.Precision()] || (d.Negative && d.Coeff.Sign() == 0) {
			return nil, false
		}
		return scaledText(d.Negative, d.Coeff.Int64(), int(dt.Scale())), true
	}
	return nil, false
}

// signedBits is the width of each signed integer column type.
var signedBits = map[querypb.Type]int{sqltypes.Int8: 8, sqltypes.Int16: 16, sqltypes.Int24: 24, sqltypes.Int32: 32, sqltypes.Int64: 64}

// scaledText writes the coefficient c (not negative) at scale s as MySQL
// writes a DECIMAL: at least one digit before the point, s after it. (A
// negative zero is left to the text conversion, which keeps its sign.)
func scaledText(neg bool, c int64, s int) string {
	digits := strconv.AppendInt(make([]byte, 0, 24), c, 10)
	for len(digits) <= s {
		digits = append([]byte{'0'}, digits...)
	}
	out := make([]byte, 0, len(digits)+2)
	if neg {
		out = append(out, '-')
	}
	out = append(out, digits[:len(digits)-s]...)
	if s > 0 {
		out = append(out, '.')
		out = append(out, digits[len(digits)-s:]...)
	}
	return string(out)
}

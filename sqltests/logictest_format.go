package sqltests

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	vitessmysql "github.com/dolthub/vitess/go/mysql"
	"github.com/go-sql-driver/mysql"
)

// This file reads what the drivers hand back: error numbers and messages, and
// values, printed as sqllogictest prints them.

// errorNumber and errorMessage read the MySQL error number and message from
// the drivers' error types: go-sql-driver over the wire, vitess's SQLError in
// process. Other errors may still carry vitess's "(errno N)" text.
var errnoText = regexp.MustCompile(`\(errno (\d+)\)`)

func errorNumber(err error) int {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return int(me.Number)
	}
	var se *vitessmysql.SQLError
	if errors.As(err, &se) {
		return se.Number()
	}
	var numbered interface{ Number() int }
	if errors.As(err, &numbered) {
		return numbered.Number()
	}
	if m := errnoText.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func errorMessage(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Message
	}
	var se *vitessmysql.SQLError
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}

// formatValue prints one value as sqllogictest does for column type typ.
func formatValue(v any, typ byte, col *sql.ColumnType) string {
	if v == nil {
		return "NULL"
	}
	s := valueText(v, col)
	switch typ {
	case 'I':
		s = asInteger(s)
	case 'R':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			s = fmt.Sprintf("%.3f", f)
		}
	}
	if s == "" {
		return "(empty)"
	}
	return printable(s)
}

// valueText is the value as the MySQL text protocol would send it.
func valueText(v any, col *sql.ColumnType) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int:
		return strconv.Itoa(v)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return mysqlFloat(v, 64)
	case float32:
		return mysqlFloat(float64(v), 32)
	case bool:
		if v {
			return "1"
		}
		return "0"
	case time.Time:
		return mysqlTime(v, col)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

// mysqlFloat prints a float the way MySQL does: the shortest digits that read
// back as the same value, in plain notation for exponents from -15 to 14 and
// as 1.5e20 / 1e-16 otherwise (no '+', no zero padding).
func mysqlFloat(f float64, bits int) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, bits)
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x < -15 || x >= 15 {
		return mant + "e" + strconv.Itoa(x)
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// mysqlTime prints a time.Time (from a driver that parses dates) as MySQL
// prints the column's type: DATE as a date, DATETIME/TIMESTAMP with the
// column's fractional digits (or microseconds when the driver does not say and
// the value has a fraction).
func mysqlTime(t time.Time, col *sql.ColumnType) string {
	typ := ""
	if col != nil {
		typ = strings.ToUpper(col.DatabaseTypeName())
	}
	if typ == "DATE" {
		return t.Format("2006-01-02")
	}
	if typ == "TIME" {
		return t.Format("15:04:05")
	}
	s := t.Format("2006-01-02 15:04:05")
	digits := 0
	if col != nil {
		if _, scale, ok := col.DecimalSize(); ok && scale > 0 && scale <= 9 {
			digits = int(scale)
		}
	}
	if digits == 0 && t.Nanosecond() != 0 {
		digits = 6
	}
	if digits > 0 {
		frac := fmt.Sprintf("%09d", t.Nanosecond())
		s += "." + frac[:digits]
	}
	return s
}

var decimalText = regexp.MustCompile(`^([+-]?)(\d*)\.\d*$`)

// asInteger prints a numeric text as an integer, truncating toward zero like
// SQLite's sqlite3_column_int64. Text that is not a number is kept.
func asInteger(s string) string {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return s
	}
	if m := decimalText.FindStringSubmatch(s); m != nil && m[2] != "" {
		digits := strings.TrimLeft(m[2], "0")
		if digits == "" {
			return "0"
		}
		if m[1] == "-" {
			return "-" + digits
		}
		return digits
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && math.Abs(f) < 1<<63 {
		return strconv.FormatInt(int64(f), 10)
	}
	return s
}

// printable replaces control characters and invalid UTF-8 with '@', as
// sqllogictest does, so that every value stays on one line.
func printable(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r < 0x20 || r == 0x7f {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r < 0x20 || r == 0x7f {
			b.WriteByte('@')
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

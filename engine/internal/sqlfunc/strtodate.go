package sqlfunc

import (
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// STR_TO_DATE as MySQL parses (sql/item_timefunc.cc, extract_date_time).
// go-mysql-server's gave wrong values, not only errors: '10:20 pm' with
// '%h:%i %p' read as 10:20, '2021-02-30' became 2021-03-02,
// STR_TO_DATE('9', '%m') 0000-08-31, %f was dropped, and every week format
// gave NULL.
//
// As in MySQL, the result type comes from a constant format: DATE for date
// parts only, TIME for time parts only, DATETIME for both, with six
// fractional digits when %f is used; a format that is not constant gives
// DATETIME(6). A value that does not match is NULL with warning 1411, text
// left over after the format is warning 1292 (worded as MariaDB does). A DATE or DATETIME with a
// zero month or day, or a day its month does not have, is NULL with 1411,
// as under MySQL's default sql_mode (NO_ZERO_IN_DATE, NO_ZERO_DATE): icesql
// dates cannot hold them.

var StrToDateFunction = sql.Function2{Name: "str_to_date", Fn: newStrToDate}

// strToDateKind is the type of STR_TO_DATE's result.
type strToDateKind int

func (k strToDateKind) String() string {
	switch k {
	case strToDateDate:
		return "date"
	case strToDateTime:
		return "time"
	}
	return "datetime"
}

const (
	strToDateDatetime strToDateKind = iota
	strToDateDate
	strToDateTime
)

type strToDate struct {
	value, format sql.Expression
}

var _ sql.FunctionExpression = (*strToDate)(nil)

func newStrToDate(_ *sql.Context, value, format sql.Expression) sql.Expression {
	return &strToDate{value: value, format: format}
}

func (s *strToDate) FunctionName() string { return "str_to_date" }
func (s *strToDate) Description() string {
	return "parses a string into a DATE, TIME or DATETIME by a format, as MySQL does"
}
func (s *strToDate) Resolved() bool               { return s.value.Resolved() && s.format.Resolved() }
func (s *strToDate) IsNullable(*sql.Context) bool { return true }
func (s *strToDate) Children() []sql.Expression   { return []sql.Expression{s.value, s.format} }
func (s *strToDate) String() string {
	return fmt.Sprintf("str_to_date(%s, %s)", s.value, s.format)
}

func (s *strToDate) WithChildren(_ *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(s, len(children), 2)
	}
	return &strToDate{value: children[0], format: children[1]}, nil
}

// constantFormat is the format when it is a literal string.
func (s *strToDate) constantFormat() (string, bool) {
	lit, ok := s.format.(*expression.Literal)
	if !ok {
		return "", false
	}
	f, ok := lit.Value().(string)
	return f, ok
}

// kind is the result type: MySQL's get_date_time_result_type. Its lists
// are MySQL's own: %d, %e and %D do not count as date parts, %p not as a
// time part.
func (s *strToDate) kind() (strToDateKind, bool) {
	format, ok := s.constantFormat()
	if !ok {
		return strToDateDatetime, true
	}
	var date, clock, frac bool
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		switch c := format[i]; {
		case c == 'f':
			frac, clock = true, true
		case strings.IndexByte("HISThiklrs", c) >= 0:
			clock = true
		case strings.IndexByte("MVUXYWabcjmvuxyw", c) >= 0:
			date = true
		}
	}
	switch {
	case clock && date:
		return strToDateDatetime, frac
	case clock:
		return strToDateTime, frac
	}
	return strToDateDate, false
}

func (s *strToDate) Type(*sql.Context) sql.Type {
	kind, frac := s.kind()
	switch kind {
	case strToDateDate:
		return types.Date
	case strToDateTime:
		return types.Time
	}
	if frac {
		return types.DatetimeMaxPrecision
	}
	return types.Datetime
}

func (s *strToDate) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := s.value.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	f, err := s.format.Eval(ctx, row)
	if err != nil || f == nil {
		return nil, err
	}
	value, err := types.ConvertToString(ctx, v, types.LongText, nil)
	if err != nil {
		return nil, err
	}
	format, err := types.ConvertToString(ctx, f, types.LongText, nil)
	if err != nil {
		return nil, err
	}
	kind, _ := s.kind()
	var t dateParts
	rest, ok := t.parse(value, format)
	if ok {
		ok = t.valid(kind)
	}
	if !ok {
		ctx.Warn(mysqlerr.ErWrongValueForType, "Incorrect datetime value: '%s' for function str_to_date", truncateForMessage(value))
		return nil, nil
	}
	if strings.TrimLeft(rest, " \t\n\r\v\f") != "" {
		ctx.Warn(mysql.ERTruncatedWrongValue, "Truncated incorrect %s value: '%s'", kind, truncateForMessage(value))
	}
	switch kind {
	case strToDateDate:
		return time.Date(t.year, time.Month(t.month), t.day, 0, 0, 0, 0, time.UTC), nil
	case strToDateTime:
		hours := int64(t.day)*24 + int64(t.hour) // MySQL adds a day part to the hours
		us := ((hours*60+int64(t.minute))*60+int64(t.second))*1_000_000 + int64(t.micro)
		return types.Time.MicrosecondsToTimespan(us), nil
	}
	return time.Date(t.year, time.Month(t.month), t.day, t.hour, t.minute, t.second, t.micro*1000, time.UTC), nil
}

// truncateForMessage cuts a value to the 127 bytes MySQL quotes.
func truncateForMessage(s string) string {
	if len(s) > 127 {
		return s[:127]
	}
	return s
}

// dateParts are the fields STR_TO_DATE fills, zero where the format says
// nothing.
type dateParts struct {
	year, month, day, hour, minute, second, micro int
}

var (
	monthNames    = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	abMonthNames  = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	dayNames      = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	abDayNames    = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	timeAMPMFmt   = "%I:%i:%S %p"
	time24HourFmt = "%H:%i:%S"
)

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isPunct(c byte) bool { return c > ' ' && c < 0x7f && !isDigit(c) && !isAlpha(c) }

// number reads an optionally signed integer of at most width bytes from
// the start of s, as MySQL's my_strtoll10 does; ok is false without a
// digit. n is the bytes read.
func number(s string, width int) (v, n int, ok bool) {
	end := min(width, len(s))
	i := 0
	for i < end && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < end && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for i < end && isDigit(s[i]) {
		if v < 1_000_000_000 {
			v = v*10 + int(s[i]-'0')
		}
		i++
	}
	if i == start {
		return 0, i, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}

// word matches the letters at the start of s against names, ignoring case;
// a prefix of exactly one name matches it, as MySQL's find_type does. It
// returns the 1-based index and the bytes read, or 0.
func word(s string, names []string) (int, int) {
	n := 0
	for n < len(s) && isAlpha(s[n]) {
		n++
	}
	if n == 0 {
		return 0, 0
	}
	w, found := s[:n], 0
	for i, name := range names {
		if len(name) < n || !strings.EqualFold(name[:n], w) {
			continue
		}
		if len(name) == n {
			return i + 1, n
		}
		if found != 0 {
			return 0, 0 // a prefix of two names
		}
		found = i + 1
	}
	return found, n
}

// twoDigitYear is MySQL's year_2000_handling: 00-69 are 2000-2069, 70-99
// are 1970-1999.
func twoDigitYear(y int) int {
	switch {
	case y < 70:
		return y + 2000
	case y < 100:
		return y + 1900
	}
	return y
}

// parse fills t from value by format, and returns what is left of value.
func (t *dateParts) parse(value, format string) (string, bool) {
	var (
		usaTime, pm         bool
		weekday, yearday    int
		week                = -1
		weekSundayFirst     bool
		weekStrict          bool
		weekYear            = -1
		weekYearSundayFirst bool
	)
	val := value
	for i := 0; i < len(format) && len(val) > 0; i++ {
		for len(val) > 0 && isSpace(val[0]) {
			val = val[1:]
		}
		if len(val) == 0 {
			break
		}
		c := format[i]
		if c != '%' || i+1 == len(format) {
			if !isSpace(c) {
				if val[0] != c {
					return val, false
				}
				val = val[1:]
			}
			continue
		}
		i++
		var (
			n, read int
			ok      = true
		)
		switch spec := format[i]; spec {
		case 'Y':
			n, read, ok = number(val, 4)
			if read <= 2 {
				n = twoDigitYear(n)
			}
			t.year = n
		case 'y':
			n, read, ok = number(val, 2)
			t.year = twoDigitYear(n)
		case 'm', 'c':
			t.month, read, ok = number(val, 2)
		case 'M':
			t.month, read = word(val, monthNames)
			ok = t.month > 0
		case 'b':
			t.month, read = word(val, abMonthNames)
			ok = t.month > 0
		case 'd', 'e':
			t.day, read, ok = number(val, 2)
		case 'D':
			t.day, read, ok = number(val, 2)
			read += min(len(val)-read, 2) // the st, nd, rd or th
		case 'h', 'I', 'l', 'k', 'H':
			usaTime = usaTime || spec == 'h' || spec == 'I' || spec == 'l'
			t.hour, read, ok = number(val, 2)
		case 'i':
			t.minute, read, ok = number(val, 2)
		case 's', 'S':
			t.second, read, ok = number(val, 2)
		case 'f':
			t.micro, read, ok = number(val, 6)
			for d := read; d < 6; d++ {
				t.micro *= 10
			}
		case 'p':
			if len(val) < 2 || !usaTime {
				return val, false
			}
			switch strings.ToUpper(val[:2]) {
			case "PM":
				pm = true
			case "AM":
				pm = false
			default:
				return val, false
			}
			read = 2
		case 'W':
			weekday, read = word(val, dayNames)
			ok = weekday > 0
		case 'a':
			weekday, read = word(val, abDayNames)
			ok = weekday > 0
		case 'w':
			weekday, read, ok = number(val, 1)
			if weekday < 0 || weekday >= 7 {
				return val, false
			}
			if weekday == 0 {
				weekday = 7 // %w counts from Sunday = 0; %W and %a from Monday = 1
			}
		case 'j':
			yearday, read, ok = number(val, 3)
		case 'V', 'U', 'v', 'u':
			weekSundayFirst = spec == 'U' || spec == 'V'
			weekStrict = spec == 'V' || spec == 'v'
			week, read, ok = number(val, 2)
			if week < 0 || (weekStrict && week == 0) || week > 53 {
				return val, false
			}
		case 'X', 'x':
			weekYearSundayFirst = spec == 'X'
			weekYear, read, ok = number(val, 4)
		case 'r', 'T':
			sub := time24HourFmt
			if spec == 'r' {
				sub = timeAMPMFmt
			}
			rest, ok := t.parse(val, sub)
			if !ok {
				return val, false
			}
			read = len(val) - len(rest)
		case '.':
			for read < len(val) && isPunct(val[read]) {
				read++
			}
		case '@':
			for read < len(val) && isAlpha(val[read]) {
				read++
			}
		case '#':
			for read < len(val) && isDigit(val[read]) {
				read++
			}
		default:
			return val, false
		}
		if !ok {
			return val, false
		}
		val = val[read:]
	}
	if usaTime {
		if t.hour > 12 || t.hour < 1 {
			return val, false
		}
		t.hour %= 12
		if pm {
			t.hour += 12
		}
	}
	if yearday > 0 {
		d := time.Date(t.year, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, yearday-1)
		if !inDayRange(d) {
			return val, false
		}
		t.year, t.month, t.day = d.Year(), int(d.Month()), d.Day()
	}
	if week >= 0 && weekday > 0 {
		// %V and %v need %X and %x, of the same week start; %U and %u go
		// with %Y.
		if (weekStrict && (weekYear < 0 || weekYearSundayFirst != weekSundayFirst)) || (!weekStrict && weekYear >= 0) {
			return val, false
		}
		year := t.year
		if weekStrict {
			year = weekYear
		}
		jan1 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
		first := weekdayOf(jan1, weekSundayFirst) // 0 = the week's first day
		var days int
		if weekSundayFirst {
			if first != 0 {
				days = 7 - first
			}
			days += (week-1)*7 + weekday%7
		} else {
			if first > 3 {
				days = 7
			}
			days += -first + (week-1)*7 + weekday - 1
		}
		d := jan1.AddDate(0, 0, days)
		if !inDayRange(d) {
			return val, false
		}
		t.year, t.month, t.day = d.Year(), int(d.Month()), d.Day()
	}
	// MySQL keeps the parts unsigned: a negative one is out of range.
	if t.month > 12 || t.day > 31 || t.hour > 23 || t.minute > 59 || t.second > 59 ||
		min(t.year, t.month, t.day, t.hour, t.minute, t.second, t.micro) < 0 {
		return val, false
	}
	return val, true
}

// weekdayOf is the day of the week of d counted from the week's first
// day: Sunday when sundayFirst, else Monday.
func weekdayOf(d time.Time, sundayFirst bool) int {
	w := int(d.Weekday()) // Sunday = 0
	if sundayFirst {
		return w
	}
	return (w + 6) % 7
}

// inDayRange reports whether d is a day MySQL's day numbers cover (years
// 0 to 9999).
func inDayRange(d time.Time) bool { return d.Year() >= 0 && d.Year() <= 9999 }

// valid reports whether t is a value of the result type: a DATE or
// DATETIME needs a month, a day, and a day its month has.
func (t *dateParts) valid(kind strToDateKind) bool {
	if kind == strToDateTime {
		return true
	}
	if t.month == 0 || t.day == 0 || t.year < 0 || t.year > 9999 {
		return false
	}
	return t.day <= time.Date(t.year, time.Month(t.month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

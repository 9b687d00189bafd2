package pushdown

import (
	"strings"
	"time"
)

// DatetimeText says how a date or date-time text was written, beyond the
// plain forms every MySQL conversion reads alike.
type DatetimeText struct {
	// Offset: the text names its UTC offset ('2024-01-01 10:00:00+02:00'),
	// so it is an instant, not a wall-clock time.
	Offset bool
	// NoSeconds: the text stops at the minutes ('2024-01-01 10:30').
	NoSeconds bool
}

// Plain reports whether the text is one of the forms every MySQL
// conversion reads the same way (a date, or a date-time with seconds and an
// optional fraction, with a space or a T).
func (d DatetimeText) Plain() bool { return !d.Offset && !d.NoSeconds }

// datetimeLayouts are the layouts ParseDatetime tries, in order, with how
// each is written.
var datetimeLayouts = []struct {
	layout string
	text   DatetimeText
}{
	{"2006-01-02", DatetimeText{}},
	{"2006-01-02 15:04:05.999999999", DatetimeText{}},
	{"2006-01-02T15:04:05.999999999", DatetimeText{}},
	{"2006-01-02 15:04", DatetimeText{NoSeconds: true}},
	{"2006-01-02T15:04", DatetimeText{NoSeconds: true}},
	{"2006-01-02 15:04:05.999999999Z07:00", DatetimeText{Offset: true}},
	{"2006-01-02T15:04:05.999999999Z07:00", DatetimeText{Offset: true}},
}

// ParseDatetime reads a date or date-time written as text, the one parser
// for every place a user writes a time as text: AS OF, CALL arguments and
// literals pushed down to Iceberg. Surrounding spaces are ignored. The
// time is in UTC unless the text names an offset; text says which form it
// was, so that a caller that must agree with SQL's own conversion (a
// pushed-down literal) can keep to the plain forms.
func ParseDatetime(s string) (t time.Time, text DatetimeText, ok bool) {
	s = strings.TrimSpace(s)
	for _, l := range datetimeLayouts {
		if t, err := time.Parse(l.layout, s); err == nil {
			return t, l.text, true
		}
	}
	return time.Time{}, DatetimeText{}, false
}

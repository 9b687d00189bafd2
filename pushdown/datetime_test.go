package pushdown

import (
	"testing"
	"time"
)

// TestParseDatetime: the one parser of date-times written as text, and the
// forms AS OF, CALL arguments and pushed-down literals tell apart.
func TestParseDatetime(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		in    string
		want  time.Time
		text  DatetimeText
		ok    bool
		plain bool
	}{
		{"2024-01-15", utc("2024-01-15T00:00:00Z"), DatetimeText{}, true, true},
		{" 2024-01-15 10:30:00 ", utc("2024-01-15T10:30:00Z"), DatetimeText{}, true, true},
		{"2024-01-15T10:30:00.123456", utc("2024-01-15T10:30:00.123456Z"), DatetimeText{}, true, true},
		{"2024-01-15 10:30", utc("2024-01-15T10:30:00Z"), DatetimeText{NoSeconds: true}, true, false},
		{"2024-01-15 10:30:00+02:00", utc("2024-01-15T08:30:00Z"), DatetimeText{Offset: true}, true, false},
		{"2024-01-15T10:30:00Z", utc("2024-01-15T10:30:00Z"), DatetimeText{Offset: true}, true, false},
		{"2024-13-01", time.Time{}, DatetimeText{}, false, true},
		{"yesterday", time.Time{}, DatetimeText{}, false, true},
		{"5170933745812735392", time.Time{}, DatetimeText{}, false, true},
	} {
		got, text, ok := ParseDatetime(c.in)
		if ok != c.ok || !got.Equal(c.want) || text != c.text || text.Plain() != c.plain {
			t.Errorf("ParseDatetime(%q) = %v, %+v, %v; want %v, %+v, %v", c.in, got, text, ok, c.want, c.text, c.ok)
		}
	}
	// A literal is pushed down only in a plain form, unpadded.
	for in, want := range map[string]bool{"2024-01-15": true, "2024-01-15 10:30:00": true, " 2024-01-15": false, "2024-01-15 10:30": false, "2024-01-15T10:30:00Z": false} {
		if _, ok := timeValue(in); ok != want {
			t.Errorf("timeValue(%q) ok = %v, want %v", in, ok, want)
		}
	}
}

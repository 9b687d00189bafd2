package importer

import (
	"strconv"
	"strings"
)

// The text forms import reads, shared by inference and conversion so that
// a column inferred as a type always converts: a value inference accepted
// for a kind is one the converter of that kind takes.

// isInt reports whether s is a decimal integer that fits in 64 bits and
// has no leading zero: "00123" is an identifier (a ZIP code, an account
// number) whose zeros a number would lose.
func isInt(s string) bool {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// isFloat reports whether s is a decimal number with an optional point and
// exponent: no Inf, NaN, hex or digit separators, and no leading zero
// before another digit (as isInt).
func isFloat(s string) bool {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if digits == "" || (len(digits) > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9') {
		return false
	}
	seenDigit := false
	for i := 0; i < len(digits); i++ {
		switch c := digits[i]; {
		case c >= '0' && c <= '9':
			seenDigit = true
		case c == '.', c == 'e', c == 'E', c == '-', c == '+':
		default:
			return false
		}
	}
	if !seenDigit {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// isBool reports whether s is true or false in any case.
func isBool(s string) bool {
	return strings.EqualFold(s, "true") || strings.EqualFold(s, "false")
}

// parseDate parses YYYY-MM-DD of a real day into days since 1970-01-01.
func parseDate(s string) (int32, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(s[:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return int32(daysFromCivil(y, m, d)), true
}

// parseTimestamp parses a date, optionally followed by 'T' or ' ' and
// HH:MM[:SS[.fraction]], optionally followed by a zone (Z, ±HH, ±HH:MM,
// ±HHMM), into microseconds since 1970-01-01 00:00 UTC (of the wall clock
// when there is no zone). zoned says whether s had a zone. A fraction
// beyond microseconds is truncated, as Iceberg timestamps keep
// microseconds.
func parseTimestamp(s string) (micros int64, zoned, ok bool) {
	if len(s) < 10 {
		return 0, false, false
	}
	days, ok := parseDate(s[:10])
	if !ok {
		return 0, false, false
	}
	micros = int64(days) * 86_400_000_000
	rest := s[10:]
	if rest == "" {
		return micros, false, true
	}
	if rest[0] != 'T' && rest[0] != ' ' {
		return 0, false, false
	}
	rest = rest[1:]
	clock, rest, ok := parseClock(rest)
	if !ok {
		return 0, false, false
	}
	micros += clock
	if rest == "" {
		return micros, false, true
	}
	offset, ok := parseZone(strings.TrimPrefix(rest, " "))
	if !ok {
		return 0, false, false
	}
	return micros - offset, true, true
}

// parseTime parses HH:MM[:SS[.fraction]] into microseconds since midnight.
func parseTime(s string) (int64, bool) {
	us, rest, ok := parseClock(s)
	return us, ok && rest == ""
}

// parseClock parses HH:MM[:SS[.fraction]] at the start of s and returns the
// microseconds since midnight and what follows.
func parseClock(s string) (int64, string, bool) {
	if len(s) < 5 || s[2] != ':' {
		return 0, s, false
	}
	h, ok1 := digits(s[:2])
	m, ok2 := digits(s[3:5])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, s, false
	}
	us := int64(h*3600+m*60) * 1_000_000
	s = s[5:]
	if len(s) >= 3 && s[0] == ':' {
		sec, ok := digits(s[1:3])
		if !ok || sec > 59 {
			return 0, s, false
		}
		us += int64(sec) * 1_000_000
		s = s[3:]
		if len(s) >= 2 && s[0] == '.' {
			n := 1
			for n < len(s) && s[n] >= '0' && s[n] <= '9' {
				n++
			}
			if n == 1 {
				return 0, s, false
			}
			frac := s[1:n]
			scale := int64(100_000)
			for i := 0; i < len(frac) && i < 6; i++ {
				us += int64(frac[i]-'0') * scale
				scale /= 10
			}
			s = s[n:]
		}
	}
	return us, s, true
}

// parseZone parses Z, UTC, ±HH, ±HH:MM or ±HHMM into an offset from UTC in
// microseconds.
func parseZone(s string) (int64, bool) {
	if s == "Z" || s == "z" || s == "UTC" {
		return 0, true
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	h, ok := digits(s[1:3])
	if !ok || h > 18 {
		return 0, false
	}
	m := 0
	switch rest := s[3:]; {
	case rest == "":
	case len(rest) == 3 && rest[0] == ':':
		m, ok = digits(rest[1:])
	case len(rest) == 2:
		m, ok = digits(rest)
	default:
		ok = false
	}
	if !ok || m > 59 {
		return 0, false
	}
	return sign * int64(h*3600+m*60) * 1_000_000, true
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, s != ""
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the days from 1970-01-01 to the proleptic Gregorian
// date y-m-d (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

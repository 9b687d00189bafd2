package importer

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

// Kind is the type inference gives a column of text values.
type Kind uint8

const (
	KindString Kind = iota
	KindBool
	KindInt
	KindFloat
	KindDate
	KindTimestamp   // a wall-clock time without a zone
	KindTimestampTz // an instant: every value had a zone or offset
)

// SQLType is the column type CREATE TABLE gives a column of kind k.
func (k Kind) SQLType() string {
	switch k {
	case KindBool:
		return "BOOLEAN"
	case KindInt:
		return "BIGINT"
	case KindFloat:
		return "DOUBLE"
	case KindDate:
		return "DATE"
	case KindTimestamp:
		return "DATETIME(6)"
	case KindTimestampTz:
		return "TIMESTAMP_LTZ" // Iceberg timestamptz
	}
	return "STRING"
}

// kindSet is the set of kinds every value seen so far fits, one bit per
// kind; string fits everything and has no bit.
type kindSet uint8

const allKinds kindSet = 1<<KindBool | 1<<KindInt | 1<<KindFloat | 1<<KindDate | 1<<KindTimestamp | 1<<KindTimestampTz

// fits is the set of kinds the value s fits. A quoted JSON string is
// text: it fits the date and time kinds, never a number or a boolean.
func fits(s string, text bool) kindSet {
	var k kindSet
	if !text {
		if isBool(s) {
			k |= 1 << KindBool
		}
		if isInt(s) {
			k |= 1 << KindInt
		}
		if isFloat(s) {
			k |= 1 << KindFloat
		}
	}
	if _, ok := parseDate(s); ok {
		k |= 1 << KindDate
	}
	if _, zoned, ok := parseTimestamp(s); ok {
		if zoned {
			k |= 1 << KindTimestampTz
		} else {
			k |= 1 << KindTimestamp
		}
	}
	return k
}

// kind is the narrowest kind of the set: an integer column whose values
// also parse as floats is an integer column; dates and timestamps mixed
// are timestamps.
func (k kindSet) kind() Kind {
	for _, c := range []Kind{KindBool, KindInt, KindFloat, KindDate, KindTimestamp, KindTimestampTz} {
		if k&(1<<c) != 0 {
			return c
		}
	}
	return KindString
}

// columnGuess accumulates what a column's sampled values fit.
type columnGuess struct {
	set     kindSet
	nonNull int
}

func newGuesses(n int) []columnGuess {
	g := make([]columnGuess, n)
	for i := range g {
		g[i].set = allKinds
	}
	return g
}

func (g *columnGuess) see(s string, text bool) {
	g.set &= fits(s, text)
	g.nonNull++
}

// kind is the column's kind; a column with no value is a string column.
func (g columnGuess) kind() Kind {
	if g.nonNull == 0 {
		return KindString
	}
	return g.set.kind()
}

// Column is a column of the data to import, as inference sees it.
type Column struct {
	Name    string
	SQLType string // the type CREATE TABLE gives it
}

// columnNames makes names fit for a table: empty ones become column_N
// (from 1), repeated ones get _2, _3, ...
func columnNames(names []string) []string {
	out := make([]string, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			n = fmt.Sprintf("column_%d", i+1)
		}
		base := n
		for k := 2; seen[strings.ToLower(n)]; k++ {
			n = fmt.Sprintf("%s_%d", base, k)
		}
		seen[strings.ToLower(n)] = true
		out[i] = n
	}
	return out
}

// sniffDelimiter picks the field delimiter of a CSV sample: of comma, tab,
// semicolon and bar, the one that splits the sample's records into the
// same number of fields, more than one, most often; ties go to the one
// with more fields, then to the order above. A sample no candidate splits
// is one column (comma).
func sniffDelimiter(sample []byte) rune {
	best, bestRows, bestFields := ',', 0, 1
	for _, d := range []rune{',', '\t', ';', '|'} {
		r := csv.NewReader(bytes.NewReader(sample))
		r.Comma = d
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		counts := map[int]int{}
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				break // the sample's last record may be cut off
			}
			counts[len(rec)]++
		}
		for fields, rows := range counts {
			if fields < 2 {
				continue
			}
			if rows > bestRows || (rows == bestRows && fields > bestFields) {
				best, bestRows, bestFields = d, rows, fields
			}
		}
	}
	return best
}

// hasHeader decides whether the first of the sampled records names the
// columns: it does when a value of it does not fit the type the other
// records give its column (a name over numbers or dates). When every
// column is text it is a header if its values are all present, distinct,
// and none of them recurs in its column below, which is how names differ
// from data.
func hasHeader(rows [][]string, isNull func(string) bool) bool {
	if len(rows) == 0 {
		return false
	}
	first := rows[0]
	for _, v := range first {
		if isNull(v) {
			return false
		}
		if fits(v, false)&(1<<KindInt|1<<KindFloat|1<<KindDate|1<<KindTimestamp|1<<KindTimestampTz) != 0 {
			return false // a name is never a number or a date
		}
	}
	guesses := newGuesses(len(first))
	for _, r := range rows[1:] {
		for i := 0; i < len(r) && i < len(guesses); i++ {
			if !isNull(r[i]) {
				guesses[i].see(r[i], false)
			}
		}
	}
	allText := true
	for i, g := range guesses {
		if k := g.kind(); k != KindString {
			allText = false
			if fits(first[i], false)&(1<<k) == 0 {
				return true
			}
		}
	}
	if !allText {
		return false
	}
	seen := map[string]bool{}
	for i, v := range first {
		if seen[v] {
			return false
		}
		seen[v] = true
		for _, r := range rows[1:] {
			if i < len(r) && r[i] == v {
				return false
			}
		}
	}
	return true
}

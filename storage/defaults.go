package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
)

// A field's initial-default and write-default are, in the spec's JSON form
// (what Java Iceberg and PyIceberg write), ISO strings for date, time and
// timestamp fields: "2003-10-20", "00:00:00.012345",
// "1970-01-01T00:00:00.012345", "1970-01-01T00:00:00.012345+00:00".
// iceberg-go v0.7.0 keeps a parsed default as the JSON value it was and
// fills a column a data file lacks from it as a number only: a string
// default fails every read of such a file ("unsupported write-default value
// type string", table/arrow_utils.go numericDefault), at the top level and
// inside a struct alike. It also keeps every JSON number as a float64, so an
// integer default beyond 2^53 would read rounded.
//
// ParseMetadata therefore hands iceberg-go the metadata with those defaults
// as the numbers it reads (days, microseconds or nanoseconds from the
// epoch, the units of the values themselves), and specDefaults turns them
// back into the spec's strings in every metadata file icesql writes, so
// other engines keep reading the same defaults. A value that has no exact
// float64 (a nanosecond timestamp, an integer beyond 2^53) is left for
// iceberg-go to refuse, or made a string it refuses: a clean error rather
// than a default read rounded.

// ParseMetadata parses table metadata JSON as iceberg-go does, with the
// defaults it cannot read rewritten first. A gzip-compressed file
// (metagzip.go) is read through.
func ParseMetadata(data []byte) (table.Metadata, error) {
	if gzipped(data) {
		plain, err := gunzip(data)
		if err != nil {
			return nil, fmt.Errorf("decompress table metadata: %w", err)
		}
		data = plain
	}
	readable, err := rewriteDefaults(data, readableDefault)
	if err != nil {
		return nil, err
	}
	return table.ParseMetadataBytes(readable)
}

// specDefaults is data, metadata JSON as iceberg-go encodes it, with the
// defaults ParseMetadata made numbers back in the spec's form.
func specDefaults(data []byte) ([]byte, error) {
	return rewriteDefaults(data, specDefault)
}

// specFormDefaults says metadata JSON holds a default in the spec's form
// that iceberg-go cannot read (ParseMetadata rewrites it).
func specFormDefaults(data []byte) bool {
	readable, err := rewriteDefaults(data, readableDefault)
	return err == nil && !bytes.Equal(readable, data)
}

// MetadataJSON is table metadata as the warehouse writes it, the field
// defaults in the spec's form: what a REST client gets for metadata that
// has no file yet (a staged create).
func MetadataJSON(meta table.Metadata) ([]byte, error) {
	data, err := marshalMetadata(unshared(meta))
	if err != nil {
		return nil, err
	}
	return specDefaults(data)
}

// rewriteDefaults applies conv to the initial-default and write-default of
// every field of every schema in metadata JSON; data comes back unchanged
// (the same slice) when no default changes.
func rewriteDefaults(data []byte, conv func(typ string, v any) (any, bool)) ([]byte, error) {
	if !bytes.Contains(data, []byte(`-default"`)) {
		return data, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return data, nil // not an object: iceberg-go says what is wrong
	}
	changed := false
	for _, key := range []string{"schemas", "schema"} {
		raw, ok := doc[key]
		if !ok {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // integers beyond 2^53 stay exact
		var v any
		if err := dec.Decode(&v); err != nil {
			return data, nil
		}
		if !walkDefaults(v, conv) {
			continue
		}
		out, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("rewrite field defaults: %w", err)
		}
		doc[key], changed = out, true
	}
	if !changed {
		return data, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("rewrite field defaults: %w", err)
	}
	return out, nil
}

// walkDefaults applies conv to the defaults of the fields under node (a
// schema, a type or a list of schemas) and reports whether any changed.
func walkDefaults(node any, conv func(typ string, v any) (any, bool)) bool {
	changed := false
	switch n := node.(type) {
	case []any:
		for _, s := range n {
			changed = walkDefaults(s, conv) || changed
		}
	case map[string]any:
		switch n["type"] {
		case "struct":
			fields, _ := n["fields"].([]any)
			for _, f := range fields {
				field, ok := f.(map[string]any)
				if !ok {
					continue
				}
				if typ, ok := field["type"].(string); ok {
					for _, key := range []string{"initial-default", "write-default"} {
						if v, ok := field[key]; ok && v != nil {
							if nv, ok := conv(typ, v); ok {
								field[key], changed = nv, true
							}
						}
					}
				} else {
					changed = walkDefaults(field["type"], conv) || changed
				}
			}
		case "list":
			changed = walkDefaults(n["element"], conv) || changed
		case "map":
			changed = walkDefaults(n["key"], conv) || changed
			changed = walkDefaults(n["value"], conv) || changed
		}
	}
	return changed
}

// exactFloat says i has an exact float64, the form iceberg-go keeps it in.
func exactFloat(i int64) bool {
	f := float64(i)
	return f < math.MaxInt64 && int64(f) == i // float64(MaxInt64) is 2^63, beyond int64
}

// readableDefault is a default as iceberg-go reads it: a date, time or
// timestamp string as its number, an integer it would round as a string
// (which it refuses).
func readableDefault(typ string, v any) (any, bool) {
	switch typ {
	case "int", "long":
		n, ok := v.(json.Number)
		if !ok {
			return nil, false
		}
		if i, err := n.Int64(); err == nil && !exactFloat(i) {
			return n.String(), true
		}
		return nil, false
	}
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	n, ok := isoToNumber(typ, s)
	if !ok || !exactFloat(n) {
		return nil, false
	}
	return n, true
}

// specDefault is a default in the spec's JSON form: a date, time or
// timestamp number as its ISO string, an integer without exponent or
// rounding digits.
func specDefault(typ string, v any) (any, bool) {
	if s, ok := v.(string); ok && (typ == "int" || typ == "long") {
		// An integer readableDefault made a string.
		if _, err := json.Number(s).Int64(); err == nil {
			return json.Number(s), true
		}
		return nil, false
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	switch typ {
	case "int", "long":
		// iceberg-go encodes the float64 it read: -9223372036854775808
		// comes out as -9223372036854776000.
		if _, err := n.Int64(); err == nil {
			return nil, false
		}
		f, _, err := big.ParseFloat(n.String(), 10, 53, big.ToNearestEven) // the float64 it was
		if err != nil || !f.IsInt() {
			return nil, false
		}
		i, _ := f.Int(nil)
		if !i.IsInt64() {
			return nil, false
		}
		return json.Number(i.String()), true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt64/2 {
		return nil, false
	}
	s, ok := numberToISO(typ, int64(f))
	if !ok {
		return nil, false
	}
	return s, true
}

// The ISO forms of the spec's JSON defaults (Java's DateTimeFormatter
// ISO_LOCAL_DATE, ISO_LOCAL_TIME, ISO_LOCAL_DATE_TIME and ISO_OFFSET_DATE_TIME).
var (
	isoTimes      = []string{"15:04:05.999999999", "15:04"}
	isoTimestamps = []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"}
	isoOffsets    = []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04Z07:00"}
)

// isoToNumber is an ISO date, time or timestamp string as the number the
// type stores: days, microseconds or nanoseconds.
func isoToNumber(typ string, s string) (int64, bool) {
	parse := func(layouts []string) (time.Time, bool) {
		for _, l := range layouts {
			if t, err := time.Parse(l, s); err == nil {
				return t, true
			}
		}
		return time.Time{}, false
	}
	var t time.Time
	var ok bool
	switch typ {
	case "date":
		if t, ok = parse([]string{"2006-01-02"}); ok {
			return t.Unix() / 86400, true
		}
		return 0, false
	case "time":
		if t, ok = parse(isoTimes); ok {
			day := t.Sub(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC))
			return day.Microseconds(), true
		}
		return 0, false
	case "timestamp", "timestamp_ns":
		t, ok = parse(isoTimestamps)
	case "timestamptz", "timestamptz_ns":
		t, ok = parse(isoOffsets)
	default:
		return 0, false
	}
	if !ok {
		return 0, false
	}
	if strings.HasSuffix(typ, "_ns") {
		if t.Year() < 1678 || t.Year() > 2261 {
			return 0, false // beyond int64 nanoseconds
		}
		return t.UnixNano(), true
	}
	return t.UnixMicro(), true
}

// numberToISO is the inverse of isoToNumber.
func numberToISO(typ string, n int64) (string, bool) {
	switch typ {
	case "date":
		return time.Unix(n*86400, 0).UTC().Format("2006-01-02"), true
	case "time":
		if n < 0 || n >= 86400*1e6 {
			return "", false
		}
		return time.UnixMicro(n).UTC().Format("15:04:05.000000"), true
	case "timestamp":
		return time.UnixMicro(n).UTC().Format("2006-01-02T15:04:05.000000"), true
	case "timestamptz":
		return time.UnixMicro(n).UTC().Format("2006-01-02T15:04:05.000000-07:00"), true
	case "timestamp_ns":
		return time.Unix(0, n).UTC().Format("2006-01-02T15:04:05.000000000"), true
	case "timestamptz_ns":
		return time.Unix(0, n).UTC().Format("2006-01-02T15:04:05.000000000-07:00"), true
	}
	return "", false
}

package procedures

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/icesql/icesql/pushdown"
)

// The argument kinds beyond a scalar string, integer or boolean. The engine
// hands a map('k','v') literal over as map[string]any, an array(...) literal
// as []any, and a TIMESTAMP literal as a time.Time already read in the
// session time zone.
const (
	// Timestamp is an instant: a TIMESTAMP literal, or a string such as
	// '2024-01-01 00:00:00' read as a wall-clock time in the session time zone.
	Timestamp Kind = Bool + 1 + iota
	// Map is Spark's map<string,string>, written map('k', 'v', ...).
	Map
	// Int64List is Spark's array<long>, written array(1, 2, ...).
	Int64List
)

// Time returns a timestamp argument and whether it was given.
func (a Args) Time(name string) (time.Time, bool) {
	v, ok := a[name].(time.Time)
	return v, ok
}

// Map returns a map argument (nil when NULL).
func (a Args) Map(name string) map[string]string {
	m, _ := a[name].(map[string]string)
	return m
}

// Int64List returns a list argument (nil when NULL).
func (a Args) Int64List(name string) []int64 {
	l, _ := a[name].([]int64)
	return l
}

// convertMore converts the kinds declared in this file; wall reads a
// wall-clock time in the session time zone.
func convertMore(k Kind, v any, wall func(time.Time) (time.Time, error)) (any, error) {
	switch k {
	case Timestamp:
		switch x := v.(type) {
		case time.Time:
			return x, nil
		case []byte:
			return convertMore(k, string(x), wall)
		case string:
			if t, text, ok := pushdown.ParseDatetime(x); ok {
				if text.Offset {
					return t, nil // the offset is written
				}
				return wall(t)
			}
			return nil, fmt.Errorf("want a timestamp such as TIMESTAMP '2024-01-01 00:00:00', got '%s'", x)
		}
		return nil, fmt.Errorf("want a timestamp such as TIMESTAMP '2024-01-01 00:00:00', got %v", v)
	case Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want a map such as map('key', 'value'), got %v", v)
		}
		out := make(map[string]string, len(m))
		for key, val := range m {
			s, err := mapValue(val)
			if err != nil {
				return nil, fmt.Errorf("map key '%s': %v", key, err)
			}
			out[key] = s
		}
		return out, nil
	case Int64List:
		l, ok := v.([]any)
		if !ok {
			n, err := convert(Int64, v)
			if err != nil {
				return nil, fmt.Errorf("want a list such as array(1, 2), got %v", v)
			}
			return []int64{n.(int64)}, nil
		}
		out := make([]int64, 0, len(l))
		for _, e := range l {
			n, err := convert(Int64, jsonInteger(e))
			if err != nil || n == nil {
				return nil, fmt.Errorf("want a list of integers, got element %v", e)
			}
			out = append(out, n.(int64))
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown parameter kind %d", k)
}

// jsonInteger turns a whole JSON number (float64) back into an integer;
// snapshot ids exceed a float's exact range only through JSON's decoding,
// which the engine avoids by decoding numbers as json.Number strings.
func jsonInteger(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case fmt.Stringer:
		return x.String()
	}
	return v
}

func mapValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case fmt.Stringer:
		return x.String(), nil
	case nil:
		return "", fmt.Errorf("NULL is not a value")
	}
	return "", fmt.Errorf("want a string, got %v", v)
}

// sortedKeys lists a map's keys in order, for messages that name them.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

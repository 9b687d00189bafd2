package pushdown

import (
	"math"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/cockroachdb/apd/v3"
)

func dec(s string) *apd.Decimal {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestLiteral checks the conversions of SQL constants at the edges where a
// lossy conversion would drop rows: each either converts exactly or is
// refused (ok=false, the predicate stays in SQL).
func TestLiteral(t *testing.T) {
	day := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		typ  iceberg.Type
		v    any
		want string // the literal's String(), "" when refused
	}{
		{iceberg.PrimitiveTypes.Int32, int8(5), "5"},
		{iceberg.PrimitiveTypes.Int32, int64(math.MaxInt32), "2147483647"},
		{iceberg.PrimitiveTypes.Int32, int64(math.MaxInt32) + 1, ""},
		{iceberg.PrimitiveTypes.Int32, int64(math.MinInt32) - 1, ""},
		{iceberg.PrimitiveTypes.Int64, uint64(math.MaxUint64), ""},
		{iceberg.PrimitiveTypes.Int64, 2.0, "2"},
		{iceberg.PrimitiveTypes.Int64, 2.5, ""},
		{iceberg.PrimitiveTypes.Int64, float64(1 << 60), ""}, // above 2^53 a double is not one integer
		{iceberg.PrimitiveTypes.Int64, dec("15.0"), "15"},
		{iceberg.PrimitiveTypes.Int64, dec("15.5"), ""},
		{iceberg.PrimitiveTypes.Int64, "15", ""}, // MySQL compares a number with a string as doubles
		{iceberg.PrimitiveTypes.Int64, nil, ""},
		{iceberg.PrimitiveTypes.Float32, 0.25, "0.25"},
		{iceberg.PrimitiveTypes.Float32, 0.1, ""}, // not a float32
		{iceberg.PrimitiveTypes.Float32, dec("1.5"), "1.5"},
		{iceberg.PrimitiveTypes.Float32, int64(16777217), ""},
		{iceberg.PrimitiveTypes.Float64, math.NaN(), ""},
		{iceberg.PrimitiveTypes.Float64, dec("0.1"), "0.1"},
		{iceberg.PrimitiveTypes.Float64, int64(1<<53 + 1), ""},
		{iceberg.DecimalTypeOf(10, 2), dec("1.25"), "1.25"},
		{iceberg.DecimalTypeOf(10, 2), dec("1.2500"), "1.25"},
		{iceberg.DecimalTypeOf(10, 2), dec("1.255"), ""},
		{iceberg.DecimalTypeOf(10, 2), int64(5), "5.00"},
		{iceberg.DecimalTypeOf(4, 2), int64(100), ""}, // 100.00 needs precision 5
		{iceberg.DecimalTypeOf(10, 2), 1.25, ""},      // compared as doubles
		{iceberg.PrimitiveTypes.String, "abc", "abc"},
		{iceberg.PrimitiveTypes.String, int64(5), ""},
		{iceberg.PrimitiveTypes.Bool, true, "true"},
		{iceberg.PrimitiveTypes.Bool, int8(0), "false"},
		{iceberg.PrimitiveTypes.Bool, int8(2), ""},
		{iceberg.PrimitiveTypes.Date, "2024-01-15", "2024-01-15"},
		{iceberg.PrimitiveTypes.Date, day, "2024-01-15"},
		{iceberg.PrimitiveTypes.Date, "2024-01-15 00:00:00", "2024-01-15"},
		{iceberg.PrimitiveTypes.Date, "2024-01-15 12:00:00", ""},
		{iceberg.PrimitiveTypes.Date, "2024-1-15", ""}, // left to MySQL's lenient parser
		{iceberg.PrimitiveTypes.Timestamp, "2024-01-15 10:00:00.000001", "2024-01-15 10:00:00.000001"},
		{iceberg.PrimitiveTypes.Timestamp, day.Add(time.Nanosecond), ""},
		{iceberg.PrimitiveTypes.TimestampTz, day, "2024-01-15 00:00:00.000000"},
		{iceberg.PrimitiveTypes.Time, int64(5), ""},
		{iceberg.PrimitiveTypes.UUID, "0f8fad5b-d9cb-469f-a165-70867728950e", ""},
	}
	for _, tc := range tests {
		lit, ok := literal(tc.typ, tc.v)
		got := ""
		if ok {
			got = lit.String()
		}
		if got != tc.want {
			t.Errorf("literal(%s, %T %v) = %q, want %q", tc.typ, tc.v, tc.v, got, tc.want)
		}
	}
}

func TestLike(t *testing.T) {
	s := iceberg.NestedField{ID: 1, Name: "s", Type: iceberg.PrimitiveTypes.String}
	tests := []struct {
		pattern string
		want    string
		exact   bool
	}{
		{"abc%", "And(left=GreaterThanEqual(term=Reference(name='s'), literal=abc), right=LessThan(term=Reference(name='s'), literal=abd))", true},
		{"abc", "Equal(term=Reference(name='s'), literal=abc)", true},
		{"ab_d%", "And(left=GreaterThanEqual(term=Reference(name='s'), literal=ab), right=LessThan(term=Reference(name='s'), literal=ac))", false},
		{`a\%b%`, "And(left=GreaterThanEqual(term=Reference(name='s'), literal=a%b), right=LessThan(term=Reference(name='s'), literal=a%c))", true},
		{"%abc", "", false},
		{"é%", "And(left=GreaterThanEqual(term=Reference(name='s'), literal=é), right=LessThan(term=Reference(name='s'), literal=ê))", true},
		{"a\U0010FFFF%", "And(left=GreaterThanEqual(term=Reference(name='s'), literal=a\U0010FFFF), right=LessThan(term=Reference(name='s'), literal=b))", true},
	}
	for _, tc := range tests {
		pred, exact, ok := Like(s, tc.pattern, '\\')
		got := ""
		if ok {
			got = pred.String()
		}
		if got != tc.want || (ok && exact != tc.exact) {
			t.Errorf("Like(%q) = %s exact=%v, want %s exact=%v", tc.pattern, got, exact, tc.want, tc.exact)
		}
	}
}

func TestCompareFloatKeepsNaN(t *testing.T) {
	f := iceberg.NestedField{ID: 1, Name: "f", Type: iceberg.PrimitiveTypes.Float64}
	gt, exact, ok := Compare(f, iceberg.OpGT, 1.0)
	if !ok || !exact || gt.String() != "Or(left=GreaterThan(term=Reference(name='f'), literal=1), right=IsNaN(term=Reference(name='f')))" {
		t.Errorf("f > 1.0: %v %v %v", gt, exact, ok)
	}
	lt, exact, ok := Compare(f, iceberg.OpLT, dec("1.5"))
	if !ok || exact {
		t.Fatalf("f < 1.5 (DECIMAL): exact=%v ok=%v", exact, ok)
	}
	if s := lt.String(); !containsAll(s, "LessThan", "IsNaN", "+Inf", "-Inf") {
		t.Errorf("f < 1.5 (DECIMAL) = %s, want NaN and ±Inf kept", s)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		found := false
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

package history

import (
	"context"
	gosql "database/sql"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is what a query returned, as canonical text cells ("NULL" for
// NULL), or the error it failed with.
type Result struct {
	Rows    [][]string
	Err     error
	Elapsed time.Duration
	Timeout bool
}

// queryer is what both databases' sessions offer.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*gosql.Rows, error)
}

// runQuery runs q with a timeout and reads every row as canonical text.
func runQuery(ctx context.Context, conn queryer, q string, timeout time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res := readRows(ctx, conn, q)
	res.Elapsed = time.Since(start)
	if res.Err != nil && ctx.Err() == context.DeadlineExceeded {
		res.Timeout = true
		res.Err = fmt.Errorf("timed out after %v", timeout)
	}
	return res
}

func readRows(ctx context.Context, conn queryer, q string) Result {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return Result{Err: err}
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return Result{Err: err}
	}
	var out [][]string
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return Result{Err: err}
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = canonical(v, types[i].DatabaseTypeName())
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return Result{Err: err}
	}
	return Result{Rows: out}
}

var datetimeText = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?)?(?:Z|\+00:00)?$`)

// canonical renders a value the same way whichever database returned it:
// booleans as 1/0, numbers without trailing zeros, dates and datetimes as
// "YYYY-MM-DD[ hh:mm:ss[.ffffff]]" with a zero time and zero fractions
// left out (a DATE and a DATETIME at midnight compare equal).
func canonical(v any, dbType string) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if v {
			return "1"
		}
		return "0"
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int8:
		return strconv.FormatInt(int64(v), 10)
	case int16:
		return strconv.FormatInt(int64(v), 10)
	case int:
		return strconv.Itoa(v)
	case uint64:
		return strconv.FormatUint(v, 10)
	case uint32, uint8, uint16:
		return fmt.Sprint(v)
	case float32:
		return canonicalNumber(strconv.FormatFloat(float64(v), 'f', -1, 32))
	case float64:
		return canonicalNumber(strconv.FormatFloat(v, 'f', -1, 64))
	case time.Time:
		return canonicalText(v.Format("2006-01-02 15:04:05.000000"))
	case []byte:
		return canonicalText(string(v))
	case string:
		return canonicalText(v)
	default:
		return canonicalText(fmt.Sprint(v))
	}
}

var numberText = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][-+]?\d+)?$`)

func canonicalText(s string) string {
	if m := datetimeText.FindStringSubmatch(s); m != nil {
		out := m[1]
		frac := strings.TrimRight(m[3], "0")
		if m[2] != "" && (m[2] != "00:00:00" || frac != "") {
			out += " " + m[2]
			if frac != "" {
				out += "." + frac
			}
		}
		return out
	}
	if numberText.MatchString(s) {
		return canonicalNumber(s)
	}
	return s
}

// canonicalNumber drops trailing fraction zeros and the sign of zero.
func canonicalNumber(s string) string {
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return s
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// cellEqual compares two canonical cells: numbers as numbers, a decimal
// rounded to fewer places within half a unit of its last digit (MySQL's
// AVG keeps 4 more digits than its argument), and, with a tolerance (tol:
// the column is a SUM or AVG of doubles, floatsum.go), numbers within it.
func cellEqual(a, b string, tol *tolerance) bool {
	if a == b {
		return true
	}
	if !numberText.MatchString(a) || !numberText.MatchString(b) {
		return false
	}
	fa, err1 := strconv.ParseFloat(a, 64)
	fb, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if fa == fb || tol != nil && tol.allows(fa, fb) {
		return true
	}
	diff := math.Abs(fa - fb)
	places := min(fractionDigits(a), fractionDigits(b))
	return diff <= 0.5*math.Pow(10, -float64(places))*1.000001 && places >= 2
}

func fractionDigits(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func rowEqual(a, b []string, tol map[int]tolerance) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		var t *tolerance
		if c, ok := tol[i]; ok {
			t = &c
		}
		if !cellEqual(a[i], b[i], t) {
			return false
		}
	}
	return true
}

// sortKey orders rows for a multiset comparison; numbers are rounded so
// that values equal within the tolerance sort alike.
func sortKey(row []string) string {
	parts := make([]string, len(row))
	for i, c := range row {
		if numberText.MatchString(c) {
			if f, err := strconv.ParseFloat(c, 64); err == nil {
				c = strconv.FormatFloat(f, 'g', 8, 64)
			}
		}
		parts[i] = c
	}
	return strings.Join(parts, "\x00")
}

// Diff says how got differs from want, or "" when they hold the same rows
// (in the same order when ordered).
func Diff(got, want [][]string, ordered bool) string { return DiffWithin(got, want, ordered, nil) }

// DiffWithin is Diff with tolerances for some columns (by position).
func DiffWithin(got, want [][]string, ordered bool, tol map[int]tolerance) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d%s", len(got), len(want), sampleDiff(got, want))
	}
	if ordered {
		for i := range got {
			if !rowEqual(got[i], want[i], tol) {
				return fmt.Sprintf("row %d is %s, want %s", i, fmtRow(got[i]), fmtRow(want[i]))
			}
		}
		return ""
	}
	g, w := sortedRows(got), sortedRows(want)
	aligned := true
	for i := range g {
		if !rowEqual(g[i], w[i], tol) {
			aligned = false
			break
		}
	}
	if aligned {
		return ""
	}
	// Rounding near a sort boundary can misalign rows that are equal
	// within the tolerance: match them one by one.
	if len(g) <= 3000 {
		used := make([]bool, len(w))
		for _, r := range g {
			found := false
			for j, c := range w {
				if !used[j] && rowEqual(r, c, tol) {
					used[j], found = true, true
					break
				}
			}
			if !found {
				return "unexpected row " + fmtRow(r) + sampleDiff(got, want)
			}
		}
		return ""
	}
	return "rows differ" + sampleDiff(got, want)
}

func sortedRows(rows [][]string) [][]string {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(sortKey(a), sortKey(b)) })
	return out
}

// sampleDiff lists a few rows only one side has.
func sampleDiff(got, want [][]string) string {
	count := func(rows [][]string) map[string]int {
		m := map[string]int{}
		for _, r := range rows {
			m[sortKey(r)]++
		}
		return m
	}
	gc, wc := count(got), count(want)
	var extra, missing []string
	for k, n := range gc {
		if n > wc[k] {
			extra = append(extra, strings.ReplaceAll(k, "\x00", "|"))
		}
	}
	for k, n := range wc {
		if n > gc[k] {
			missing = append(missing, strings.ReplaceAll(k, "\x00", "|"))
		}
	}
	slices.Sort(extra)
	slices.Sort(missing)
	return fmt.Sprintf("; unexpected: %s; missing: %s", firstN(extra, 5), firstN(missing, 5))
}

func firstN(s []string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("%v ... (%d)", s[:n], len(s))
	}
	return fmt.Sprint(s)
}

func fmtRow(r []string) string { return strings.Join(r, "|") }

package history

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// words are the ordinary string values: few enough that joins and GROUP BY
// on s find matches, with case and a trailing space that only a binary,
// NO PAD comparison tells apart.
var words = []string{"apple", "banana", "cherry", "date", "elder", "fig", "grape", "lemon", "mango", "orange", "Apple", "APPLE", "kiwi", "", "apple "}

// hostileWords need escaping in a partition path or are not ASCII.
var hostileWords = []string{"a/b", "50%", "it's", "two words", "q?u#e&r+y", "x=y", "é", "日本", "a b/c=d"}

// lit quotes s as a SQL string literal both dialects read the same way
// (no backslashes are ever generated).
func lit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// valueGen draws literal values for a column kind: mostly from small
// domains (so that filters, joins and groups match), with NULLs, extremes
// and exact binary fractions for floats (a FLOAT 0.1 is not the DOUBLE 0.1
// in either database, and their printing differs).
type valueGen struct {
	rng *rand.Rand
	cfg *Config
	// maxID bounds the ids drawn, so that tables share keys.
	maxID int
	// held are recent numbers drawn for rows, per column name: constant
	// draws its finer constants next to them.
	held map[string][]string
}

func (g *valueGen) value(c Column, nullable bool) string {
	r := g.rng
	if nullable && r.IntN(10) == 0 {
		return "NULL"
	}
	extreme := g.cfg.Extremes && r.IntN(25) == 0
	switch c.Kind {
	case KInt:
		if extreme {
			low := "-2147483648"
			if !g.cfg.on("value/int-near-min") {
				low = "-2147483000"
			}
			return pick(r, "2147483647", low, "0", "-1")
		}
		return itoa(r.IntN(200) - 10)
	case KBigint:
		if extreme {
			low := "-9223372036854775807"
			if !g.cfg.on("value/int-near-min") {
				low = "-9223372036854770000"
			}
			return pick(r, "9223372036854775807", low, "0", "-1", "4294967296")
		}
		return itoa(1 + r.IntN(max(g.maxID, 1)))
	case KString:
		if g.cfg.HostileStrings && r.IntN(8) == 0 {
			return lit(hostileWords[r.IntN(len(hostileWords))])
		}
		w := words[r.IntN(len(words))]
		if r.IntN(6) == 0 {
			w = fmt.Sprintf("%s%d", w, r.IntN(50))
		}
		return lit(w)
	case KDate:
		if extreme {
			return lit(pick(r, "1970-01-01", "1969-12-31", "1900-02-28", "2038-01-19", "9999-12-31", "1000-01-01"))
		}
		return lit(fmt.Sprintf("%04d-%02d-%02d", 2019+r.IntN(7), 1+r.IntN(12), 1+r.IntN(28)))
	case KTimestamp:
		if extreme {
			return lit(pick(r, "1970-01-01 00:00:00", "1969-12-31 23:59:59.999999", "1900-01-01 00:00:00", "9999-12-31 23:59:59.999999", "2024-02-29 12:00:00.5"))
		}
		frac := ""
		if r.IntN(3) == 0 {
			frac = fmt.Sprintf(".%06d", r.IntN(1000000))
		}
		return lit(fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d%s", 2019+r.IntN(7), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), frac))
	case KDouble:
		if extreme {
			return pick(r, "1e15", "-1e15", "0", "0.5", "100.25", "-15")
		}
		return quarter(r, 4000)
	case KFloat:
		if extreme {
			return pick(r, "0", "-0.25", "999.75", "-999.75")
		}
		return quarter(r, 400)
	case KDecimal:
		if extreme {
			whole := strings.Repeat("9", c.Prec-c.Scale)
			frac := strings.Repeat("9", c.Scale)
			return pick(r, whole+"."+frac, "-"+whole+"."+frac, "0", "0.01")
		}
		cents := r.IntN(200000) - 20000
		return decimalLit(cents, c.Scale)
	default:
		return pick(r, "TRUE", "FALSE")
	}
}

// quarter is a multiple of 0.25 in (-n/8, n/8]: exact in FLOAT and DOUBLE.
func quarter(r *rand.Rand, n int) string {
	q := r.IntN(n) - n/2
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", float64(q)/4), "0"), ".0")
}

// decimalLit renders cents/100 at the column's scale.
func decimalLit(cents, scale int) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	s := fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
	if scale > 2 {
		s += strings.Repeat("0", scale-2)
	}
	return s
}

// constant draws a number to compare column c with in a filter. Besides
// the values rows hold, for an integer or DECIMAL column, one of the harder
// cases: a constant one digit finer than the column holds (m > 2.499),
// mostly next to a value rows hold, one beyond its range, or a DOUBLE
// (compared as doubles). Each gave wrong rows once (decimal_compare.test).
func (g *valueGen) constant(c Column) string {
	r := g.rng
	if !g.cfg.on("value/fine-constant") || !c.Kind.integer() && c.Kind != KDecimal {
		return g.value(c, false)
	}
	// DECIMAL columns half the time, and then mostly finer constants: the
	// class of bug that rounds them hides unless a row sits next to one.
	special, kind := r.IntN(4) == 0, r.IntN(3)
	if c.Kind == KDecimal {
		special, kind = r.IntN(2) == 0, []int{0, 0, 1, 2}[r.IntN(4)]
	}
	if !special {
		return g.value(c, false)
	}
	switch kind {
	case 0:
		// Next to a value rows hold, where rounding the constant to the
		// column's scale would change which rows match.
		v := g.value(c, false)
		if h := g.held[c.Name]; len(h) > 0 && r.IntN(4) != 0 {
			v = h[r.IntN(len(h))]
		}
		if !strings.Contains(v, ".") {
			v += "."
		}
		return v + itoa(1+r.IntN(9))
	case 1:
		return pick(r, beyondRange(c)...)
	}
	if c.Kind == KDecimal {
		return fmt.Sprintf("%.3fe0", float64(r.IntN(200000)-20000)/1000)
	}
	return itoa(r.IntN(200)-10) + pick(r, "e0", ".5e0")
}

// beyondRange are constants just outside what column c can hold.
func beyondRange(c Column) []string {
	switch c.Kind {
	case KInt:
		return []string{"2147483648", "-2147483649", "2147483647.5", "-2147483648.5"}
	case KBigint:
		return []string{"9223372036854775808", "-9223372036854775809", "9223372036854775807.5", "-9223372036854775808.5"}
	}
	whole := "1" + strings.Repeat("0", c.Prec-c.Scale)
	nines := strings.Repeat("9", c.Prec-c.Scale) + "." + strings.Repeat("9", c.Scale) + "5"
	return []string{whole, "-" + whole, nines, "-" + nines}
}

func pick(r *rand.Rand, vals ...string) string { return vals[r.IntN(len(vals))] }

// row draws one row for the columns, or repeats a recent one (duplicates).
func (g *valueGen) row(cols []Column, recent [][]string) []string {
	if len(recent) > 0 && g.cfg.Duplicates && g.rng.IntN(12) == 0 {
		return recent[g.rng.IntN(len(recent))]
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = g.value(c, true)
		if c.Kind.numeric() && out[i] != "NULL" {
			if g.held == nil {
				g.held = map[string][]string{}
			}
			h := append(g.held[c.Name], out[i])
			g.held[c.Name] = h[max(0, len(h)-50):]
		}
	}
	return out
}

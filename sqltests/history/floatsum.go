package history

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// SUM and AVG of DOUBLE (or FLOAT) values depend on the order the rows
// are added, in MySQL as in icesql: over 1e15, -1e15 and a quarter the
// running total rounds to 0.125 (1e15's ulp) or coarser, so MariaDB
// answered 194 where icesql answered 193.75 for the same rows (seed
// 1796671374599302750). The tester accepts such a difference when it is
// within the rounding any order of additions can cause, a bound it
// computes from the rows the sum reads; every other value, and these
// whenever the terms are small enough to be added exactly, must match.
//
// The bound: the rounding error of each addition is at most half an ulp
// of its result, and every partial sum of the terms lies between minus the
// sum of the negative terms and the sum of the positive ones, whatever the
// order; so n terms added in any order (n-1 additions, in any tree) are
// within (n-1) * ulp(P)/2 of the exact sum, with P the larger of the two
// sums. Two answers are then within (n-1) * ulp(P) of each other. A
// window aggregate may add and take away each row of its partition once
// (prefix sums, or a frame that slides): 2n operations on each side. AVG
// is the sum divided by the count of at least one row, rounded once more
// on each side: the sum's bound plus one ulp of the average.

// floatSum is an output column that is a SUM or AVG of a DOUBLE or FLOAT
// expression.
type floatSum struct {
	Col    int    // its position in the select list
	Arg    string // the summed expression, as the query spells it
	Avg    bool
	Window bool
}

// floatAggregate matches a select expression that sums a column (plain or
// COALESCEd to 0): SUM(a.x), AVG(COALESCE(a.x, 0)) OVER (...).
var floatAggregate = regexp.MustCompile(`^(SUM|AVG)\(((?:COALESCE\()?(\w+)\.(\w+)(?:, 0\))?)\)( OVER )?`)

// withSums records which of q's select expressions sel (over rels, from
// the FROM clause from and the WHERE clause where) sum DOUBLE or FLOAT
// values, and the clauses their terms come from.
func withSums(q Query, rels []rel, sel []string, from, where string) Query {
	for i, e := range sel {
		m := floatAggregate.FindStringSubmatch(e)
		if m == nil {
			continue
		}
		for _, r := range rels {
			if r.alias != m[3] {
				continue
			}
			for _, c := range r.cols {
				if c.Name == m[4] && (c.Kind == KDouble || c.Kind == KFloat) {
					q.Sums = append(q.Sums, floatSum{Col: i, Arg: m[2], Avg: m[1] == "AVG", Window: m[5] != ""})
				}
			}
		}
	}
	if len(q.Sums) > 0 {
		q.Terms = "FROM " + from + where
	}
	return q
}

// tolerance is how far apart two answers of an output column may be: abs,
// plus one ulp of the larger answer when it is an average.
type tolerance struct {
	abs float64
	avg bool
}

func (t tolerance) allows(a, b float64) bool {
	diff := math.Abs(a - b)
	bound := t.abs
	if t.avg {
		bound += ulp(math.Max(math.Abs(a), math.Abs(b)))
	}
	return diff <= bound
}

// ulp is the distance from x (>= 0) to the next larger double.
func ulp(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return math.Nextafter(x, math.Inf(1)) - x
}

// sumBound is the bound of one sum: n terms whose positive ones add up to
// pos and whose negative ones to -neg.
func sumBound(n int64, pos, neg float64, window bool) float64 {
	p := math.Max(pos, neg)
	// The oracle added pos and neg up itself: allow for its own rounding
	// (n-1 additions, each within 2^-53 relative).
	p *= 1 + float64(n)*0x1p-52
	ops := float64(max(n-1, 0))
	if window {
		ops = 2 * float64(n)
	}
	return ops * ulp(p)
}

// sumTolerances asks the oracle for the rows q's float sums read (the
// count, the sums of the positive and of the negative terms) and returns
// the tolerance of each output column (nil: none could be computed, and
// the comparison stays exact).
func (s *session) sumTolerances(ctx context.Context, q Query) map[int]tolerance {
	if len(q.Sums) == 0 {
		return nil
	}
	parts := []string{"COUNT(*)"}
	for _, f := range q.Sums {
		parts = append(parts, fmt.Sprintf("SUM(GREATEST(%s, 0))", f.Arg), fmt.Sprintf("SUM(GREATEST(-(%s), 0))", f.Arg))
	}
	text, ok := s.resolve("SELECT "+strings.Join(parts, ", ")+" "+q.Terms, false)
	if !ok {
		return nil
	}
	r := runQuery(ctx, s.mc, text, s.timeout)
	if r.Err != nil || len(r.Rows) != 1 || len(r.Rows[0]) != len(parts) {
		return nil
	}
	num := func(cell string) float64 {
		if cell == "NULL" {
			return 0
		}
		f, err := strconv.ParseFloat(cell, 64)
		if err != nil {
			return math.Inf(1) // no bound: ulp(Inf) is 0, the comparison exact
		}
		return f
	}
	n, err := strconv.ParseInt(r.Rows[0][0], 10, 64)
	if err != nil {
		return nil
	}
	out := map[int]tolerance{}
	for i, f := range q.Sums {
		pos, neg := num(r.Rows[0][1+2*i]), num(r.Rows[0][2+2*i])
		out[f.Col] = tolerance{abs: sumBound(n, pos, neg, f.Window), avg: f.Avg}
	}
	return out
}

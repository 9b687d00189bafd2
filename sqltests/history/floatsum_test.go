package history

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sumIn adds terms in order.
func sumIn(terms []float64) float64 {
	s := 0.0
	for _, t := range terms {
		s += t
	}
	return s
}

// sumPairwise adds terms as a balanced tree (a vectorized or parallel sum).
func sumPairwise(terms []float64) float64 {
	if len(terms) <= 2 {
		return sumIn(terms)
	}
	h := len(terms) / 2
	return sumPairwise(terms[:h]) + sumPairwise(terms[h:])
}

// boundOf is sumBound computed from the terms themselves.
func boundOf(terms []float64, window bool) float64 {
	var pos, neg float64
	for _, t := range terms {
		if t > 0 {
			pos += t
		} else {
			neg -= t
		}
	}
	return sumBound(int64(len(terms)), pos, neg, window)
}

// The seed 1796671374599302750 kind of column: 1e15, -1e15 and quarters.
// Added in different orders the sums differ (as MariaDB's 194 and
// icesql's 193.75 did), and every two of them are within the bound.
func TestSumBoundCoversEveryOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1796671374599302750, 1))
	for trial := range 200 {
		terms := []float64{1e15, 1e15, 1e15, 1e15, -1e15, -1e15, -1e15, -1e15}
		for range 5 + rng.IntN(60) {
			terms = append(terms, float64(rng.IntN(4000)-2000)/4)
		}
		tol := tolerance{abs: boundOf(terms, false)}
		avgTol := tolerance{abs: tol.abs, avg: true}
		var sums []float64
		for range 30 {
			rng.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
			sums = append(sums, sumIn(terms), sumPairwise(terms))
		}
		slices.Sort(sums)
		lo, hi := sums[0], sums[len(sums)-1]
		if !tol.allows(lo, hi) {
			t.Fatalf("trial %d: sums %v and %v of %d terms differ by more than %v", trial, lo, hi, len(terms), tol.abs)
		}
		n := float64(len(terms))
		if !avgTol.allows(lo/n, hi/n) {
			t.Fatalf("trial %d: averages %v and %v differ by more than the bound", trial, lo/n, hi/n)
		}
		if trial == 0 && lo == hi {
			t.Fatalf("the orders gave the same sum %v: the data does not show the rounding", lo)
		}
	}
}

// A window's frame sum by prefix sums (total minus the rows before the
// frame) is within the window bound of the frame's sum in any order.
func TestWindowBoundCoversPrefixSums(t *testing.T) {
	// The seed's window/rows case: AVG over ROWS 1 FOLLOWING AND UNBOUNDED
	// FOLLOWING of 1e15 three times, 174.25 and 301.25.
	part := []float64{1e15, 1e15, 1e15, 174.25, 301.25}
	tol := tolerance{abs: boundOf(part, true), avg: true}
	exact := 301.25 // the frame of the fourth row is the fifth alone
	prefix := sumIn(part) - sumIn(part[:4])
	if prefix == exact {
		t.Fatalf("prefix sums gave the exact %v: the case does not show the rounding", prefix)
	}
	if !tol.allows(prefix, exact) || !tol.allows(301, 300.75) {
		t.Errorf("%v, 301 and 300.75 (MariaDB's) should be within %v of %v", prefix, tol.abs, exact)
	}
}

// The bound lets no real difference through where the terms add exactly,
// and none beyond the rounding where they do not.
func TestSumToleranceRejectsRealDifferences(t *testing.T) {
	quarters := []float64{100.25, -15, 0.5, 108, -0.25}
	if b := boundOf(quarters, false); b > 1e-9 {
		t.Errorf("bound %v over quarters that add exactly", b)
	}
	if (tolerance{abs: boundOf(quarters, false)}).allows(193.75, 196) {
		t.Error("193.75 and 196 accepted over quarters")
	}
	// Two 1e15, two -1e15 and a quarter: partial sums up to 2e15, whose
	// ulp is 0.25; four additions.
	big := []float64{1e15, 1e15, -1e15, -1e15, 193.75}
	tol := tolerance{abs: boundOf(big, false)}
	if tol.abs != 1 {
		t.Errorf("bound %v, want 4 additions of an ulp of 0.25", tol.abs)
	}
	if !tol.allows(193.75, 194) {
		t.Error("193.75 and 194 (MariaDB's) refused")
	}
	if tol.allows(193.75, 196) {
		t.Error("193.75 and 196 accepted: a real difference")
	}
	if got := DiffWithin([][]string{{"a", "193.75"}}, [][]string{{"a", "196"}}, false, map[int]tolerance{1: tol}); got == "" {
		t.Error("DiffWithin accepted 196 for 193.75")
	}
	if got := DiffWithin([][]string{{"a", "193.75"}}, [][]string{{"a", "194"}}, false, map[int]tolerance{1: tol}); got != "" {
		t.Errorf("DiffWithin: %s", got)
	}
	// The tolerance is the column's only: the same numbers elsewhere differ.
	if got := DiffWithin([][]string{{"193.75", "1"}}, [][]string{{"194", "1"}}, false, map[int]tolerance{1: tol}); got == "" {
		t.Error("a column without a tolerance compared loosely")
	}
}

// withSums finds the SUM and AVG of doubles among a query's outputs.
func TestWithSums(t *testing.T) {
	r := rel{alias: "a", cols: baseColumns()}
	sel := []string{"a.k", "SUM(a.x)", "AVG(a.m)", "AVG(COALESCE(a.f, 0)) OVER (PARTITION BY a.k ORDER BY a.id)", "SUM(a.id)", "COUNT(a.x)"}
	q := withSums(Query{}, []rel{r}, sel, "{{t:t1}} AS a", " WHERE a.k > 3")
	want := []floatSum{{Col: 1, Arg: "a.x"}, {Col: 3, Arg: "COALESCE(a.f, 0)", Avg: true, Window: true}}
	if !slices.Equal(q.Sums, want) || q.Terms != "FROM {{t:t1}} AS a WHERE a.k > 3" {
		t.Errorf("sums %+v, terms %q", q.Sums, q.Terms)
	}
}

package vector

import (
	"errors"
	"fmt"
	"math"
	"math/big"
)

// A HAVING over a GROUP BY of many groups keeps few of them (TPC-H Q18's
// inner query keeps 57 of 1.5 million). Building every group's result (a
// big.Int per sum) and its row, only for the caller to evaluate the HAVING
// on the row and drop it, was most of the query's time. A Bound is a
// HAVING conjunct the aggregation can decide itself, on its exact
// accumulators, before any result exists.

// Bound keeps a group only when the exact value of aggregate Agg compares
// to Value as Op says. Value is a rational in the aggregate's own unit:
// for a SUM, the sum unscaled at its argument's scale (a constant 300
// against a DECIMAL(15,2) sum is 30000); for a count, the count. Only SUM,
// COUNT(*), COUNT and COUNT(DISTINCT) can be bounded. A group whose SUM is
// NULL (no non-NULL value) is kept: the caller's own HAVING decides it.
type Bound struct {
	Agg   int
	Op    CmpOp
	Value *big.Rat
}

// intBound is a Bound on an integer: x op T for an integer T, or a
// verdict that holds for every x (a non-integer constant compared for
// equality).
type intBound struct {
	agg     int
	op      CmpOp
	t       *big.Int
	t64     int64
	fits    bool
	verdict int8 // 0: compare; 1: always true; -1: always false
}

// compileBound turns x op r, for integers x, into a comparison with an
// integer: x > r is x > ⌊r⌋, x >= r is x >= ⌈r⌉, x < r is x < ⌈r⌉ and
// x <= r is x <= ⌊r⌋.
func compileBound(b Bound) intBound {
	r := b.Value
	floor := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: the floor, the denominator being positive
	ceil := new(big.Int).Set(floor)
	integral := r.IsInt()
	if !integral {
		ceil.Add(ceil, big.NewInt(1))
	}
	ib := intBound{agg: b.Agg, op: b.Op}
	switch b.Op {
	case GT, LE:
		ib.t = floor
	case GE, LT:
		ib.t = ceil
	case EQ:
		ib.t = floor
		if !integral {
			ib.verdict = -1
		}
	case NE:
		ib.t = floor
		if !integral {
			ib.verdict = 1
		}
	}
	ib.fits = ib.t.IsInt64()
	if ib.fits {
		ib.t64 = ib.t.Int64()
	}
	return ib
}

// holds says whether op holds for a comparison result c (x cmp t).
func (b *intBound) holds(c int) bool {
	switch b.op {
	case EQ:
		return c == 0
	case NE:
		return c != 0
	case LT:
		return c < 0
	case LE:
		return c <= 0
	case GT:
		return c > 0
	}
	return c >= 0
}

// checkBounds says whether p's bounds are ones the aggregation can decide.
func (p *Plan) checkBounds() error {
	for _, b := range p.Having {
		if b.Agg < 0 || b.Agg >= len(p.Aggs) {
			return fmt.Errorf("HAVING bound on aggregate %d of %d", b.Agg, len(p.Aggs))
		}
		if b.Value == nil || b.Op < EQ || b.Op > GE {
			return errors.New("HAVING bound without a value or comparison")
		}
		switch p.Aggs[b.Agg].Func {
		case Sum, CountStar, Count, CountDistinct:
		default:
			return fmt.Errorf("HAVING bound on aggregate function %d", p.Aggs[b.Agg].Func)
		}
	}
	return nil
}

// keep says whether group g (its rows counted in rows) satisfies every
// bound.
func (w *worker) keep(bounds []intBound, g int32) bool {
	for i := range bounds {
		b := &bounds[i]
		a := w.accs[b.agg]
		if a.agg.Func == Sum && w.rows[g]-a.nullsOf(g) == 0 {
			continue // NULL: the caller's HAVING decides
		}
		if b.verdict != 0 {
			if b.verdict < 0 {
				return false
			}
			continue
		}
		var c int
		switch a.agg.Func {
		case CountStar:
			c = cmpInt64(w.rows[g], b)
		case Count:
			c = cmpInt64(w.rows[g]-a.nullsOf(g), b)
		case CountDistinct:
			c = cmpInt64(a.distinct.counts[g], b)
		case Sum:
			if a.agg.ExactFloat && a.abs[g] >= maxExactFloat {
				// The caller's float64 sum may differ from the exact one;
				// the group's result fails with ErrInexact instead.
				continue
			}
			hi, lo := a.sum(g)
			c = cmpInt128(hi, lo, b)
		default:
			continue
		}
		if !b.holds(c) {
			return false
		}
	}
	return true
}

func cmpInt64(x int64, b *intBound) int {
	if !b.fits {
		return -b.t.Sign()
	}
	switch {
	case x < b.t64:
		return -1
	case x > b.t64:
		return 1
	}
	return 0
}

// cmpInt128 compares the two's complement 128-bit hi:lo with b's integer.
func cmpInt128(hi int64, lo uint64, b *intBound) int {
	if b.fits {
		// t as 128 bits: its sign extended into the high word.
		thi, tlo := b.t64>>63, uint64(b.t64)
		switch {
		case hi < thi:
			return -1
		case hi > thi:
			return 1
		case lo < tlo:
			return -1
		case lo > tlo:
			return 1
		}
		return 0
	}
	if hi == 0 && lo <= math.MaxInt64 || hi == -1 && lo > math.MaxInt64 {
		return -b.t.Sign() // x fits in 64 bits, t does not
	}
	return int128(hi, lo).Cmp(b.t)
}

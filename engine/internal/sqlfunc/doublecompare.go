package sqlfunc

import (
	"math"
	"math/big"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL compares a DECIMAL with a DOUBLE or a string as doubles: the
// DECIMAL is rounded to the nearest double. The functions here write such
// a comparison of a DECIMAL column with a constant as comparisons of the
// column with exact decimals at its scale, which Iceberg (pruning included)
// and the vector path evaluate. Anything else is compared as CASTs to
// DOUBLE on the row path.
//
// Which comparisons are made as doubles (MySQL's item_cmp_type, the same
// in MariaDB 10.11):
//   - a comparison operator: when one side is a DECIMAL and the other a
//     DOUBLE or a string;
//   - IN: pair by pair, x with each element (x IN (0.1, 0.1e0) compares
//     x with 0.1 exactly and with 0.1e0 as a double);
//   - BETWEEN: all three operands in one type, DOUBLE when one of them is
//     a DECIMAL and another a DOUBLE or a string.

// inexact says MySQL compares a value of type t with a DECIMAL as a double.
func inexact(t sql.Type) bool { return types.IsFloat(t) || types.IsText(t) }

// doubleComparison is `l op r` compared as doubles.
func doubleComparison(ctx *sql.Context, op cmpOp, l, r sql.Expression) sql.Expression {
	if isDecimalColumn(ctx, l) {
		if d, ok := doubleConstant(ctx, r); ok {
			if e, ok := doubleBound(ctx, op, l, d); ok {
				return e
			}
		}
	}
	if isDecimalColumn(ctx, r) {
		if d, ok := doubleConstant(ctx, l); ok {
			if e, ok := doubleBound(ctx, op.mirror(), r, d); ok {
				return e
			}
		}
	}
	return newComparison(op, asDouble(ctx, l), asDouble(ctx, r))
}

func isDecimalColumn(ctx *sql.Context, e sql.Expression) bool {
	return isColumn(e) && types.IsDecimal(e.Type(ctx))
}

// doubleConstant is e as a double, when e is a number the statement spelled
// (see isConstant) and not NULL.
func doubleConstant(ctx *sql.Context, e sql.Expression) (float64, bool) {
	if !isConstant(e) {
		return 0, false
	}
	t := e.Type(ctx)
	switch {
	case types.IsDecimal(t):
		c, ok := decimalConstant(ctx, e)
		if !ok || c == nil {
			return 0, false
		}
		f, err := c.Float64() // correctly rounded, as MySQL converts
		return f, err == nil
	case types.IsFloat(t), types.IsInteger(t):
		v, err := e.Eval(ctx, nil)
		if err != nil || v == nil {
			return 0, false
		}
		f, _, err := types.Float64.Convert(ctx, v)
		if err != nil {
			return 0, false
		}
		d, ok := f.(float64)
		return d, ok && !math.IsInf(d, 0) && !math.IsNaN(d)
	}
	return 0, false
}

// doubleBound is `x op d` for a DECIMAL column x and a double d compared as
// doubles, written with exact decimals: x as a double is d when x lies
// between a and b, the least and greatest decimals of x's scale that round
// to d (none when a > b). So x < d is x < a, x >= d is x >= a, x > d is
// x > b, x <= d is x <= b, and x = d is a <= x <= b. ok is false for a
// <=> whose answer is a range (left to the row path).
func doubleBound(ctx *sql.Context, op cmpOp, x sql.Expression, d float64) (sql.Expression, bool) {
	a, b, ok := roundingTo(d, scaleOf(x.Type(ctx)))
	if !ok {
		return nil, false
	}
	switch op {
	case opLT, opGE:
		return bound(ctx, op, x, nil, a)
	case opGT, opLE:
		return bound(ctx, op, x, nil, b)
	}
	switch a.Cmp(b) {
	case 1: // no decimal of x's scale rounds to d
		if op == opNSE {
			return expression.NewLiteral(false, types.Boolean), true
		}
		return never(x), true
	case 0:
		return bound(ctx, op, x, nil, a)
	}
	if op == opNSE {
		return nil, false
	}
	from, _ := bound(ctx, opGE, x, nil, a)
	to, _ := bound(ctx, opLE, x, nil, b)
	if lo, ok := boundOf(from, opLE, x); ok {
		if hi, ok := boundOf(to, opGE, x); ok {
			return expression.NewBetween(x, lo, hi), true
		}
	}
	return expression.NewAnd(from, to), true
}

// beyondDecimals is a magnitude beyond every DECIMAL's range (65 digits).
const beyondDecimals = 1e70

// roundingTo is the least and greatest decimals of the given scale that
// round to the double d, as MySQL converts a DECIMAL to a double (to the
// nearest, ties to the even significand). They are those between the
// midpoints of d and its neighbours, the midpoints included when d's
// significand is even. ok is false for an infinity or NaN.
func roundingTo(d float64, scale int32) (a, b *apd.Decimal, ok bool) {
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return nil, nil, false
	}
	if math.Abs(d) >= beyondDecimals {
		// Every decimal is below (or above) d: any such bound says so.
		v := apd.New(1, 71)
		if d < 0 {
			v.Neg(v)
		}
		return v, v, true
	}
	lo, loOK := midpoint(math.Nextafter(d, math.Inf(-1)), d)
	hi, hiOK := midpoint(d, math.Nextafter(d, math.Inf(1)))
	if !loOK || !hiOK {
		return nil, nil, false
	}
	closed := math.Float64bits(d)&1 == 0
	unit := apd.New(1, -scale)
	ac := apd.BaseContext.WithPrecision(200)
	a = quantize(lo, -scale, apd.RoundCeiling)
	if !closed && a.Cmp(lo) == 0 {
		_, _ = ac.Add(a, a, unit)
	}
	b = quantize(hi, -scale, apd.RoundFloor)
	if !closed && b.Cmp(hi) == 0 {
		_, _ = ac.Sub(b, b, unit)
	}
	return a, b, true
}

// midpoint is (x+y)/2 exactly, for adjacent doubles x and y.
func midpoint(x, y float64) (*apd.Decimal, bool) {
	// 64 bits hold the sum of two adjacent doubles; halving is exact; and a
	// double has at most 1074 binary, so 1074 decimal, digits after the point.
	s := new(big.Float).SetPrec(64).SetFloat64(x)
	s.Add(s, new(big.Float).SetFloat64(y))
	s.SetMantExp(s, -1)
	v, _, err := apd.NewFromString(s.Text('f', 1080))
	return v, err == nil
}

// decimalInDoubles is x IN (list) for a DECIMAL x and a list holding DOUBLEs
// or strings: an OR of x IN (the exact elements) and x compared as doubles
// with each other element. (IN is true when one comparison is, else NULL
// when one is NULL, else false: so is the OR.) ok is false when the list
// holds no DOUBLE nor string.
func decimalInDoubles(ctx *sql.Context, x sql.Expression, tuple expression.Tuple) (sql.Expression, bool) {
	var exact, doubles expression.Tuple
	var ranges []sql.Expression
	found := false
	for _, el := range tuple {
		if !inexact(el.Type(ctx)) {
			exact = append(exact, el)
			continue
		}
		found = true
		if !isDecimalColumn(ctx, x) {
			doubles = append(doubles, el)
			continue
		}
		d, ok := doubleConstant(ctx, el)
		if !ok {
			doubles = append(doubles, el)
			continue
		}
		switch e := doubleComparison(ctx, opEQ, x, expression.NewLiteral(d, types.Float64)).(type) {
		case *expression.Equals:
			if _, isLit := e.Right().(*expression.Literal); isLit && e.Left() == x {
				exact = append(exact, e.Right()) // one decimal rounds to d
				continue
			}
			ranges = append(ranges, e)
		case *expression.Not: // never: no decimal of x's scale rounds to d
		default:
			ranges = append(ranges, e)
		}
	}
	if !found {
		return nil, false
	}
	var terms []sql.Expression
	if len(exact) > 0 {
		in := sql.Expression(expression.NewInTuple(x, exact))
		if e, ok := decimalIn(ctx, x, exact); ok {
			in = e
		}
		terms = append(terms, in)
	}
	if len(doubles) > 0 {
		terms = append(terms, expression.NewInTuple(asDouble(ctx, x), doubles))
	}
	terms = append(terms, ranges...)
	if len(terms) == 0 {
		return never(x), true
	}
	return expression.JoinOr(terms...), true
}

// betweenAsDoubles says MySQL compares the operands of b as doubles: one is
// a DECIMAL, another a DOUBLE or a string.
func betweenAsDoubles(ctx *sql.Context, b *expression.Between) bool {
	var decimal, double bool
	for _, e := range []sql.Expression{b.Val, b.Lower, b.Upper} {
		t := e.Type(ctx)
		decimal = decimal || types.IsDecimal(t)
		double = double || inexact(t)
	}
	return decimal && double
}

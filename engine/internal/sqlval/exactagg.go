package sqlval

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/proto/query"
)

// MySQL's SUM and AVG of exact values (integers, DECIMAL) are DECIMALs
// computed exactly; go-mysql-server types both as DOUBLE and sums integers
// in float64, so SUM(bigint) loses digits past 2^53 and AVG(int) prints
// 10.25 where MySQL prints 10.2500. The provider hands the planner these
// aggregates instead of go-mysql-server's for exact arguments (see
// provider.Function); approximate arguments (FLOAT, DOUBLE, strings) keep
// go-mysql-server's, which are DOUBLE as in MySQL.
//
// The result types follow MySQL (item_sum.cc): SUM of DECIMAL(p,s) is
// DECIMAL(p+22,s) and AVG is DECIMAL(p+4,s+4), with 22 the digits of a
// longlong (DECIMAL_LONGLONG_DIGITS) and 4 the default
// div_precision_increment, capped at 65 digits and a scale of 30.
const (
	sumExtraPrecision = 22
	avgExtraScale     = 4
	maxDecPrecision   = 65
	maxDecScale       = 30
)

// ExactAggregateFunction is the sql.Function for SUM or AVG: the exact
// aggregate when the argument is exact, go-mysql-server's otherwise.
func ExactAggregateFunction(name string) sql.Function {
	avg := name == "avg"
	return sql.Function1{Name: name, Fn: func(ctx *sql.Context, e sql.Expression) sql.Expression {
		var inner sql.Aggregation
		if avg {
			inner = aggregation.NewAvg(e)
		} else {
			inner = aggregation.NewSum(e)
		}
		typ, ok := exactAggType(e.Type(ctx), avg)
		if !ok {
			return inner
		}
		return &ExactAgg{Inner: inner, Avg: avg, Typ: typ}
	}}
}

// exactAggType is MySQL's result type of SUM or AVG over t, when t is exact.
func exactAggType(t sql.Type, avg bool) (sql.DecimalType, bool) {
	p, s, ok := exactPrecision(t)
	if !ok {
		return nil, false
	}
	if avg {
		p, s = p+avgExtraScale, s+avgExtraScale
	} else {
		p += sumExtraPrecision
	}
	p, s = min(p, maxDecPrecision), min(s, maxDecScale)
	dt, err := types.CreateDecimalType(uint8(p), uint8(s))
	if err != nil {
		return nil, false
	}
	return dt, true
}

// exactPrecision is the precision and scale MySQL gives an exact value of
// type t (for integers, the digits of the type's largest value).
func exactPrecision(t sql.Type) (p, s int, ok bool) {
	if dt, isDec := t.(sql.DecimalType); isDec && types.IsDecimal(t) {
		return int(dt.Precision()), int(dt.Scale()), true
	}
	if !types.IsInteger(t) {
		return 0, 0, false
	}
	switch t.Type() {
	case query.Type_INT8, query.Type_UINT8:
		return 3, 0, true
	case query.Type_INT16, query.Type_UINT16:
		return 5, 0, true
	case query.Type_INT24:
		return 7, 0, true
	case query.Type_UINT24:
		return 8, 0, true
	case query.Type_INT32, query.Type_UINT32:
		return 10, 0, true
	case query.Type_INT64:
		return 19, 0, true
	default:
		return 20, 0, true
	}
}

// ExactAgg is SUM or AVG with a DECIMAL result computed exactly. It wraps
// go-mysql-server's aggregate for everything but the type and the
// computation, so names, children, windows and ids behave as before.
type ExactAgg struct {
	Inner sql.Aggregation // *aggregation.Sum or *aggregation.Avg
	Avg   bool
	Typ   sql.DecimalType
}

var (
	_ sql.Aggregation        = (*ExactAgg)(nil)
	_ sql.FunctionExpression = (*ExactAgg)(nil)
	_ sql.CollationCoercible = (*ExactAgg)(nil)
)

func (a *ExactAgg) with(inner sql.Expression) *ExactAgg {
	return &ExactAgg{Inner: inner.(sql.Aggregation), Avg: a.Avg, Typ: a.Typ}
}

func (a *ExactAgg) child() sql.Expression                   { return a.Inner.Children()[0] }
func (a *ExactAgg) Type(*sql.Context) sql.Type              { return a.Typ }
func (a *ExactAgg) IsNullable(*sql.Context) bool            { return true } // no rows, or only NULLs
func (a *ExactAgg) Resolved() bool                          { return a.Inner.Resolved() }
func (a *ExactAgg) String() string                          { return a.Inner.String() }
func (a *ExactAgg) Children() []sql.Expression              { return a.Inner.Children() }
func (a *ExactAgg) Id() sql.ColumnId                        { return a.Inner.Id() }
func (a *ExactAgg) Window() *sql.WindowDefinition           { return a.Inner.Window() }
func (a *ExactAgg) FunctionName() string                    { return a.Inner.(sql.FunctionExpression).FunctionName() }
func (a *ExactAgg) Description() string                     { return a.Inner.(sql.FunctionExpression).Description() }
func (a *ExactAgg) WithId(id sql.ColumnId) sql.IdExpression { return a.with(a.Inner.WithId(id)) }

func (a *ExactAgg) DebugString(ctx *sql.Context) string { return sql.DebugString(ctx, a.Inner) }

func (a *ExactAgg) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, a.Inner)
}

func (a *ExactAgg) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	return a.Inner.Eval(ctx, row) // an error: aggregates are evaluated through buffers
}

func (a *ExactAgg) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	inner, err := a.Inner.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	return a.with(inner), nil
}

func (a *ExactAgg) WithWindow(ctx *sql.Context, w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return a.with(a.Inner.WithWindow(ctx, w))
}

func (a *ExactAgg) NewBuffer(ctx *sql.Context) (sql.AggregationBuffer, error) {
	child, err := transform.Clone(ctx, a.child())
	if err != nil {
		return nil, err
	}
	return &exactAggBuffer{expr: child, agg: a}, nil
}

// NewWindowFunction keeps go-mysql-server's window function for framing and
// computes the frames' sums exactly from prefix sums.
func (a *ExactAgg) NewWindowFunction(ctx *sql.Context) (sql.WindowFunction, error) {
	child, err := transform.Clone(ctx, a.child())
	if err != nil {
		return nil, err
	}
	framing, err := aggregation.NewSumAgg(child).WithWindow(ctx, a.Window())
	if err != nil {
		return nil, err
	}
	return &exactWindowAgg{WindowFunction: framing, expr: child, agg: a}, nil
}

// Result is the SUM or AVG of n values summing to sum, in the result type.
func (a *ExactAgg) Result(sum *apd.Decimal, n int64) (any, error) {
	if n == 0 {
		return nil, nil
	}
	scale := int32(a.Typ.Scale())
	if a.Avg {
		return divRoundHalfUp(sum, n, scale), nil
	}
	out, err := sql.DecimalRound(sum, scale)
	if err != nil {
		return nil, fmt.Errorf("round %s to %d decimals: %w", strings.ToUpper(a.FunctionName()), scale, err)
	}
	return out, nil
}

// exactAggBuffer sums one group's values exactly.
type exactAggBuffer struct {
	expr sql.Expression
	agg  *ExactAgg
	sum  apd.Decimal
	n    int64
}

func (b *exactAggBuffer) Update(ctx *sql.Context, row sql.Row) error {
	v, err := b.expr.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	d, err := ToDecimal(v)
	if err != nil {
		return err
	}
	if _, err := ExactCtx.Add(&b.sum, &b.sum, d); err != nil {
		return fmt.Errorf("%s: %w", b.agg.String(), err)
	}
	b.n++
	return nil
}

func (b *exactAggBuffer) Eval(*sql.Context) (any, error) { return b.agg.Result(&b.sum, b.n) }

func (b *exactAggBuffer) Dispose(ctx *sql.Context) { expression.Dispose(ctx, b.expr) }

// exactWindowAgg answers each frame from exact prefix sums of the
// partition; the embedded go-mysql-server function supplies the framer.
type exactWindowAgg struct {
	sql.WindowFunction
	expr   sql.Expression
	agg    *ExactAgg
	start  int
	sums   []apd.Decimal // sums[i]: the partition's first i+1 values
	counts []int64       // counts[i]: how many of them are not NULL
}

func (w *exactWindowAgg) StartPartition(ctx *sql.Context, interval sql.WindowInterval, buf sql.WindowBuffer) error {
	w.start = interval.Start
	n := interval.End - interval.Start
	w.sums, w.counts = make([]apd.Decimal, n), make([]int64, n)
	var sum apd.Decimal
	var count int64
	for i := range n {
		v, err := w.expr.Eval(ctx, buf[interval.Start+i])
		if err != nil {
			return err
		}
		if v != nil {
			d, err := ToDecimal(v)
			if err != nil {
				return err
			}
			if _, err := ExactCtx.Add(&sum, &sum, d); err != nil {
				return fmt.Errorf("%s: %w", w.agg.String(), err)
			}
			count++
		}
		w.sums[i].Set(&sum)
		w.counts[i] = count
	}
	return nil
}

func (w *exactWindowAgg) Compute(ctx *sql.Context, interval sql.WindowInterval, _ sql.WindowBuffer) (any, error) {
	if interval.End <= interval.Start {
		return nil, nil
	}
	last, first := interval.End-w.start-1, interval.Start-w.start-1
	sum := new(apd.Decimal).Set(&w.sums[last])
	n := w.counts[last]
	if first >= 0 {
		if _, err := ExactCtx.Sub(sum, sum, &w.sums[first]); err != nil {
			return nil, err
		}
		n -= w.counts[first]
	}
	return w.agg.Result(sum, n)
}

// ExactCtx adds without rounding: 200 digits hold any sum of DECIMAL(65)
// values.
var ExactCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(200)
	c.Rounding = apd.RoundHalfUp
	return c
}()

// ToDecimal reads one argument value (an integer, a DECIMAL, or the string
// go-mysql-server evaluates some DECIMAL literals to) as a decimal.
func ToDecimal(v any) (*apd.Decimal, error) {
	if d, ok := v.(*apd.Decimal); ok {
		return d, nil
	}
	d, err := types.InternalDecimalType.ConvertToDecimal(v)
	if err != nil {
		return nil, fmt.Errorf("sum %v (%T) exactly: %w", v, v, err)
	}
	return d, nil
}

// divRoundHalfUp is sum/n rounded half away from zero to scale decimals,
// as MySQL rounds AVG's DECIMAL result, computed on integers so no
// intermediate rounding can move a tie.
func divRoundHalfUp(sum *apd.Decimal, n int64, scale int32) *apd.Decimal {
	// sum/n = coeff * 10^exp / n; the result is round(coeff * 10^(exp+scale) / n) * 10^-scale.
	q := RoundedQuo(sum.Coeff.MathBigInt(), int64(sum.Exponent)+int64(scale), n)
	out := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(q), -scale)
	out.Negative = sum.Negative && !out.IsZero()
	return out
}

// RoundedQuo is sum*10^shift/n rounded half away from zero: AVG's
// rounding, shared by the row path (divRoundHalfUp) and the vector path's
// TopN over AVG (vecexec), which must order rows exactly as the row path
// computes their values.
func RoundedQuo(sum *big.Int, shift, n int64) *big.Int {
	num := new(big.Int).Abs(sum)
	den := big.NewInt(n)
	if shift >= 0 {
		num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(shift), nil))
	} else {
		den.Mul(den, new(big.Int).Exp(big.NewInt(10), big.NewInt(-shift), nil))
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if sum.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

package sqlfunc

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// mod is a % b (and MOD(a, b)) as MySQL computes it. go-mysql-server
// computes an integer remainder in decimals, so -5 % 5 answered the
// decimal -0, which GROUP BY kept apart from 0; MySQL's is the BIGINT 0.
// Remainders of decimals and floats keep go-mysql-server's computation,
// with a negative zero made 0 (MySQL groups and compares them as one
// value, and prints 0).
type MySQLMod struct {
	*expression.Mod
	Integer bool // both operands integers: a BIGINT remainder
}

var _ sql.Expression = (*MySQLMod)(nil)

func newMod(ctx *sql.Context, m *expression.Mod) *MySQLMod {
	lt, rt := m.LeftChild.Type(ctx), m.RightChild.Type(ctx)
	return &MySQLMod{Mod: m, Integer: types.IsInteger(lt) && types.IsInteger(rt) && !types.IsUnsigned(lt)}
}

func (m *MySQLMod) Type(ctx *sql.Context) sql.Type {
	if m.Integer {
		return types.Int64
	}
	return m.Mod.Type(ctx)
}

func (m *MySQLMod) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	e, err := m.Mod.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	return newMod(ctx, e.(*expression.Mod)), nil
}

func (m *MySQLMod) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if !m.Integer {
		v, err := m.Mod.Eval(ctx, row)
		return withoutNegativeZero(v), err
	}
	l, err := m.LeftChild.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	r, err := m.RightChild.Eval(ctx, row)
	if err != nil || l == nil || r == nil {
		return nil, err
	}
	x, ok1 := Signed(l) // overflow.go
	y, ok2 := Signed(r)
	if !ok1 || !ok2 {
		// A BIGINT UNSIGNED beyond the signed range: go-mysql-server's
		// decimal remainder is exact.
		v, err := expression.NewMod(expression.NewLiteral(l, m.LeftChild.Type(ctx)), expression.NewLiteral(r, m.RightChild.Type(ctx))).Eval(ctx, nil)
		if err != nil || v == nil {
			return v, err
		}
		c, _, err := types.Int64.Convert(ctx, v)
		return c, err
	}
	switch y {
	case 0:
		ctx.Warn(expression.ERDivisionByZero, "Division by 0")
		return nil, nil
	case -1:
		return int64(0), nil // math.MinInt64 % -1 is 0, and Go's % would agree
	}
	return x % y, nil
}

// withoutNegativeZero is v, with a negative zero float or decimal made 0.
func withoutNegativeZero(v any) any {
	switch n := v.(type) {
	case float64:
		if n == 0 && math.Signbit(n) {
			return float64(0)
		}
	case float32:
		if n == 0 && math.Signbit(float64(n)) {
			return float32(0)
		}
	case *apd.Decimal:
		if n.Negative && n.IsZero() {
			z := *n
			z.Negative = false
			return &z
		}
	}
	return v
}

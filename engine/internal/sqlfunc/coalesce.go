package sqlfunc

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// coalesce is go-mysql-server's COALESCE with MySQL's result type where a
// FLOAT meets another number: go-mysql-server types COALESCE(float_col, 0)
// as text (ORDER BY it sorted '100' before '21') and COALESCE(float_col,
// 1.5) as DECIMAL(2,1) (3.25 came back as 3.3). MySQL's is DOUBLE. A
// DECIMAL result has its type's scale (COALESCE(m, 0) answered 0 and 0.00,
// two DISTINCT values).
type coalesce struct {
	*function.Coalesce
	typ sql.Type
}

var _ sql.FunctionExpression = (*coalesce)(nil)

var CoalesceFunction = sql.FunctionN{Name: "coalesce", Fn: newCoalesce}

func newCoalesce(ctx *sql.Context, args ...sql.Expression) (sql.Expression, error) {
	e, err := function.NewCoalesce(ctx, args...)
	if err != nil {
		return nil, err
	}
	c := e.(*function.Coalesce)
	if t := floatResult(ctx, args); t != nil {
		return &coalesce{Coalesce: c, typ: t}, nil
	}
	if resolved(args) {
		if t, ok := c.Type(ctx).(sql.DecimalType); ok {
			return &coalesce{Coalesce: c, typ: t}, nil
		}
	}
	return c, nil
}

func resolved(args []sql.Expression) bool {
	for _, a := range args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// floatResult is MySQL's type for a choice among args when they are all
// numbers (or NULL) and one is a FLOAT or DOUBLE: FLOAT when all are
// FLOAT, else DOUBLE. Nil otherwise, or before args are resolved.
func floatResult(ctx *sql.Context, args []sql.Expression) sql.Type {
	float, allFloat32 := false, true
	for _, a := range args {
		if !a.Resolved() {
			return nil
		}
		t := a.Type(ctx)
		switch {
		case types.IsNullType(t):
			continue
		case !types.IsNumber(t):
			return nil
		case types.IsFloat(t):
			float = true
		}
		allFloat32 = allFloat32 && t == types.Float32
	}
	switch {
	case !float:
		return nil
	case allFloat32:
		return types.Float32
	}
	return types.Float64
}

func (c *coalesce) Type(*sql.Context) sql.Type { return c.typ }

func (c *coalesce) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5 // a number's
}

func (c *coalesce) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	return newCoalesce(ctx, children...)
}

// Eval is the first non-NULL argument as the result's type.
func (c *coalesce) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	for _, a := range c.Children() {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		v, _, err = c.typ.Convert(ctx, v)
		if d, ok := v.(*apd.Decimal); ok && err == nil {
			// At the type's scale, as MySQL shows it: COALESCE(m, 0) of a
			// DECIMAL(12,2) is 0.00, which DISTINCT and GROUP BY take for
			// the m of 0.00 (the unscaled 0 was a value of its own).
			if dt, ok := c.typ.(sql.DecimalType); ok && d.Exponent != -int32(dt.Scale()) {
				q := new(apd.Decimal)
				scaling := apd.BaseContext.WithPrecision(65) // any MySQL DECIMAL
				if _, err := scaling.Quantize(q, d, -int32(dt.Scale())); err == nil {
					return q, nil
				}
			}
		}
		return v, err
	}
	return nil, nil
}

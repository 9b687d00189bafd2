// Package sqlfunc holds SQL functions and operators as MySQL evaluates them
// where go-mysql-server differs (arithmetic overflow, MOD, ABS, COALESCE,
// STR_TO_DATE, string functions bounded by max_allowed_packet, REGEXP with
// limits, quantified comparisons, window value functions and frames), the
// comparison rules for DECIMAL, DOUBLE, unsigned and NULL operands, and the
// analyzer rules that install them. It knows nothing of tables or sessions.
package sqlfunc

import (
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// go-mysql-server's ABS negates a signed integer in its own Go type, so the
// type's minimum stays negative: ABS of the BIGINT minimum answered
// -9223372036854775808 (MySQL: ERROR 1690), of INT -2147483648 answered
// -2147483648, and SMALLINT -32768 came out clamped to 32767. As MariaDB,
// ABS of a TINYINT, SMALLINT or MEDIUMINT is an INT and of an INT a BIGINT,
// which hold every absolute value; a BIGINT stays one and its minimum fails
// with 1690.

var AbsFunction = sql.Function1{Name: "abs", Fn: func(ctx *sql.Context, e sql.Expression) sql.Expression {
	if !types.IsSigned(e.Type(ctx)) {
		return builtinAbs(ctx, e)
	}
	return &absInteger{UnaryExpressionStub: expression.UnaryExpressionStub{Child: e}}
}}

// builtinAbs is go-mysql-server's ABS, right for every type but the signed
// integers.
func builtinAbs(ctx *sql.Context, e sql.Expression) sql.Expression {
	f, err := builtinFunction("abs").NewInstance(ctx, []sql.Expression{e})
	if err != nil {
		panic(err) // ABS takes one argument, which it was given
	}
	return f
}

// absInteger is ABS of a signed integer.
type absInteger struct {
	expression.UnaryExpressionStub
}

var _ sql.FunctionExpression = (*absInteger)(nil)

func (a *absInteger) FunctionName() string { return "abs" }

func (a *absInteger) Description() string {
	return "returns the absolute value of an expression."
}

// Type is the signed integer type that holds the absolute value of every
// value of the argument's type.
func (a *absInteger) Type(ctx *sql.Context) sql.Type {
	switch a.Child.Type(ctx).Type() {
	case sqltypes.Int8, sqltypes.Int16, sqltypes.Int24:
		return types.Int32
	}
	return types.Int64
}

func (a *absInteger) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := a.Child.Eval(ctx, row)
	if v == nil || err != nil {
		return nil, err
	}
	n, _, err := types.Int64.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	x := n.(int64)
	if x == math.MinInt64 {
		return nil, mysqlerr.New(mysql.ERDataOutOfRange, "BIGINT value is out of range in '%s'", a.String())
	}
	if x < 0 {
		x = -x
	}
	if a.Type(ctx) == types.Int32 {
		return int32(x), nil
	}
	return x, nil
}

func (a *absInteger) String() string { return "abs(" + a.Child.String() + ")" }

func (a *absInteger) IsNullable(ctx *sql.Context) bool { return a.Child.IsNullable(ctx) }

func (a *absInteger) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	return &absInteger{UnaryExpressionStub: expression.UnaryExpressionStub{Child: children[0]}}, nil
}

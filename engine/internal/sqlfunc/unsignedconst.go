package sqlfunc

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// beyondSigned is e, when it is an unsigned integer constant past the
// BIGINT range compared with other, a signed integer, as a DECIMAL(20, 0)
// constant of the same value; e itself otherwise. go-mysql-server compared
// such a pair as doubles, where 9223372036854775807 and
// 9223372036854775808 are one number: id = 9223372036854775808 matched the
// BIGINT maximum, and DELETE ... WHERE id <=> 9223372036854775808 deleted
// it (a random-seed history run, seed ...528). MySQL compares them
// exactly; as a DECIMAL the constant takes decimalCompare's exact path,
// which knows no BIGINT reaches it.
func beyondSigned(ctx *sql.Context, e sql.Expression, other sql.Type) sql.Expression {
	t := e.Type(ctx)
	if !types.IsUnsigned(t) || !types.IsInteger(t) || !types.IsSigned(other) || !isConstant(e) {
		return e
	}
	v, err := e.Eval(ctx, nil)
	if err != nil {
		return e
	}
	u, ok := v.(uint64)
	if !ok || u <= math.MaxInt64 {
		return e
	}
	var d apd.Decimal
	d.Coeff.SetUint64(u)
	return literalOf(ctx, types.MustCreateDecimalType(20, 0), &d)
}

package vecexec

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown/vector"
)

// The exact SUM and AVG (sqlval/exactagg.go) wrap go-mysql-server's Sum and Avg:
// the vector path translates the wrapped aggregate and then hands the
// group's exact sum and count to the wrapper's own result, so both paths
// round and type the DECIMAL the same way. The vector path's sums are
// 128-bit, so no 2^53 bound (ExactFloat) applies to them; values the
// argument's arithmetic cannot hold in 64 bits still stop the run with
// vector.ErrInexact and the row path answers.

// unwrapExact is the go-mysql-server aggregate inside an exact SUM or AVG,
// and the exact aggregate (nil when e is not one).
func unwrapExact(e sql.Expression) (sql.Expression, *sqlval.ExactAgg) {
	if x, ok := e.(*sqlval.ExactAgg); ok {
		return x.Inner, x
	}
	return e, nil
}

// exactValue is the exact aggregate's value for a group whose non-NULL
// arguments sum to v.Sum (unscaled, at the argument's scale).
func (o vecOutput) exactValue(v vector.AggValue) (any, error) {
	if v.Null {
		return nil, nil
	}
	sum := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(o.scaled(v.Sum)), -(o.scale + o.up))
	return o.exact.Result(sum, v.Count)
}

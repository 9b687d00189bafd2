package engine

import (
	"context"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/pushdown"
	"github.com/icesql/icesql/pushdown/vector"
)

// withPrefilter gives the native scan of ctx the aggregate's WHERE clause,
// so that it decodes the other columns only for the rows the clause keeps
// (pushdown/nativeselect.go). The aggregate still evaluates the clause on
// the rows it receives: they all pass it again.
func (v *vectorAggregate) withPrefilter(ctx *sql.Context) *sql.Context {
	n, ok := ctx.Value(nativeKey{}).(pushdown.Native)
	if !ok || v.plan.Filter == nil {
		return ctx
	}
	pred := v.plan.Filter
	n.Select = func() (pushdown.RowSelector, error) { return vector.NewSelector(pred) }
	return ctx.WithContext(context.WithValue(ctx.Context, nativeKey{}, n))
}

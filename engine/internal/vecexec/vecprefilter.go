package vecexec

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/pushdown"
	"github.com/icesql/icesql/pushdown/vector"
)

// withPrefilter gives the native scan of ctx (withNativeDecode) the
// predicate pred of its consumer, so that it decodes the other columns only
// for the rows pred keeps (pushdown/nativeselect.go). The consumer still
// evaluates pred on the rows it receives: they all pass it again. A nil
// pred, or a ctx without native decoding, leaves ctx as it is.
func withPrefilter(ctx *sql.Context, pred vector.Expr) *sql.Context {
	n, ok := ctx.Value(NativeKey{}).(pushdown.Native)
	if !ok || pred == nil {
		return ctx
	}
	n.Select = func() (pushdown.RowSelector, error) {
		s, err := vector.NewSelector(pred)
		if err != nil {
			return nil, err
		}
		return keepInexact{s}, nil
	}
	return ctx.WithContext(context.WithValue(ctx.Context, NativeKey{}, n))
}

// keepInexact is a prefilter's selector: a batch holding a value outside
// what the vector path computes exactly (vector.ErrInexact) keeps all its
// rows, and the consumer, evaluating pred again, meets the value and
// answers the way it does without a prefilter.
type keepInexact struct{ *vector.Selector }

func (k keepInexact) Select(rec arrow.RecordBatch) ([]int32, error) {
	sel, err := k.Selector.Select(rec)
	if !errors.Is(err, vector.ErrInexact) {
		return sel, err
	}
	all := make([]int32, rec.NumRows())
	for i := range all {
		all[i] = int32(i)
	}
	return all, nil
}

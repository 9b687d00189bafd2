package pushdown

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ReadFilter is the row filter to read the planned files with: filter
// weakened so that iceberg-go's Parquet row-group pruning cannot drop a row
// group whose rows match.
//
// iceberg-go v0.7.0 takes a column chunk's Parquet statistics NumValues (the
// non-NULL values) as Iceberg's value count (all values, NULLs included), so
// a row group holding as many NULLs as values looks all-NULL and every
// predicate on that column but IS NULL skips it: after INSERT VALUES (1),
// (NULL), "WHERE id = 1" found nothing. Each predicate P(c) becomes
// "P(c) OR c IS NULL", whose IS NULL side keeps any row group with a NULL
// (decided by the NULL count alone, which is right); IS NOT NULL becomes
// true. NOT is pushed down to the predicates first, since iceberg-go would
// otherwise turn NOT (P OR c IS NULL) back into a predicate it misjudges.
//
// The weakened filter keeps rows the original rejects, which is safe: the
// SQL layer evaluates the whole WHERE clause above every scan (lookup.go,
// pushrule.go). File pruning from manifests uses Iceberg's own counts, which
// are right, so planning keeps the original filter.
//
// A predicate on a DECIMAL column is dropped instead: arrow-go's compute
// kernels panic evaluating "d = 1.50 OR d IS NULL" on a decimal column, so
// those files are read whole and filtered by the SQL layer alone.
func ReadFilter(schema *iceberg.Schema, filter iceberg.BooleanExpression) (iceberg.BooleanExpression, error) {
	noNot, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil, err
	}
	return iceberg.VisitExpr(noNot, nullSafe{schema: schema})
}

// ReadTasks returns tasks ready to read with a ReadFilter scan: a residual
// other than "always true" is dropped, so the scan's (weakened) filter is
// the one applied; a residual that is always true (the partition alone
// satisfies the filter) is kept, so those files are read unfiltered.
func ReadTasks(tasks []table.FileScanTask) []table.FileScanTask {
	out := make([]table.FileScanTask, len(tasks))
	for i, task := range tasks {
		if task.Residual != nil && !task.Residual.Equals(iceberg.AlwaysTrue{}) {
			task.Residual = nil
		}
		out[i] = task
	}
	return out
}

// nullSafe rewrites a filter without NOT as ReadFilter describes.
type nullSafe struct{ schema *iceberg.Schema }

func (nullSafe) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (nullSafe) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (nullSafe) VisitNot(child iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewNot(child)
}
func (nullSafe) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}
func (nullSafe) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}

func (v nullSafe) VisitUnbound(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
	if ref, ok := p.Term().(iceberg.Reference); ok {
		if f, ok := v.schema.FindFieldByName(string(ref)); ok {
			if _, dec := f.Type.(iceberg.DecimalType); dec {
				return iceberg.AlwaysTrue{}
			}
		}
	}
	switch p.Op() {
	case iceberg.OpIsNull:
		return p
	case iceberg.OpNotNull:
		return iceberg.AlwaysTrue{}
	default:
		return iceberg.NewOr(p, iceberg.IsNull(p.Term()))
	}
}

// VisitBound keeps bound predicates: the filters icesql builds are unbound.
func (nullSafe) VisitBound(p iceberg.BoundPredicate) iceberg.BooleanExpression { return p }

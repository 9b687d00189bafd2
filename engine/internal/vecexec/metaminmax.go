package vecexec

import (
	"time"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// MinMaxFromMetadata answers SELECT MIN(c), MAX(c), COUNT(*) ... FROM t,
// with no filter and no GROUP BY, from the data files' column bounds in the
// manifests, when those bounds are exact: numeric, date and timestamp
// columns (string and binary bounds may be truncated), every file with
// values has bounds, no NaN (SQL would order it above every number), and
// no delete files (the bounds would still count deleted rows).
func MinMaxFromMetadata(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		agg, ok := n.(*plan.GroupBy)
		if !ok || len(agg.GroupByExprs) != 0 || len(agg.SelectDeps) == 0 {
			return n, transform.SameTree, nil
		}
		_, t, rows, ok := countedTable(agg)
		if !ok {
			return n, transform.SameTree, nil
		}
		var out []sql.Expression
		var bounds *FileBoundSet
		for _, dep := range agg.SelectDeps {
			e, name := dep, dep.String()
			if alias, isAlias := dep.(*expression.Alias); isAlias {
				e, name = alias.Child, alias.Name()
			}
			var lit sql.Expression
			var id sql.ColumnId
			switch a := e.(type) {
			case *aggregation.Count:
				if !countsRows(a) {
					return n, transform.SameTree, nil
				}
				lit, id = expression.NewLiteral(int64(rows), a.Type(ctx)), a.Id()
			case *aggregation.Min, *aggregation.Max:
				_, isMax := a.(*aggregation.Max)
				gf, isField := a.Children()[0].(*expression.GetField)
				if !isField {
					return n, transform.SameTree, nil
				}
				if bounds == nil {
					var err error
					if bounds, err = t.FileBounds(ctx); err != nil || bounds == nil {
						return n, transform.SameTree, err
					}
				}
				v, ok := bounds.Extreme(t, gf.Name(), isMax)
				if !ok {
					return n, transform.SameTree, nil
				}
				v = t.InSessionZone(ctx, gf.Name(), v) // sqlval/timezone.go
				lit, id = expression.NewLiteral(v, a.Type(ctx)), a.(sql.IdExpression).Id()
			default:
				return n, transform.SameTree, nil
			}
			out = append(out, expression.NewAlias(ctx, name, lit).WithId(id))
		}
		return plan.NewProject(ctx, out, plan.NewResolvedDualTable()), transform.NewTree, nil
	})
}

// fileBounds is the column metadata of every data file a scan of the table
// plans.
type FileBoundSet struct {
	Files []iceberg.DataFile
}

// Extreme is the least (or greatest) value of column name over all files,
// nil when every value is NULL; ok is false when the bounds cannot say.
func (fb *FileBoundSet) Extreme(t ScanTable, name string, greatest bool) (any, bool) {
	f, ok := t.Iceberg().Schema().FindFieldByNameCaseInsensitive(name)
	if !ok {
		return nil, false
	}
	switch f.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type,
		iceberg.DecimalType, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
	default:
		return nil, false
	}
	_, isFloat := f.Type.(iceberg.Float32Type)
	if _, ok := f.Type.(iceberg.Float64Type); ok {
		isFloat = true
	}
	var best iceberg.Literal
	for _, df := range fb.Files {
		values, nulls := df.ValueCounts()[f.ID], df.NullValueCounts()[f.ID]
		if _, ok := df.ValueCounts()[f.ID]; !ok {
			return nil, false
		}
		if _, ok := df.NullValueCounts()[f.ID]; !ok {
			return nil, false
		}
		if values == nulls {
			continue // only NULLs
		}
		if isFloat {
			nan, ok := df.NaNValueCounts()[f.ID]
			if !ok || nan != 0 {
				return nil, false
			}
		}
		raw := df.LowerBoundValues()[f.ID]
		if greatest {
			raw = df.UpperBoundValues()[f.ID]
		}
		if raw == nil {
			return nil, false
		}
		lit, err := iceberg.LiteralFromBytes(f.Type, raw)
		if err != nil {
			return nil, false
		}
		if best == nil || better(lit, best, greatest) {
			best = lit
		}
	}
	if best == nil {
		return nil, true
	}
	return sqlValue(best)
}

func better(a, b iceberg.Literal, greatest bool) bool {
	c := compareLiterals(a, b)
	if greatest {
		return c > 0
	}
	return c < 0
}

func compareLiterals(a, b iceberg.Literal) int {
	switch a := a.(type) {
	case iceberg.Int32Literal:
		return a.Comparator()(int32(a), int32(b.(iceberg.Int32Literal)))
	case iceberg.Int64Literal:
		return a.Comparator()(int64(a), int64(b.(iceberg.Int64Literal)))
	case iceberg.Float32Literal:
		return a.Comparator()(float32(a), float32(b.(iceberg.Float32Literal)))
	case iceberg.Float64Literal:
		return a.Comparator()(float64(a), float64(b.(iceberg.Float64Literal)))
	case iceberg.DecimalLiteral:
		return a.Comparator()(iceberg.Decimal(a), iceberg.Decimal(b.(iceberg.DecimalLiteral)))
	case iceberg.DateLiteral:
		return a.Comparator()(iceberg.Date(a), iceberg.Date(b.(iceberg.DateLiteral)))
	case iceberg.TimestampLiteral:
		return a.Comparator()(iceberg.Timestamp(a), iceberg.Timestamp(b.(iceberg.TimestampLiteral)))
	}
	return 0
}

// sqlValue is the Go value a scan would give for the literal (rowValue in
// sqlval/types.go).
func sqlValue(l iceberg.Literal) (any, bool) {
	switch l := l.(type) {
	case iceberg.Int32Literal:
		return int32(l), true
	case iceberg.Int64Literal:
		return int64(l), true
	case iceberg.Float32Literal:
		return float32(l), true
	case iceberg.Float64Literal:
		return float64(l), true
	case iceberg.DecimalLiteral:
		return sqlval.DecimalValue(l.Val.BigInt(), int32(l.Scale)), true
	case iceberg.DateLiteral:
		return time.Unix(int64(l)*86400, 0).UTC(), true
	case iceberg.TimestampLiteral:
		return time.UnixMicro(int64(l)).UTC(), true
	}
	return nil, false
}

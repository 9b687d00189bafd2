package engine

import (
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// go-mysql-server's UNION, INTERSECT and EXCEPT (plan.SetOp) give wrong
// rows in two ways that fixSetOps repairs until go-mysql-server does
// (upstream: planbuilder/set_op.go mergeSetOpSchemas, rowexec/rel.go
// buildSetOp):
//   - decimals of different scales merge into a DECIMAL of no declared
//     scale, each value keeping its own (setOpDecimals);
//   - OFFSET skips rows before they are sorted (rowexec/rel.go
//     buildSetOp), so with a(x) holding 1, 2, 3 "(SELECT x FROM a) UNION
//     ALL (SELECT x FROM a) ORDER BY x LIMIT 2 OFFSET 3" gave 1, 2 where
//     MySQL gives 2, 3 (setOpOffset).
func fixSetOps(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.SetOp)
		if !ok {
			return n, transform.SameTree, nil
		}
		same := transform.SameTree
		next, err := setOpDecimals(ctx, s)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if next != s {
			s, same = next, transform.NewTree
		}
		if out, moved := setOpOffset(s); moved {
			return out, transform.NewTree, nil
		}
		return s, same, nil
	})
}

// setOpOffset moves the sort, offset and limit of a SetOp with ORDER BY
// and OFFSET above it, in that order.
func setOpOffset(s *plan.SetOp) (sql.Node, bool) {
	if s.Offset == nil || len(s.SortConditions) == 0 {
		return s, false
	}
	bare := *s
	bare.Limit, bare.Offset, bare.SortConditions = nil, nil, nil
	var out sql.Node = plan.NewOffset(s.Offset, plan.NewSort(s.SortConditions, &bare))
	if s.Limit != nil {
		out = plan.NewLimit(s.Limit, out)
	}
	return out, true
}

// setOpDecimals gives a column that UNION, INTERSECT or EXCEPT merges
// from decimals of different scales MySQL's type: DECIMAL(p, s) with s the
// largest scale and p-s the most integer digits of the sides (integers
// count their digits, scale 0). go-mysql-server converts both sides to a
// DECIMAL of no declared precision (planbuilder/set_op.go
// mergeSetOpSchemas), and every value keeps its own scale: DECIMAL(10,1)
// UNION DECIMAL(10,3) gave 1.5 beside 1.250, where MySQL gives 1.500.
func setOpDecimals(ctx *sql.Context, s *plan.SetOp) (*plan.SetOp, error) {
	lp, lok := s.Left().(*plan.Project)
	rp, rok := s.Right().(*plan.Project)
	if !lok || !rok || len(lp.Projections) != len(rp.Projections) {
		return s, nil
	}
	left, right := slices.Clone(lp.Projections), slices.Clone(rp.Projections)
	changed := false
	for i := range left {
		lc, lin := decimalConvert(ctx, left[i])
		rc, rin := decimalConvert(ctx, right[i])
		if lc == nil || rc == nil {
			continue
		}
		lint, lscale, lok := digits(lin)
		rint, rscale, rok := digits(rin)
		if !lok || !rok {
			continue
		}
		scale := min(max(lscale, rscale), types.DecimalTypeMaxScale)
		precision := min(max(lint, rint)+scale, types.DecimalTypeMaxPrecision)
		left[i] = expression.NewAlias(ctx, left[i].(*expression.Alias).Name(), expression.NewConvertWithLengthAndScale(lc.Child, expression.ConvertToDecimal, precision, scale))
		right[i] = expression.NewAlias(ctx, right[i].(*expression.Alias).Name(), expression.NewConvertWithLengthAndScale(rc.Child, expression.ConvertToDecimal, precision, scale))
		changed = true
	}
	if !changed {
		return s, nil
	}
	out, err := s.WithChildren(ctx, plan.NewProject(ctx, left, lp.Child), plan.NewProject(ctx, right, rp.Child))
	if err != nil {
		return nil, err
	}
	return out.(*plan.SetOp), nil
}

// decimalConvert is the conversion to DECIMAL that mergeSetOpSchemas put
// in a projection (an alias of it), and the type it converts from.
func decimalConvert(ctx *sql.Context, e sql.Expression) (*expression.Convert, sql.Type) {
	a, ok := e.(*expression.Alias)
	if !ok {
		return nil, nil
	}
	c, ok := a.Child.(*expression.Convert)
	if !ok || !types.IsDecimal(c.Type(ctx)) {
		return nil, nil
	}
	return c, c.Child.Type(ctx)
}

// digits are the integer digits and the scale of a decimal or integer type.
func digits(t sql.Type) (intDigits, scale int, ok bool) {
	if d, isDec := t.(sql.DecimalType); isDec && types.IsDecimal(t) {
		return int(d.Precision()) - int(d.Scale()), int(d.Scale()), true
	}
	if !types.IsInteger(t) {
		return 0, 0, false
	}
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8:
		return 3, 0, true
	case sqltypes.Int16, sqltypes.Uint16:
		return 5, 0, true
	case sqltypes.Int24, sqltypes.Uint24:
		return 8, 0, true
	case sqltypes.Int32, sqltypes.Uint32:
		return 10, 0, true
	case sqltypes.Uint64:
		return 20, 0, true
	}
	return 19, 0, true
}

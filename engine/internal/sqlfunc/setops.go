package sqlfunc

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
//   - numbers of different types merge into other types than MySQL's
//     (setOpNumbers);
//   - OFFSET skips rows before they are sorted (rowexec/rel.go
//     buildSetOp), so with a(x) holding 1, 2, 3 "(SELECT x FROM a) UNION
//     ALL (SELECT x FROM a) ORDER BY x LIMIT 2 OFFSET 3" gave 1, 2 where
//     MySQL gives 2, 3 (setOpOffset);
//   - ORDER BY compares with the type of the left side's column, not the
//     merged one, so INT UNION DECIMAL sorted 3.25 as 3, a tie with 3
//     (setOpSortTypes; planbuilder/set_op.go buildSetOp builds the sort
//     fields from the left scope before mergeSetOpSchemas).
func FixSetOps(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.SetOp)
		if !ok {
			return n, transform.SameTree, nil
		}
		same := transform.SameTree
		next, err := setOpNumbers(ctx, s)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if next != s {
			s, same = next, transform.NewTree
		}
		if next, err = setOpSortTypes(ctx, s); err != nil {
			return nil, transform.SameTree, err
		} else if next != s {
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

// setOpSortTypes gives the columns that the sort fields of s read the
// merged types of the set operation's schema.
func setOpSortTypes(ctx *sql.Context, s *plan.SetOp) (*plan.SetOp, error) {
	if len(s.SortConditions) == 0 {
		return s, nil
	}
	schema := s.Schema(ctx)
	// Until execution indexes are assigned, a sort field's GetField names
	// the column by id: those of the left side's columns, in schema order.
	ordinal := map[sql.ColumnId]int{}
	for i, id := range leftColumnIds(s) {
		if _, dup := ordinal[id]; id != 0 && !dup {
			ordinal[id] = i
		}
	}
	fields := slices.Clone(s.SortConditions)
	changed := false
	for i, f := range fields {
		col, same, err := transform.Expr(ctx, f.Expr, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			gf, ok := e.(*expression.GetField)
			if !ok {
				return e, transform.SameTree, nil
			}
			at, ok := ordinal[gf.Id()]
			if !ok || at >= len(schema) || gf.Type(ctx).Equals(schema[at].Type) {
				return e, transform.SameTree, nil
			}
			c := schema[at]
			retyped := expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), c.Type, gf.Database(), gf.Table(), gf.Name(), c.Nullable)
			return retyped.WithId(gf.Id()), transform.NewTree, nil
		})
		if err != nil {
			return nil, err
		}
		if same == transform.NewTree {
			fields[i].Expr, changed = col, true
		}
	}
	if !changed {
		return s, nil
	}
	out := *s
	out.SortConditions = fields
	return &out, nil
}

// leftColumnIds are the column ids of the rows a set operation's left
// side projects (0 where a column has none), seen through the conversions
// mergeSetOpSchemas and setOpNumbers wrap them in.
func leftColumnIds(s *plan.SetOp) []sql.ColumnId {
	var n sql.Node = s
	for {
		switch next := n.(type) {
		case *plan.SetOp:
			n = next.Left()
			continue
		case *plan.Project:
			ids := make([]sql.ColumnId, len(next.Projections))
			for i, e := range next.Projections {
				ids[i] = projectedId(e)
			}
			return ids
		}
		return nil
	}
}

// projectedId is the column id of a projected expression, through
// unnamed aliases and conversions.
func projectedId(e sql.Expression) sql.ColumnId {
	for {
		if ide, ok := e.(sql.IdExpression); ok && ide.Id() != 0 {
			return ide.Id()
		}
		switch x := e.(type) {
		case *expression.Alias:
			e = x.Child
		case *expression.Convert:
			e = x.Child
		default:
			return 0
		}
	}
}

// setOpNumbers gives a column that UNION, INTERSECT or EXCEPT merges
// from numbers of different types MySQL's type, where go-mysql-server's
// differs (planbuilder/set_op.go mergeSetOpSchemas converts both sides
// to expression.GetConvertToType):
//   - decimals of different scales merge into DECIMAL(p, s) with s the
//     largest scale and p-s the most integer digits of the sides (integers
//     count their digits, scale 0); go-mysql-server converts both to a
//     DECIMAL of no declared precision, and every value keeps its own
//     scale: DECIMAL(10,1) UNION DECIMAL(10,3) gave 1.5 beside 1.250,
//     where MySQL gives 1.500;
//   - a FLOAT or DOUBLE with another number type merges into DOUBLE;
//     go-mysql-server converts INT with DOUBLE, or FLOAT with DOUBLE (a
//     widened column), to text, which sorts 10 before 2, and DECIMAL with
//     DOUBLE to DECIMAL.
//
// A side that is itself a set operation (a UNION b UNION c) gets the
// conversion in each of its branches: go-mysql-server planned the outer
// one with the inner one's type before this rule fixed it, and refused the
// mismatch (ERROR 1105 "the schema of the left side of union does not
// match the right side").
func setOpNumbers(ctx *sql.Context, s *plan.SetOp) (*plan.SetOp, error) {
	left, right := s.Left(), s.Right()
	n := len(left.Schema(ctx))
	if n != len(right.Schema(ctx)) {
		return s, nil
	}
	changed := false
	for i := range n {
		lt, rt := mergedType(ctx, left, i), mergedType(ctx, right, i)
		if lt == nil || rt == nil || !types.IsNumber(lt) || !types.IsNumber(rt) {
			continue
		}
		var convert func(sql.Expression) sql.Expression
		switch {
		case types.IsFloat(lt) || types.IsFloat(rt):
			if lt.Equals(rt) {
				continue
			}
			convert = func(e sql.Expression) sql.Expression { return expression.NewConvert(e, expression.ConvertToDouble) }
		case types.IsDecimal(lt) || types.IsDecimal(rt):
			lint, lscale, lok := digits(lt)
			rint, rscale, rok := digits(rt)
			if !lok || !rok {
				continue
			}
			scale := min(max(lscale, rscale), types.DecimalTypeMaxScale)
			precision := min(max(lint, rint)+scale, types.DecimalTypeMaxPrecision)
			convert = func(e sql.Expression) sql.Expression {
				return expression.NewConvertWithLengthAndScale(e, expression.ConvertToDecimal, precision, scale)
			}
		default:
			continue
		}
		want := convert(expression.NewLiteral(nil, lt)).Type(ctx)
		if left.Schema(ctx)[i].Type.Equals(want) && right.Schema(ctx)[i].Type.Equals(want) {
			continue
		}
		l, lok := convertColumn(ctx, left, i, convert)
		r, rok := convertColumn(ctx, right, i, convert)
		if !lok || !rok {
			continue
		}
		left, right, changed = l, r, true
	}
	if !changed {
		return s, nil
	}
	out, err := s.WithChildren(ctx, left, right)
	if err != nil {
		return nil, err
	}
	return out.(*plan.SetOp), nil
}

// mergedType is the type column i of a set operation's side had before
// mergeSetOpSchemas converted it; nil when unknown.
func mergedType(ctx *sql.Context, n sql.Node, i int) sql.Type {
	switch n := n.(type) {
	case *plan.Project:
		if i >= len(n.Projections) {
			return nil
		}
		if c, child := mergeConvert(n.Projections[i]); c != nil {
			return child.Type(ctx)
		}
		return n.Projections[i].Type(ctx)
	case *plan.SetOp:
		return n.Schema(ctx)[i].Type
	}
	return nil
}

// convertColumn converts column i of a set operation's side with convert,
// in place of mergeSetOpSchemas's conversion; false when the side is
// neither a projection nor a set operation of projections.
func convertColumn(ctx *sql.Context, n sql.Node, i int, convert func(sql.Expression) sql.Expression) (sql.Node, bool) {
	switch n := n.(type) {
	case *plan.Project:
		if i >= len(n.Projections) {
			return n, false
		}
		p := n.Projections[i]
		name := p.String()
		if nm, ok := p.(sql.Nameable); ok {
			name = nm.Name()
		}
		if _, child := mergeConvert(p); child != nil {
			p = child
		}
		projections := slices.Clone(n.Projections)
		projections[i] = expression.NewAlias(ctx, name, convert(p))
		return plan.NewProject(ctx, projections, n.Child), true
	case *plan.SetOp:
		l, lok := convertColumn(ctx, n.Left(), i, convert)
		r, rok := convertColumn(ctx, n.Right(), i, convert)
		if !lok || !rok {
			return n, false
		}
		out, err := n.WithChildren(ctx, l, r)
		return out, err == nil
	}
	return n, false
}

// mergeConvert is the conversion that mergeSetOpSchemas put in a
// projection (an alias of it), and the expression it converts.
func mergeConvert(e sql.Expression) (*expression.Convert, sql.Expression) {
	a, ok := e.(*expression.Alias)
	if !ok {
		return nil, nil
	}
	c, ok := a.Child.(*expression.Convert)
	if !ok {
		return nil, nil
	}
	return c, c.Child
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

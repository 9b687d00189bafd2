package sqlfunc

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL compares a DECIMAL with an exact number (DECIMAL or integer)
// exactly, and with a DOUBLE or a string as doubles. go-mysql-server rounds
// instead, in two places:
//
//   - While binding, typeExpandComparisonLiteral converts a decimal literal
//     compared with a column to the column's type: with d DECIMAL(18,2)
//     holding 2.50, d > 2.499 became d > 2.50 (false) and d = 2.501 became
//     d = 2.50 (true), pushed to Iceberg so too.
//   - At run time castLeftAndRight converts both sides to the left side's
//     DECIMAL type when either is a DECIMAL, which rounds the other side to
//     the left's scale (a table column's or a CAST's type rounds; SUM's
//     type too), and compares a DOUBLE or a string as a DECIMAL.
//
// The parser wraps every decimal literal of a comparison, BETWEEN or IN in
// CAST(literal AS DECIMAL(65, its scale)), a type other than the literal's,
// so binding keeps the CAST and cannot round (go-mysql-server drops a CAST
// to the literal's own type); in a BETWEEN with a DOUBLE literal, which
// MySQL compares as doubles, each number literal in a CAST to DOUBLE.
// mysqlComparison then makes each comparison
// exact (see there). It runs where mysqlOperation does (overflow.go): in
// the analyzer rule, and in the exec builder for the plans of
// go-mysql-server's short rule sets; and in the pushdown translator, which
// sees those plans' filters before either, and in EXPLAIN.

// DecimalLiterals wraps the decimal literals compared in stmt in a CAST to
// DECIMAL(65, their scale). Of DDL, only the SELECT of CREATE VIEW and of
// CREATE TABLE ... AS SELECT: a view keeps the text it was written with,
// and is parsed again, by this parser, where it is read.
func DecimalLiterals(stmt ast.Statement) {
	if ex, ok := stmt.(*ast.Explain); ok {
		stmt = ex.Statement
	}
	if ddl, ok := stmt.(*ast.DDL); ok {
		switch {
		case ddl.ViewSpec != nil:
			stmt = ddl.ViewSpec.ViewExpr
		case ddl.OptSelect != nil:
			stmt = ddl.OptSelect.Select
		default:
			return
		}
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		replaceTypedLaterBetweens(n, uniformBetween) // betweenmixed.go
		switch n := n.(type) {
		case *ast.ComparisonExpr:
			n.Left, n.Right = castDecimal(n.Left), castDecimal(n.Right)
			if tuple, ok := n.Right.(ast.ValTuple); ok {
				for i := range tuple {
					tuple[i] = castDecimal(tuple[i])
				}
			}
		case *ast.RangeCond:
			uniformBetween(n)
		}
		return true, nil
	}, stmt)
}

// uniformBetween wraps the number literals of a BETWEEN: in a CAST to
// DOUBLE when one is a DOUBLE, else the decimal ones as castDecimal does.
func uniformBetween(n *ast.RangeCond) {
	if doubleLiteral(n.Left) || doubleLiteral(n.From) || doubleLiteral(n.To) {
		// BETWEEN compares its three operands in one type, a DOUBLE
		// here; go-mysql-server splits it into two comparisons
		// (simplifyFilters), each typed alone.
		n.Left, n.From, n.To = castDouble(n.Left), castDouble(n.From), castDouble(n.To)
		return
	}
	n.Left, n.From, n.To = castDecimal(n.Left), castDecimal(n.From), castDecimal(n.To)
}

// castDecimal is e in a CAST that keeps its digits when e is a decimal
// literal (digits with a point, no exponent: 1e3 is a DOUBLE), else e.
func castDecimal(e ast.Expr) ast.Expr {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.FloatVal {
		return e
	}
	text := string(v.Val)
	whole, frac, point := strings.Cut(text, ".")
	if !point || strings.ContainsAny(text, "eE") {
		return e
	}
	digits := len(strings.TrimLeft(whole, "0")) + len(frac)
	if len(frac) > types.DecimalTypeMaxScale || digits > types.DecimalTypeMaxPrecision {
		return e // go-mysql-server reads it as a DOUBLE anyway
	}
	return &ast.ConvertExpr{Name: "CAST", Expr: v, Type: &ast.ConvertType{
		Type:   "decimal",
		Length: ast.NewIntVal([]byte(strconv.Itoa(types.DecimalTypeMaxPrecision))),
		Scale:  ast.NewIntVal([]byte(strconv.Itoa(len(frac)))),
	}}
}

// doubleLiteral says e is a DOUBLE literal: digits with an exponent.
func doubleLiteral(e ast.Expr) bool {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Operator == "-" {
		e = u.Expr
	}
	v, ok := e.(*ast.SQLVal)
	return ok && v.Type == ast.FloatVal && strings.ContainsAny(string(v.Val), "eE")
}

// castDouble is e in a CAST to DOUBLE when e is an integer or decimal
// literal, else e.
func castDouble(e ast.Expr) ast.Expr {
	v, ok := e.(*ast.SQLVal)
	if !ok || (v.Type != ast.IntVal && v.Type != ast.FloatVal) || doubleLiteral(v) {
		return e
	}
	return &ast.ConvertExpr{Name: "CAST", Expr: v, Type: &ast.ConvertType{Type: "double"}}
}

// cmpOp is a comparison operator.
type cmpOp int

const (
	opEQ  cmpOp = iota // =
	opNSE              // <=>
	opLT               // <
	opLE               // <=
	opGT               // >
	opGE               // >=
)

// comparisonOf takes e apart when it is a comparison.
func comparisonOf(e sql.Expression) (op cmpOp, l, r sql.Expression, ok bool) {
	switch e := e.(type) {
	case *expression.Equals:
		return opEQ, e.Left(), e.Right(), true
	case *expression.NullSafeEquals:
		return opNSE, e.Left(), e.Right(), true
	case *expression.LessThan:
		return opLT, e.Left(), e.Right(), true
	case *expression.LessThanOrEqual:
		return opLE, e.Left(), e.Right(), true
	case *expression.GreaterThan:
		return opGT, e.Left(), e.Right(), true
	case *expression.GreaterThanOrEqual:
		return opGE, e.Left(), e.Right(), true
	}
	return 0, nil, nil, false
}

func newComparison(op cmpOp, l, r sql.Expression) sql.Expression {
	switch op {
	case opEQ:
		return expression.NewEquals(l, r)
	case opNSE:
		return expression.NewNullSafeEquals(l, r)
	case opLT:
		return expression.NewLessThan(l, r)
	case opLE:
		return expression.NewLessThanOrEqual(l, r)
	case opGT:
		return expression.NewGreaterThan(l, r)
	}
	return expression.NewGreaterThanOrEqual(l, r)
}

// mirror is the operator with its operands swapped: a < b is b > a.
func (op cmpOp) mirror() cmpOp {
	switch op {
	case opLT:
		return opGT
	case opLE:
		return opGE
	case opGT:
		return opLT
	case opGE:
		return opLE
	}
	return op
}

// mysqlComparison is e as MySQL compares, when go-mysql-server would
// compare it otherwise: e is a comparison, IN or BETWEEN with a DECIMAL
// operand.
//
//   - A column compared with a constant it cannot hold (more digits after
//     the point, or beyond its range) becomes an exact comparison with a
//     bound at the column's scale (d > 2.499 is d > 2.49, d >= 2.491 is
//     d >= 2.50), or a comparison that is always or never true and stays
//     NULL for a NULL column (d = 2.501 is d <> d). Iceberg and the vector
//     path can evaluate those.
//   - A DECIMAL compared with a DOUBLE or a string is compared as a DOUBLE.
//   - Any other DECIMAL is compared in a type that does not round.
func mysqlComparison(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	if r, ok := rowComparison(ctx, e); ok { // rowcompare.go
		return r, true
	}
	switch e := e.(type) {
	case *expression.InTuple:
		return inAsMySQL(ctx, e.Left(), e.Right()) // mixedin.go
	case *expression.HashInTuple:
		return inAsMySQL(ctx, e.Left(), e.Right())
	case *expression.Between:
		return decimalBetween(ctx, e)
	case *expression.Not:
		// NOT of never(x), from x <> c, is x = x.
		if inner, ok := e.Child.(*expression.Not); ok {
			if x, ok := SelfEquality(inner.Child); ok {
				return expression.NewEquals(x, x), true
			}
		}
		return nil, false
	}
	op, l, r, ok := comparisonOf(e)
	if !ok {
		return nil, false
	}
	lt, rt := l.Type(ctx), r.Type(ctx)
	return decimalCompare(ctx, op, beyondSigned(ctx, l, rt), beyondSigned(ctx, r, lt)) // unsignedconst.go
}

// ExactComparisons is e with mysqlComparison applied throughout.
func ExactComparisons(ctx *sql.Context, e sql.Expression) sql.Expression {
	out, _, err := transform.Expr(ctx, e, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if m, ok := mysqlComparison(ctx, e); ok {
			return m, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
	if err != nil {
		return e
	}
	return out
}

func decimalCompare(ctx *sql.Context, op cmpOp, l, r sql.Expression) (sql.Expression, bool) {
	lt, rt := l.Type(ctx), r.Type(ctx)
	if !types.IsDecimal(lt) && !types.IsDecimal(rt) {
		return nil, false
	}
	if comparedAsDouble(lt, rt) {
		return doubleComparison(ctx, op, l, r), true
	}
	if !exactNumber(lt) || !exactNumber(rt) {
		return nil, false
	}
	if isColumn(l) {
		if c, ok := decimalConstant(ctx, r); ok {
			return bound(ctx, op, l, r, c)
		}
	}
	if isColumn(r) {
		if c, ok := decimalConstant(ctx, l); ok {
			return bound(ctx, op.mirror(), r, l, c)
		}
	}
	if nl, ok := unrounded(ctx, l, scaleOf(rt)); ok {
		return newComparison(op, nl, r), true
	}
	return nil, false
}

// decimalIn is x IN (list) compared exactly.
func decimalIn(ctx *sql.Context, x, list sql.Expression) (sql.Expression, bool) {
	tuple, ok := list.(expression.Tuple)
	if !ok {
		return nil, false
	}
	if inexact(x.Type(ctx)) {
		// A DOUBLE or a string compares with a DECIMAL as a DOUBLE.
		doubles, changed := make(expression.Tuple, len(tuple)), false
		for i, el := range tuple {
			doubles[i] = asDouble(ctx, el)
			changed = changed || doubles[i] != el
		}
		if !changed {
			return nil, false
		}
		return expression.NewInTuple(x, doubles), true
	}
	if !exactNumber(x.Type(ctx)) {
		return nil, false
	}
	if types.IsDecimal(x.Type(ctx)) {
		if out, ok := decimalInDoubles(ctx, x, tuple); ok {
			return out, true
		}
	}
	if isColumn(x) {
		if out, changed, ok := columnIn(ctx, x, tuple); ok {
			return out, changed
		}
	}
	// IN compares x with each element in x's type.
	scale := int32(-1)
	for _, el := range tuple {
		if t := el.Type(ctx); exactNumber(t) {
			scale = max(scale, scaleOf(t))
		}
	}
	if nx, ok := unrounded(ctx, x, scale); ok {
		return expression.NewInTuple(nx, tuple), true
	}
	return nil, false
}

// columnIn is column IN (constants) with the constants the column can hold
// at its type, or ok false when an element is not a constant or not an
// exact number.
func columnIn(ctx *sql.Context, x sql.Expression, tuple expression.Tuple) (out sql.Expression, changed, ok bool) {
	xt := x.Type(ctx)
	kept := make(expression.Tuple, 0, len(tuple))
	for _, el := range tuple {
		t := el.Type(ctx)
		if t == types.Null || types.IsInteger(t) && isConstant(el) {
			kept = append(kept, el)
			continue
		}
		c, isConst := decimalConstant(ctx, el)
		if !isConst {
			return nil, false, false
		}
		if lit, isLit := el.(*expression.Literal); isLit && types.TypesEqual(lit.Type(ctx), xt) {
			kept = append(kept, el)
			continue
		}
		changed = true
		if c == nil {
			kept = append(kept, expression.NewLiteral(nil, types.Null))
			continue
		}
		if lit, fits := exactLiteral(ctx, xt, c); fits {
			kept = append(kept, lit)
		}
	}
	if !changed {
		return nil, false, true
	}
	if len(kept) == 0 {
		return never(x), true, true
	}
	return expression.NewInTuple(x, kept), true, true
}

// decimalBetween is val BETWEEN lower AND upper compared exactly, or as
// doubles when MySQL compares so (doublecompare.go). (go-mysql-server
// evaluates it as lower <= val AND upper >= val.)
func decimalBetween(ctx *sql.Context, b *expression.Between) (sql.Expression, bool) {
	if betweenAsDoubles(ctx, b) {
		lo := doubleComparison(ctx, opLE, b.Lower, b.Val)
		hi := doubleComparison(ctx, opGE, b.Upper, b.Val)
		if from, ok := boundOf(lo, opLE, b.Val); ok {
			if to, ok := boundOf(hi, opGE, b.Val); ok {
				return expression.NewBetween(b.Val, from, to), true
			}
		}
		return expression.NewAnd(lo, hi), true
	}
	lo, loChanged := decimalCompare(ctx, opLE, b.Lower, b.Val)
	hi, hiChanged := decimalCompare(ctx, opGE, b.Upper, b.Val)
	if !loChanged && !hiChanged {
		return nil, false
	}
	if !loChanged {
		lo = expression.NewLessThanOrEqual(b.Lower, b.Val)
	}
	if !hiChanged {
		hi = expression.NewGreaterThanOrEqual(b.Upper, b.Val)
	}
	// Kept as a BETWEEN when both sides became bounds of one column.
	if from, ok := boundOf(lo, opLE, b.Val); ok {
		if to, ok := boundOf(hi, opGE, b.Val); ok {
			return expression.NewBetween(b.Val, from, to), true
		}
	}
	return expression.NewAnd(lo, hi), true
}

// boundOf is c's literal when c is `literal op x` or its mirror.
func boundOf(c sql.Expression, op cmpOp, x sql.Expression) (sql.Expression, bool) {
	o, l, r, ok := comparisonOf(c)
	if !ok {
		return nil, false
	}
	if o == op.mirror() && r != x {
		o, l, r = op, r, l
	}
	if _, isLit := l.(*expression.Literal); !isLit || o != op || r != x {
		return nil, false
	}
	return l, true
}

// bound is `x op c` for a column x and a decimal constant c (given as
// expression ce): at x's scale and within x's range, or a form always or
// never true. x NULL keeps it NULL, as the comparison was.
func bound(ctx *sql.Context, op cmpOp, x, ce sql.Expression, c *apd.Decimal) (sql.Expression, bool) {
	xt := x.Type(ctx)
	if lit, ok := ce.(*expression.Literal); ok && types.TypesEqual(lit.Type(ctx), xt) {
		return nil, false // already at x's type
	}
	if c == nil {
		return nil, false // NULL: the comparison is NULL (or <=> decides) as it is
	}
	scale := -scaleOf(xt)
	floor, ceil := quantize(c, scale, apd.RoundFloor), quantize(c, scale, apd.RoundCeiling)
	lo, hi := rangeOf(xt)
	switch op {
	case opEQ, opNSE:
		if lit, ok := exactLiteral(ctx, xt, c); ok {
			return newComparison(op, x, lit), true
		}
		if op == opNSE {
			return expression.NewLiteral(false, types.Boolean), true
		}
		return never(x), true
	case opGT, opLE: // x > c is x > floor(c); x <= c is x <= floor(c)
		switch {
		case floor.Cmp(hi) >= 0:
			return always(x, op == opLE), true
		case floor.Cmp(lo) < 0:
			return always(x, op == opGT), true
		}
		return newComparison(op, x, literalOf(ctx, xt, floor)), true
	default: // x < c is x < ceil(c); x >= c is x >= ceil(c)
		switch {
		case ceil.Cmp(hi) > 0:
			return always(x, op == opLT), true
		case ceil.Cmp(lo) <= 0:
			return always(x, op == opGE), true
		}
		return newComparison(op, x, literalOf(ctx, xt, ceil)), true
	}
}

// always is TRUE for every non-NULL x when holds, else FALSE; NULL for a
// NULL x either way: x = x, or x <> x.
func always(x sql.Expression, holds bool) sql.Expression {
	if holds {
		return expression.NewEquals(x, x)
	}
	return never(x)
}

func never(x sql.Expression) sql.Expression {
	return expression.NewNot(expression.NewEquals(x, x))
}

// SelfEquality is x when e is x = x for a column x (see always).
func SelfEquality(e sql.Expression) (sql.Expression, bool) {
	eq, ok := e.(*expression.Equals)
	if !ok || !isColumn(eq.Left()) || eq.Left() != eq.Right() {
		return nil, false
	}
	return eq.Left(), true
}

// exactLiteral is c as a literal of type t, when t holds it exactly.
func exactLiteral(ctx *sql.Context, t sql.Type, c *apd.Decimal) (sql.Expression, bool) {
	q := quantize(c, -scaleOf(t), apd.RoundFloor)
	lo, hi := rangeOf(t)
	if q.Cmp(c) != 0 || q.Cmp(lo) < 0 || q.Cmp(hi) > 0 {
		return nil, false
	}
	return literalOf(ctx, t, q), true
}

// literalOf is v, which type t holds, as a literal of t.
func literalOf(ctx *sql.Context, t sql.Type, v *apd.Decimal) sql.Expression {
	var val any = v
	if types.IsInteger(t) {
		if types.IsUnsigned(t) {
			u, _ := strconv.ParseUint(v.Text('f'), 10, 64)
			val = u
		} else {
			i, _ := v.Int64()
			val = i
		}
	}
	converted, _, err := t.Convert(ctx, val)
	if err != nil {
		converted = val
	}
	return expression.NewLiteral(converted, t)
}

func quantize(c *apd.Decimal, exp int32, rounding apd.Rounder) *apd.Decimal {
	ac := apd.BaseContext.WithPrecision(200)
	ac.Rounding = rounding
	var out apd.Decimal
	_, _ = ac.Quantize(&out, c, exp)
	return &out
}

// rangeOf is the least and greatest value of an exact number type.
func rangeOf(t sql.Type) (lo, hi *apd.Decimal) {
	if dt, ok := t.(sql.DecimalType); ok {
		// 10^(p-s) - 10^-s
		hi = new(apd.Decimal)
		one := apd.New(1, int32(dt.Precision())-int32(dt.Scale()))
		_, _ = apd.BaseContext.WithPrecision(200).Sub(hi, one, apd.New(1, -int32(dt.Scale())))
		return new(apd.Decimal).Neg(hi), hi
	}
	var min int64
	var max uint64
	switch t.Type() {
	case sqltypes.Int8:
		min, max = math.MinInt8, math.MaxInt8
	case sqltypes.Uint8:
		max = math.MaxUint8
	case sqltypes.Int16:
		min, max = math.MinInt16, math.MaxInt16
	case sqltypes.Uint16:
		max = math.MaxUint16
	case sqltypes.Int24:
		min, max = -1<<23, 1<<23-1
	case sqltypes.Uint24:
		max = 1<<24 - 1
	case sqltypes.Int32:
		min, max = math.MinInt32, math.MaxInt32
	case sqltypes.Uint32:
		max = math.MaxUint32
	case sqltypes.Uint64:
		max = math.MaxUint64
	default:
		min, max = math.MinInt64, math.MaxInt64
	}
	hi = new(apd.Decimal)
	hi.Coeff.SetUint64(max)
	return apd.New(min, 0), hi
}

// scaleOf is the digits after the point an exact number type keeps.
func scaleOf(t sql.Type) int32 {
	if dt, ok := t.(sql.DecimalType); ok {
		return int32(dt.Scale())
	}
	return 0
}

func exactNumber(t sql.Type) bool { return types.IsDecimal(t) || types.IsInteger(t) }

// comparedAsDouble says MySQL compares a and b as doubles: one is a
// DECIMAL, the other a DOUBLE or a string.
func comparedAsDouble(a, b sql.Type) bool {
	return types.IsDecimal(a) && inexact(b) || types.IsDecimal(b) && inexact(a)
}

// asDouble is e as a DOUBLE when it is a DECIMAL: a constant becomes a
// literal, anything else a CAST.
func asDouble(ctx *sql.Context, e sql.Expression) sql.Expression {
	if !types.IsDecimal(e.Type(ctx)) {
		return e
	}
	if c, ok := decimalConstant(ctx, e); ok {
		if c == nil {
			return expression.NewLiteral(nil, types.Float64)
		}
		f, _ := c.Float64()
		return expression.NewLiteral(f, types.Float64)
	}
	return expression.NewConvert(e, expression.ConvertToDouble)
}

// unrounded is e, a DECIMAL compared with something of the given scale, in
// a type that does not round what it is compared with, when e's type would
// round it (castLeftAndRight compares in the left side's type).
func unrounded(ctx *sql.Context, e sql.Expression, scale int32) (sql.Expression, bool) {
	t := e.Type(ctx)
	if _, done := e.(*ExactDecimal); done || !types.IsDecimal(t) || scaleOf(t) >= scale {
		return nil, false
	}
	return &ExactDecimal{UnaryExpressionStub: expression.UnaryExpressionStub{Child: e}}, true
}

// isColumn says e reads a column of a row, whose values its type holds.
func isColumn(e sql.Expression) bool {
	_, ok := e.(*expression.GetField)
	return ok
}

// isConstant says e is a number the statement spelled: a literal, perhaps
// negated or in a CAST (the parser's, see decimalLiterals).
func isConstant(e sql.Expression) bool {
	switch e := e.(type) {
	case *expression.Literal:
		return true
	case *expression.Convert:
		return isConstant(e.Child)
	case *expression.UnaryMinus:
		return isConstant(e.Child)
	}
	return false
}

// decimalConstant is the value of e when e is a DECIMAL constant (nil for
// NULL).
func decimalConstant(ctx *sql.Context, e sql.Expression) (*apd.Decimal, bool) {
	if !types.IsDecimal(e.Type(ctx)) || !isConstant(e) {
		return nil, false
	}
	v, err := e.Eval(ctx, nil)
	if err != nil {
		return nil, false
	}
	switch v := v.(type) {
	case nil:
		return nil, true
	case *apd.Decimal:
		return v, true
	case apd.Decimal:
		return &v, true
	}
	d, err := types.InternalDecimalType.ConvertToDecimal(v)
	return d, err == nil && d != nil
}

// ExactDecimal is its child in a DECIMAL type that does not round: compared
// in it, the other side keeps its digits.
type ExactDecimal struct {
	expression.UnaryExpressionStub
}

var _ sql.Expression = (*ExactDecimal)(nil)

func (e *ExactDecimal) Type(*sql.Context) sql.Type { return types.InternalDecimalType }

func (e *ExactDecimal) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	return e.Child.Eval(ctx, row)
}

// String is the child's: EXPLAIN shows the comparison as written.
func (e *ExactDecimal) String() string { return e.Child.String() }

func (e *ExactDecimal) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	return &ExactDecimal{UnaryExpressionStub: expression.UnaryExpressionStub{Child: children[0]}}, nil
}

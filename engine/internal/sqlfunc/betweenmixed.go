package sqlfunc

import (
	"context"
	"fmt"
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// BETWEEN compares its three operands in one type, a DOUBLE when one is a
// DECIMAL and another a DOUBLE or a string (doublecompare.go). go-mysql-
// server splits a BETWEEN in a WHERE or ON clause into val >= lower AND
// val <= upper before any rule of icesql's sees it (simplifyFilters, in
// its short rule sets too), and each half then compares in its own pair's
// type: m BETWEEN 0.10000000000000000001 AND x (m DECIMAL, x DOUBLE)
// compared m with the decimal exactly and missed m = 0.1, which MySQL
// matches (both are the double 0.1). A BETWEEN with a DOUBLE literal is
// made uniform by the parser (castDouble); for one whose operands' types
// are known only once bound (two or more not literals), the parser puts a
// betweenOperands in its place, which binds to the BETWEEN with its
// DECIMAL bounds as DOUBLEs when the operands mix so: each half then
// compares as doubles, as MySQL does.

// betweenOperands is a BETWEEN (or NOT BETWEEN) whose comparison type is
// decided when its operands are bound.
type betweenOperands struct {
	not  bool
	text string // the BETWEEN as written, for the column header
}

var _ ast.Injectable = betweenOperands{}

func (b betweenOperands) String() string { return b.text }

// WithResolvedChildren implements ast.Injectable: children are the bound
// value, lower and upper bound.
func (b betweenOperands) WithResolvedChildren(ctx context.Context, children []any) (any, error) {
	if len(children) != 3 {
		return nil, fmt.Errorf("BETWEEN with %d operands", len(children))
	}
	ops := make([]sql.Expression, 3)
	for i, c := range children {
		e, ok := c.(sql.Expression)
		if !ok {
			return nil, fmt.Errorf("BETWEEN operand %T", c)
		}
		ops[i] = e
	}
	sctx, ok := ctx.(*sql.Context)
	if !ok {
		sctx = sql.NewEmptyContext()
	}
	between := expression.NewBetween(ops[0], ops[1], ops[2])
	if betweenAsDoubles(sctx, between) {
		// The value stays: a DECIMAL column against the DOUBLE bounds is
		// then compared as doubles by mysqlComparison, as exact bounds
		// where it can be.
		between = expression.NewBetween(ops[0], asDouble(sctx, ops[1]), asDouble(sctx, ops[2]))
	}
	if b.not {
		return expression.NewNot(between), nil
	}
	return between, nil
}

// typedLater says the operands of a BETWEEN have types only binding knows
// (two or more are not literals), so that the parser cannot make its
// comparison type uniform.
func typedLater(rc *ast.RangeCond) bool {
	n := 0
	for _, e := range []ast.Expr{rc.Left, rc.From, rc.To} {
		if !literalOperand(e) {
			n++
		}
	}
	return n >= 2
}

func literalOperand(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SQLVal, *ast.NullVal, ast.BoolVal:
		return true
	case *ast.UnaryExpr:
		return literalOperand(e.Expr)
	case *ast.ConvertExpr:
		return literalOperand(e.Expr)
	}
	return false
}

var (
	exprType     = reflect.TypeOf((*ast.Expr)(nil)).Elem()
	rangeCondPtr = reflect.TypeOf((*ast.RangeCond)(nil))
)

// replaceTypedLaterBetweens puts a betweenOperands in place of each BETWEEN
// held directly by node (a field, an element of a list, a field of a
// struct field) whose operands are typed later; fix is applied to each
// such BETWEEN's operands first, as to any other BETWEEN's.
func replaceTypedLaterBetweens(node ast.SQLNode, fix func(*ast.RangeCond)) {
	v := reflect.ValueOf(node)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	replaceIn(v, fix)
}

func replaceIn(v reflect.Value, fix func(*ast.RangeCond)) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			switch {
			case f.Kind() == reflect.Struct:
				replaceIn(f, fix)
			case f.Kind() == reflect.Slice && f.Type().Elem() == exprType:
				replaceIn(f, fix)
			case f.Type() == exprType:
				replaceOne(f, fix)
			}
		}
	case reflect.Slice:
		if v.Type().Elem() != exprType {
			return
		}
		for i := range v.Len() {
			replaceOne(v.Index(i), fix)
		}
	}
}

// replaceOne replaces the expression slot f when it holds such a BETWEEN.
func replaceOne(f reflect.Value, fix func(*ast.RangeCond)) {
	if f.IsNil() || f.Elem().Type() != rangeCondPtr {
		return
	}
	rc := f.Interface().(*ast.RangeCond)
	if !typedLater(rc) {
		return
	}
	op := rc.Operator
	fix(rc)
	text := ast.String(rc)
	in := ast.InjectedExpr{Expression: betweenOperands{not: op == ast.NotBetweenStr, text: text}, Children: ast.Exprs{rc.Left, rc.From, rc.To}}
	f.Set(reflect.ValueOf(in))
}

package sqlfunc

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// inAsMySQL is `x IN (list)` as MySQL compares it, when go-mysql-server
// would compare it otherwise (ok false when it would not).
//
// go-mysql-server's HashInTuple converts every element of the list to the
// type in which x compares with the first element: on an INT k,
// k IN (92, 134.5e0) made 134.5 the integer 135 and matched k = 135 (and
// k NOT IN (92, 134.5e0) lost that row). MySQL compares x with each
// element in the type of that pair, so a list whose elements compare with
// x in different types is split into one IN per type, joined by OR (a NULL
// element stays in the first, keeping IN's NULL answer when nothing
// matches). Each part is then compared as decimalIn says.
func inAsMySQL(ctx *sql.Context, x, list sql.Expression) (sql.Expression, bool) {
	tuple, ok := list.(expression.Tuple)
	if !ok {
		return nil, false
	}
	changed := false
	if xt := x.Type(ctx); types.IsSigned(xt) {
		exact := make(expression.Tuple, len(tuple))
		for i, el := range tuple {
			exact[i] = beyondSigned(ctx, el, xt) // unsignedconst.go
			changed = changed || exact[i] != el
		}
		tuple = exact
	}
	parts := splitByCompareType(ctx, x, tuple)
	if len(parts) < 2 {
		if e, ok := decimalIn(ctx, x, tuple); ok || !changed {
			return e, ok
		}
		return expression.NewInTuple(x, tuple), true
	}
	terms := make([]sql.Expression, len(parts))
	for i, part := range parts {
		terms[i] = expression.NewInTuple(x, part)
		if e, ok := decimalIn(ctx, x, part); ok {
			terms[i] = e
		}
	}
	return expression.JoinOr(terms...), true
}

// splitByCompareType groups the elements of tuple by the type in which x
// compares with them, in the order each type first appears; NULLs join
// the first group. One group when x is a row (a tuple) or the list is
// uniform.
func splitByCompareType(ctx *sql.Context, x sql.Expression, tuple expression.Tuple) []expression.Tuple {
	xt := x.Type(ctx)
	if types.NumColumns(xt) != 1 {
		return []expression.Tuple{tuple}
	}
	var groups []expression.Tuple
	var keys []sql.Type
	var nulls expression.Tuple
	for _, el := range tuple {
		et := el.Type(ctx)
		if et == types.Null || types.NumColumns(et) != 1 {
			nulls = append(nulls, el)
			continue
		}
		ct := types.GetCompareType(xt, et)
		i := 0
		for i < len(keys) && !types.TypesEqual(keys[i], ct) {
			i++
		}
		if i == len(keys) {
			keys = append(keys, ct)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], el)
	}
	if len(groups) == 0 {
		return []expression.Tuple{tuple}
	}
	groups[0] = append(groups[0], nulls...)
	return groups
}

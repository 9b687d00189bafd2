package sqlfunc

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL compares two rows element by element, each pair in its own type:
// (a, b) = (c, d) is a = c AND b = d, (a, b) < (c, d) is a < c OR (a = c
// AND b < d), and (a, b) IN ((c, d), (e, f)) is (a, b) = (c, d) OR
// (a, b) = (e, f), NULLs included. go-mysql-server compares rows in one
// tuple type, which compares a DECIMAL with a DOUBLE as a DECIMAL:
// (m, id) IN ((0.1e0, 1)) missed m = 0.10000000000000000001 (MySQL: a
// match, compared as doubles); and its hashed IN in a WHERE clause matched
// a NULL element (holdsNull). rowComparison writes a row comparison out
// element by element when a pair of its elements needs MySQL's comparison
// (mysqlComparison) or the list holds a NULL, and leaves the others to
// go-mysql-server.

// rowComparison is e, a comparison of rows or a row IN a list of rows,
// compared element by element (ok false when no pair needs it).
func rowComparison(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	switch e := e.(type) {
	case *expression.InTuple:
		return rowIn(ctx, e.Left(), e.Right())
	case *expression.HashInTuple:
		return rowIn(ctx, e.Left(), e.Right())
	}
	op, l, r, ok := comparisonOf(e)
	if !ok {
		return nil, false
	}
	if sq, ok := r.(*plan.Subquery); ok {
		return rowWithSubquery(ctx, op, l, sq)
	}
	lr, rr, ok := rowPair(l, r)
	if !ok || !needsElementwise(ctx, lr, rr) {
		return nil, false
	}
	return compareRows(ctx, op, lr, rr), true
}

// rowIn is x IN (rows) compared row by row, when x is a row and a pair of
// elements needs it.
func rowIn(ctx *sql.Context, x, list sql.Expression) (sql.Expression, bool) {
	rows, ok := list.(expression.Tuple)
	if !ok {
		return nil, false
	}
	need := false
	pairs := make([][2]expression.Tuple, len(rows))
	for i, row := range rows {
		l, r, ok := rowPair(x, row)
		if !ok {
			return nil, false
		}
		pairs[i] = [2]expression.Tuple{l, r}
		need = need || needsElementwise(ctx, l, r) || holdsNull(ctx, r)
	}
	if !need {
		return nil, false
	}
	terms := make([]sql.Expression, len(pairs))
	for i, p := range pairs {
		terms[i] = compareRows(ctx, opEQ, p[0], p[1])
	}
	return expression.JoinOr(terms...), true
}

// rowPair is l and r as rows of the same width (at least 2).
func rowPair(l, r sql.Expression) (expression.Tuple, expression.Tuple, bool) {
	lt, ok1 := l.(expression.Tuple)
	rt, ok2 := r.(expression.Tuple)
	if !ok1 || !ok2 || len(lt) < 2 || len(lt) != len(rt) {
		return nil, nil, false
	}
	return lt, rt, true
}

// rowWithSubquery is the row l compared with a row subquery, (m, id) =
// (SELECT 0.1e0, 1), with the DECIMAL elements of l that MySQL compares
// as doubles cast to DOUBLE: go-mysql-server compares each pair in the
// type of l's element, and converted 0.1e0 to the DECIMAL 0.1.
func rowWithSubquery(ctx *sql.Context, op cmpOp, l sql.Expression, sq *plan.Subquery) (sql.Expression, bool) {
	left, ok := l.(expression.Tuple)
	if !ok || len(left) < 2 || sq.Query == nil || !sq.Resolved() {
		return nil, false
	}
	sch := sq.Query.Schema(ctx)
	if len(sch) != len(left) {
		return nil, false
	}
	cast := make(expression.Tuple, len(left))
	changed := false
	for i, el := range left {
		cast[i] = el
		if t := el.Type(ctx); types.IsDecimal(t) && comparedAsDouble(t, sch[i].Type) {
			cast[i], changed = asDouble(ctx, el), true
		}
	}
	if !changed {
		return nil, false
	}
	return newComparison(op, cast, sq), true
}

// holdsNull says an element of row is the NULL literal: go-mysql-server's
// hashed IN in a WHERE clause matched (m, id) IN ((NULL, 4)) with the row
// m NULL, id 4 (MySQL: NULL, no match).
func holdsNull(ctx *sql.Context, row expression.Tuple) bool {
	for _, el := range row {
		if sub, ok := el.(expression.Tuple); ok && holdsNull(ctx, sub) {
			return true
		}
		if el.Type(ctx) == types.Null {
			return true
		}
	}
	return false
}

// needsElementwise says a pair of elements of l and r compares otherwise
// in MySQL than go-mysql-server would compare it.
func needsElementwise(ctx *sql.Context, l, r expression.Tuple) bool {
	for i := range l {
		if _, ok := l[i].(expression.Tuple); ok {
			if lr, rr, ok := rowPair(l[i], r[i]); ok && needsElementwise(ctx, lr, rr) {
				return true
			}
			continue
		}
		if _, ok := mysqlComparison(ctx, expression.NewEquals(l[i], r[i])); ok {
			return true
		}
	}
	return false
}

// compareRows is l op r element by element.
func compareRows(ctx *sql.Context, op cmpOp, l, r expression.Tuple) sql.Expression {
	element := func(op cmpOp, a, b sql.Expression) sql.Expression {
		c := newComparison(op, a, b)
		if m, ok := rowComparison(ctx, c); ok {
			return m
		}
		if m, ok := mysqlComparison(ctx, c); ok {
			return m
		}
		return c
	}
	switch op {
	case opEQ, opNSE:
		terms := make([]sql.Expression, len(l))
		for i := range l {
			terms[i] = element(op, l[i], r[i])
		}
		return expression.JoinAnd(terms...)
	}
	// Lexicographic: the first pair that differs decides; the last pair
	// with op itself, the others strictly.
	strict := opLT
	if op == opGT || op == opGE {
		strict = opGT
	}
	var terms []sql.Expression
	for i := range l {
		var conj []sql.Expression
		for j := range i {
			conj = append(conj, element(opEQ, l[j], r[j]))
		}
		last := strict
		if i == len(l)-1 {
			last = op
		}
		terms = append(terms, expression.JoinAnd(append(conj, element(last, l[i], r[i]))...))
	}
	return expression.JoinOr(terms...)
}

package planrules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// A correlated IN or NOT IN subquery whose WHERE clause holds no equality
// correlation to key by (keyCorrelatedSubqueries) still filtered its whole
// source for every outer row: `l.k NOT IN (SELECT CAST(q.k AS SIGNED) FROM
// t3 q WHERE q.s = l.s AND q.f IN (...) OR MONTH(q.d) >= 6)` evaluated
// 3,000 × 3,000 conditions, over 10 s (MariaDB: 1 s).
//
// The IN is an equality of its own: of the subquery's rows, only those
// whose value equals the left side's can make it true, and those whose
// value is NULL make it NULL when none does; the rest cannot change the
// answer, except that a NULL left side is NULL against any row and FALSE
// against none. keyInSubqueries keys the subquery's source by its
// projected value, NULL-aware (KeyedSource.nullAware): each outer row gets
// the rows of its left side's value and the rows whose value is NULL, or
// every row when its left side is NULL. The filter above still checks the
// whole condition and InSubquery compares as before, so IN and NOT IN
// answer exactly as over all the rows.

// keyInSubqueries keys the correlated IN subqueries of n (and of the
// subqueries within them) by their projected value, where the subquery's
// own conditions give no key. SET icesql_decorrelate = OFF turns it off
// (the differential tests' way to the answers over every row).
func keyInSubqueries(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	if !sqlval.SwitchedOn(ctx, DecorrelateVar) {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprsWithOpaque(ctx, n, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		in, ok := e.(*plan.InSubquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		sq, ok := in.RightChild.(*plan.Subquery)
		if !ok || sq.Correlated().Empty() {
			return e, transform.SameTree, nil
		}
		q, same, err := keyInSubqueries(ctx, sq.Query)
		if err != nil {
			return e, transform.SameTree, err
		}
		if parts := splitInSubquery(ctx, in.LeftChild, sq.WithQuery(q)); parts != nil {
			for i, part := range parts {
				if !part.Correlated().Empty() {
					if parts[i], err = keyIn(ctx, part, in.LeftChild); err != nil {
						return e, transform.SameTree, err
					}
				}
			}
			// The parts run once first: when one finds the value, the
			// OR needs no correlated part.
			var ors []sql.Expression
			for _, once := range []bool{true, false} {
				for _, part := range parts {
					if part.Correlated().Empty() == once {
						ors = append(ors, plan.NewInSubquery(ctx, in.LeftChild, part))
					}
				}
			}
			return expression.JoinOr(ors...), transform.NewTree, nil
		}
		keyed, err := keyIn(ctx, sq.WithQuery(q), in.LeftChild)
		if err != nil || (keyed.Query == q && same) {
			return e, transform.SameTree, err
		}
		out, err := in.WithChildren(ctx, in.LeftChild, keyed)
		return out, transform.NewTree, err
	})
}

// keyIn keys the source of sq, an IN's correlated subquery: by an equality
// of its conditions (keySubquery) or else by its value (keyByValue).
func keyIn(ctx *sql.Context, sq *plan.Subquery, left sql.Expression) (*plan.Subquery, error) {
	keyed, same, err := keySubquery(ctx, sq.Query)
	if err != nil {
		return sq, err
	}
	if same {
		keyed, _ = keyByValue(ctx, sq.Query, left)
	}
	return sq.WithQuery(keyed), nil
}

// maxInDisjuncts bounds the subqueries an IN's OR is split into.
const maxInDisjuncts = 4

// splitInSubquery splits an IN subquery whose WHERE clause is an OR of
// conditions into one subquery per condition, left IN (S1 ∪ S2) being
// left IN S1 OR left IN S2 in three-valued logic too (TRUE when either
// finds the value; else NULL when either holds a NULL, or when left is
// NULL and either is not empty; else FALSE), and NOT IN its negation:
// `l.k NOT IN (SELECT q.k FROM q WHERE q.s = l.s AND q.f > 0 OR MONTH(q.d)
// >= 6)` filtered all of q for each outer row; split, the first part is
// keyed by q.s = l.s and the second, reading no outer column, is run once
// and kept (go-mysql-server caches an uncorrelated subquery's rows). nil
// when sq is not a projection over a filter over a plain source, or the
// filter is not an OR.
func splitInSubquery(ctx *sql.Context, left sql.Expression, sq *plan.Subquery) []*plan.Subquery {
	p, projected := sq.Query.(*plan.Project)
	var f *plan.Filter
	if projected {
		if len(p.Projections) != 1 {
			return nil
		}
		f, _ = p.Child.(*plan.Filter)
	} else {
		f, _ = sq.Query.(*plan.Filter)
	}
	if f == nil || !ReadsOuterOnlyBesides(ctx, left) {
		return nil
	}
	if _, ok := f.Expression.(*expression.Or); !ok {
		return nil
	}
	cols, ok := plainSource(ctx, f.Child)
	if !ok {
		return nil
	}
	disjuncts := expression.SplitDisjunction(f.Expression)
	if len(disjuncts) > maxInDisjuncts {
		return nil
	}
	var value sql.Expression
	if projected {
		value = p.Projections[0]
	}
	parts := make([]*plan.Subquery, len(disjuncts))
	for i, d := range disjuncts {
		if !ReadsOuterOnlyBesides(ctx, d) {
			return nil
		}
		var part sql.Node = plan.NewFilter(ctx, d, f.Child)
		if projected {
			np, err := p.WithChildren(ctx, part)
			if err != nil {
				return nil
			}
			part = np
		}
		parts[i] = sq.WithQuery(part)
		if ReadsOnly(ctx, d, cols, true) && (value == nil || ReadsOnly(ctx, value, cols, true)) {
			parts[i] = parts[i].WithCorrelated(sql.ColSet{}) // read once, kept
		}
	}
	return parts
}

// keyByValue puts a NULL-aware KeyedSource under q's filter when q is
// Project(value) over Filter over a plain source, or the filter itself over
// a source of one column (go-mysql-server drops a projection of a column),
// and value, read from the source alone, compares with left exactly as the
// key does.
func keyByValue(ctx *sql.Context, q sql.Node, left sql.Expression) (sql.Node, transform.TreeIdentity) {
	p, projected := q.(*plan.Project)
	var f *plan.Filter
	var value sql.Expression
	if projected {
		if len(p.Projections) != 1 {
			return q, transform.SameTree
		}
		value = p.Projections[0]
		if a, isAlias := value.(*expression.Alias); isAlias {
			value = a.Child
		}
		f, _ = p.Child.(*plan.Filter)
	} else {
		f, _ = q.(*plan.Filter)
	}
	if f == nil {
		return q, transform.SameTree
	}
	cols, ok := plainSource(ctx, f.Child)
	if !ok {
		return q, transform.SameTree
	}
	if !projected {
		value = onlyColumn(ctx, f, cols)
	}
	if value == nil {
		return q, transform.SameTree
	}
	if !ReadsOnly(ctx, value, cols, true) || !ReadsOuterOnlyBesides(ctx, left) || types.NumColumns(left.Type(ctx)) != 1 {
		return q, transform.SameTree
	}
	kind, ok := inKeyKind(ctx, left.Type(ctx), value.Type(ctx))
	if !ok {
		return q, transform.SameTree
	}
	ks := &KeyedSource{Source: f.Child, innerKey: value, outerKey: left, kind: kind, index: &keyedIndex{}, nullAware: true}
	nf, err := f.WithChildren(ctx, ks)
	if err != nil {
		return q, transform.SameTree
	}
	if !projected {
		return nf, transform.NewTree
	}
	np, err := p.WithChildren(ctx, nf)
	if err != nil {
		return q, transform.SameTree
	}
	return np, transform.NewTree
}

// onlyColumn is the column a filter's source of one column produces, as
// the filter reads it; nil when the source has more columns or the filter
// does not read it.
func onlyColumn(ctx *sql.Context, f *plan.Filter, cols sql.ColSet) sql.Expression {
	if len(f.Child.Schema(ctx)) != 1 {
		return nil
	}
	var col sql.Expression
	transform.InspectExpr(ctx, f.Expression, func(ctx *sql.Context, e sql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok && cols.Contains(gf.Id()) {
			col = gf
		}
		return col != nil
	})
	return col
}

// inKeyKind is the key kind for IN's comparison of left with a value of
// type value, when equal keys are exactly InSubquery's equality:
// InSubquery converts the left value to the value's type before it
// compares, which must change no value that converts without error (an
// error answers FALSE whatever the rows). Integers of one signedness widen
// or fail; strings of one collation, decimals of one scale, floats of one
// width and times of one type convert to themselves.
func inKeyKind(ctx *sql.Context, left, value sql.Type) (KeyKind, bool) {
	kind, ok := KeyKindOf(ctx, left, value)
	if !ok {
		return 0, false
	}
	switch kind {
	case keyDecimal:
		dl, okl := left.(sql.DecimalType)
		dv, okv := value.(sql.DecimalType)
		return kind, okl && okv && dl.Scale() == dv.Scale()
	case KeyFloat, KeyTime:
		return kind, left.Equals(value)
	}
	return kind, true
}

// inRows are the rows a NULL-aware KeyedSource hands the outer row whose
// key is key (ok false: NULL): those of its key and those whose value is
// NULL, or all of them.
func (idx *keyedIndex) inRows(key any, ok bool) []sql.Row {
	if !ok {
		return idx.all
	}
	rows := idx.rows[key]
	if len(idx.nulls) == 0 {
		return rows
	}
	return append(rows[:len(rows):len(rows)], idx.nulls...)
}

func (k *KeyedSource) nullAwareNote() string {
	if !k.nullAware {
		return ""
	}
	return " (IN's value: rows whose value is NULL go to every outer row, a NULL outer key gets every row)"
}

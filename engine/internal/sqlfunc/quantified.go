package sqlfunc

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/icesql/icesql/planner"
)

// Quantified comparisons, x op ANY (subquery) and x op ALL (subquery), are
// not in go-mysql-server's grammar. The planner rewrites the two that have
// an equivalent (= ANY is IN, <> ALL is NOT IN) and turns the others into
// x = icesql_quantified('op', 'any'|'all', (subquery)), which parses; the
// resolveQuantified rule then replaces that comparison with a
// quantifiedComparison holding x, the operator and the subquery.

// quantifiedMarker is what icesql_quantified(...) builds: it stands for the
// right side of a quantified comparison until resolveQuantified removes it.
type quantifiedMarker struct {
	op, quantifier, subquery sql.Expression
}

var QuantifiedFunction = sql.Function3{
	Name: planner.QuantifiedFunction,
	Fn: func(_ *sql.Context, op, quantifier, subquery sql.Expression) sql.Expression {
		return &quantifiedMarker{op: op, quantifier: quantifier, subquery: subquery}
	},
}

func (m *quantifiedMarker) Resolved() bool {
	return m.op.Resolved() && m.quantifier.Resolved() && m.subquery.Resolved()
}
func (m *quantifiedMarker) String() string {
	return fmt.Sprintf("%s(%s, %s, %s)", planner.QuantifiedFunction, m.op, m.quantifier, m.subquery)
}
func (m *quantifiedMarker) Type(ctx *sql.Context) sql.Type { return m.subquery.Type(ctx) }
func (m *quantifiedMarker) IsNullable(*sql.Context) bool   { return true }
func (m *quantifiedMarker) Children() []sql.Expression {
	return []sql.Expression{m.op, m.quantifier, m.subquery}
}
func (m *quantifiedMarker) WithChildren(_ *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 3 {
		return nil, sql.ErrInvalidChildrenNumber.New(m, len(children), 3)
	}
	return &quantifiedMarker{op: children[0], quantifier: children[1], subquery: children[2]}, nil
}

// Eval runs only when the marker was written by hand rather than by the
// planner's rewrite of ANY/ALL.
func (m *quantifiedMarker) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, sql.ErrUnsupportedFeature.New(planner.QuantifiedFunction + " outside a comparison with ANY or ALL")
}

// comparison reads the marker's operator and quantifier.
func (m *quantifiedMarker) comparison() (op string, all bool, sub *plan.Subquery, ok bool) {
	opLit, ok1 := m.op.(*expression.Literal)
	qLit, ok2 := m.quantifier.(*expression.Literal)
	sub, ok3 := m.subquery.(*plan.Subquery)
	if !ok1 || !ok2 || !ok3 {
		return "", false, nil, false
	}
	op, _ = opLit.Value().(string)
	q, _ := qLit.Value().(string)
	if _, known := comparisons[op]; !known || (q != "any" && q != "all") {
		return "", false, nil, false
	}
	return op, q == "all", sub, true
}

// comparisons build the comparison of one value with one subquery row.
var comparisons = map[string]func(l, r sql.Expression) sql.Expression{
	"=":   func(l, r sql.Expression) sql.Expression { return expression.NewEquals(l, r) },
	"<>":  func(l, r sql.Expression) sql.Expression { return expression.NewNot(expression.NewEquals(l, r)) },
	"<":   func(l, r sql.Expression) sql.Expression { return expression.NewLessThan(l, r) },
	"<=":  func(l, r sql.Expression) sql.Expression { return expression.NewLessThanOrEqual(l, r) },
	">":   func(l, r sql.Expression) sql.Expression { return expression.NewGreaterThan(l, r) },
	">=":  func(l, r sql.Expression) sql.Expression { return expression.NewGreaterThanOrEqual(l, r) },
	"<=>": func(l, r sql.Expression) sql.Expression { return expression.NewNullSafeEquals(l, r) },
}

// ResolveQuantified replaces every x = icesql_quantified(...) with the
// quantified comparison it stands for, in subqueries too.
func ResolveQuantified(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return quantifiedInNode(ctx, n)
}

func quantifiedInNode(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprsWithOpaque(ctx, n, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *plan.Subquery:
			q, same, err := quantifiedInNode(ctx, e.Query)
			if err != nil || same {
				return e, transform.SameTree, err
			}
			return e.WithQuery(q), transform.NewTree, nil
		case *expression.Equals:
			m, ok := e.Right().(*quantifiedMarker)
			if !ok {
				return e, transform.SameTree, nil
			}
			op, all, sub, ok := m.comparison()
			if !ok {
				return e, transform.SameTree, nil
			}
			sq, _, err := quantifiedInNode(ctx, sub.Query)
			if err != nil {
				return nil, transform.SameTree, err
			}
			if n := len(sq.Schema(ctx)); n != 1 {
				return nil, transform.SameTree, sql.ErrInvalidOperandColumns.New(1, n)
			}
			return &quantifiedComparison{left: e.Left(), op: op, all: all, sub: sub.WithQuery(sq)}, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// quantifiedComparison is x op ANY (subquery) or x op ALL (subquery) with
// SQL's three-valued logic: ANY is the OR of x op y over the subquery's rows
// (FALSE for no rows), ALL is their AND (TRUE for no rows).
type quantifiedComparison struct {
	left sql.Expression
	sub  *plan.Subquery
	op   string
	all  bool
}

var _ sql.Expression = (*quantifiedComparison)(nil)

func (q *quantifiedComparison) quantifier() string {
	if q.all {
		return "ALL"
	}
	return "ANY"
}

func (q *quantifiedComparison) String() string {
	return fmt.Sprintf("%s %s %s (%s)", q.left, q.op, q.quantifier(), q.sub)
}
func (q *quantifiedComparison) Type(*sql.Context) sql.Type   { return types.Boolean }
func (q *quantifiedComparison) IsNullable(*sql.Context) bool { return true }
func (q *quantifiedComparison) Resolved() bool               { return q.left.Resolved() && q.sub.Resolved() }
func (q *quantifiedComparison) Children() []sql.Expression {
	return []sql.Expression{q.left, q.sub}
}

func (q *quantifiedComparison) WithChildren(_ *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(q, len(children), 2)
	}
	sub, ok := children[1].(*plan.Subquery)
	if !ok {
		return nil, fmt.Errorf("%s: the right side is %T, not a subquery", q, children[1])
	}
	return &quantifiedComparison{left: children[0], sub: sub, op: q.op, all: q.all}, nil
}

func (q *quantifiedComparison) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	x, err := q.left.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	ys, err := q.sub.EvalMultiple(ctx, row)
	if err != nil {
		return nil, err
	}
	lt, rt := q.left.Type(ctx), q.sub.Type(ctx)
	compare := comparisons[q.op]
	sawNull := false
	for _, y := range ys {
		v, err := compare(expression.NewLiteral(x, lt), expression.NewLiteral(y, rt)).Eval(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %w", strings.ToLower(q.left.String()), q.op, q.quantifier(), err)
		}
		if v == nil {
			sawNull = true
			continue
		}
		holds, err := sql.ConvertToBool(ctx, v)
		if err != nil {
			return nil, err
		}
		if holds != q.all { // a TRUE decides ANY, a FALSE decides ALL
			return holds, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return q.all, nil
}

package planrules

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/icesql/icesql/engine/internal/memlimit"
)

// go-mysql-server runs a correlated subquery once per outer row, over all
// of its source: `SELECT l.id, (SELECT MAX(q.x) FROM t2 q WHERE q.k = l.k)
// FROM t1 l` filtered every row of t2 for every row of t1 (9 million
// comparisons over 3,000-row tables: over a minute), and so did a
// correlated IN or NOT IN.
//
// When the subquery's WHERE clause holds an equality between an inner
// expression and an outer one (q.k = l.k), only the source rows whose inner
// key equals the outer row's key can pass it. keyCorrelatedSubqueries puts
// a keyedSource under that filter: it reads the source once per statement
// into a table by key, and for each outer row hands the filter only the
// rows of its key. Everything above the source runs as before (the filter
// with its whole condition, the aggregate, the projection), so NULL and
// empty results are exactly the row path's: an outer row whose key is NULL
// or matches nothing sees no rows, so MAX gives NULL and COUNT gives 0.

// KeyCorrelatedSubqueries rewrites every correlated subquery of n whose
// filter can be keyed.
func KeyCorrelatedSubqueries(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	n, sameIn, err := keyInSubqueries(ctx, n) // keyedin.go
	if err != nil {
		return n, transform.SameTree, err
	}
	out, same, err := keyCorrelatedSubqueriesIn(ctx, n)
	return out, sameIn && same, err
}

func keyCorrelatedSubqueriesIn(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprsWithOpaque(ctx, n, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		sq, ok := e.(*plan.Subquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		// Subqueries within this one first.
		q, same1, err := keyCorrelatedSubqueriesIn(ctx, sq.Query)
		if err != nil {
			return e, transform.SameTree, err
		}
		same2 := transform.SameTree
		if !sq.Correlated().Empty() {
			if q, same2, err = keySubquery(ctx, q); err != nil {
				return e, transform.SameTree, err
			}
		}
		if same1 && same2 {
			return e, transform.SameTree, nil
		}
		return sq.WithQuery(q), transform.NewTree, nil
	})
}

// keySubquery puts a keyedSource under the first filter of q (a subquery
// plan) that has a keyable equality over a plain source: a table, perhaps
// filtered, that reads no column from outside itself. A key side reading
// columns the source does not produce reads the outer row's, since a
// filter sees only its child's row and the outer one.
//
// A subquery that joins is left alone: go-mysql-server keeps a join's
// hashed side for every outer row when that side reads no outer column,
// and a keyedSource hides the outer column it reads, so the join answered
// every outer row with the first one's rows (found by the sqllogictest
// corpus: join/subquery_correlated.txt).
func keySubquery(ctx *sql.Context, q sql.Node) (sql.Node, transform.TreeIdentity, error) {
	done := false
	transform.Inspect(q, func(n sql.Node) bool {
		switch n.(type) {
		case *KeyedSource: // keyed already (a derived table is analyzed twice)
			done = true
		case *plan.JoinNode, *plan.HashLookup:
			done = true
		}
		return !done
	})
	return transform.Node(ctx, q, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok || done {
			return n, transform.SameTree, nil
		}
		cols, ok := plainSource(ctx, f.Child)
		if !ok {
			return n, transform.SameTree, nil
		}
		for _, c := range expression.SplitConjunction(ctx, f.Expression) {
			eq, ok := c.(*expression.Equals)
			if !ok {
				continue
			}
			inner, outerKey := eq.Left(), eq.Right()
			if !ReadsOnly(ctx, inner, cols, true) {
				inner, outerKey = outerKey, inner
			}
			if !ReadsOnly(ctx, inner, cols, true) || !ReadsOnly(ctx, outerKey, cols, false) {
				continue
			}
			kind, ok := KeyKindOf(ctx, inner.Type(ctx), outerKey.Type(ctx))
			if !ok {
				continue
			}
			done = true
			ks := &KeyedSource{Source: f.Child, innerKey: inner, outerKey: outerKey, kind: kind, index: &keyedIndex{}}
			nf, err := f.WithChildren(ctx, ks)
			return nf, transform.NewTree, err
		}
		return n, transform.SameTree, nil
	})
}

// plainSource is the columns n produces when n is a table read (through an
// alias, under filters on its own columns): what reads the same rows for
// every outer row. ok is false for anything else.
func plainSource(ctx *sql.Context, n sql.Node) (sql.ColSet, bool) {
	var cols sql.ColSet
	var filters []sql.Expression
	for {
		switch nn := n.(type) {
		case *plan.Filter:
			filters = append(filters, nn.Expression)
			n = nn.Child
			continue
		case *plan.TableAlias:
			cols = nn.Columns()
			if _, ok := nn.Child.(*plan.ResolvedTable); !ok {
				return cols, false
			}
		case *plan.ResolvedTable:
			cols = nn.Columns()
		default:
			return cols, false
		}
		break
	}
	for _, f := range filters {
		if !ReadsOnly(ctx, f, cols, true) {
			return cols, false
		}
	}
	return cols, !cols.Empty()
}

// ReadsOnly says e reads at least one column, and only columns of cols
// (in) or only columns outside cols (!in); false when e holds a subquery
// or something nondeterministic, whose columns or values cannot be told.
func ReadsOnly(ctx *sql.Context, e sql.Expression, cols sql.ColSet, in bool) bool {
	seen, ok := false, true
	transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
		switch e := e.(type) {
		case *expression.GetField:
			seen = true
			ok = ok && cols.Contains(e.Id()) == in
		case *plan.Subquery:
			ok = false
		case sql.NonDeterministicExpression:
			ok = ok && !e.IsNonDeterministic()
		}
		return !ok
	})
	return ok && seen
}

// KeyKind is how a key value is made comparable so that values equal
// under SQL's = have equal keys.
type KeyKind int

const (
	KeyInt     KeyKind = iota // signed integers and booleans: int64
	keyUint                   // unsigned integers: uint64
	KeyFloat                  // floats: float64, -0 as 0
	keyDecimal                // decimals: their exact value, as text
	KeyString                 // strings of one collation: its weight hash
	KeyTime                   // dates and datetimes: the instant
)

// KeyKindOf is the key kind of an equality between types a and b; false
// when they differ so that = converts between them (then the table would
// need go-mysql-server's conversions to be exact, and the subquery runs as
// it did).
func KeyKindOf(ctx *sql.Context, a, b sql.Type) (KeyKind, bool) {
	switch {
	case types.IsSigned(a) && types.IsSigned(b):
		return KeyInt, true
	case types.IsUnsigned(a) && types.IsUnsigned(b):
		return keyUint, true
	case types.IsFloat(a) && types.IsFloat(b):
		return KeyFloat, true
	case types.IsDecimal(a) && types.IsDecimal(b):
		return keyDecimal, true
	case types.IsTextOnly(a) && types.IsTextOnly(b):
		sa, oka := a.(sql.StringType)
		sb, okb := b.(sql.StringType)
		return KeyString, oka && okb && sa.Collation() == sb.Collation()
	case (types.IsDateType(a) || types.IsDatetimeType(a)) && (types.IsDateType(b) || types.IsDatetimeType(b)):
		return KeyTime, true
	}
	return 0, false
}

// KeyOf is the key of e's value on row, of kind kind; ok is false when the
// value equals nothing (NULL, NaN).
func KeyOf(ctx *sql.Context, kind KeyKind, e sql.Expression, row sql.Row) (any, bool, error) {
	v, err := e.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, false, err
	}
	if v, err = sql.UnwrapAny(ctx, v); err != nil || v == nil {
		return nil, false, err
	}
	switch kind {
	case KeyInt:
		if b, ok := v.(bool); ok {
			return map[bool]int64{false: 0, true: 1}[b], true, nil
		}
		x, _, err := types.Int64.Convert(ctx, v)
		if err != nil {
			return nil, false, err
		}
		return x, true, nil
	case keyUint:
		x, _, err := types.Uint64.Convert(ctx, v)
		if err != nil {
			return nil, false, err
		}
		return x, true, nil
	case KeyFloat:
		x, _, err := types.Float64.Convert(ctx, v)
		if err != nil {
			return nil, false, err
		}
		f := x.(float64)
		if math.IsNaN(f) {
			return nil, false, nil
		}
		if f == 0 {
			f = 0 // -0 = 0
		}
		return f, true, nil
	case keyDecimal:
		x, _, err := types.InternalDecimalType.Convert(ctx, v)
		if err != nil || x == nil {
			return nil, false, err
		}
		var d apd.Decimal
		switch x := x.(type) {
		case *apd.Decimal:
			d.Reduce(x) // trailing zeros dropped: 1.50 and 1.5 meet
		case apd.Decimal:
			d.Reduce(&x)
		default:
			return nil, false, fmt.Errorf("decimal key %v is a %T", x, x)
		}
		if d.IsZero() {
			return "0", true, nil // -0 = 0
		}
		return d.String(), true, nil
	case KeyString:
		st := e.Type(ctx).(sql.StringType)
		s, err := types.ConvertToString(ctx, v, st, nil)
		if err != nil {
			return nil, false, err
		}
		h, err := st.Collation().HashToUint(s)
		return h, err == nil, err
	case KeyTime:
		t, ok := v.(time.Time)
		if !ok {
			x, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
			if err != nil {
				return nil, false, err
			}
			t = x.(time.Time)
		}
		return t.UnixNano(), true, nil
	}
	return nil, false, fmt.Errorf("unknown key kind %d", kind)
}

// KeyedSource is the source of a correlated subquery's filter, read once
// per statement into a table by key (see keyCorrelatedSubqueries).
// go-mysql-server prepends the outer row to the rows of every table of the
// subquery's plan for each outer row (plan.PrependRowInPlan), the source's
// too; this node prepends it to the rows of the outer row's key.
type KeyedSource struct {
	Source   sql.Node
	innerKey sql.Expression // over the source's rows, outer row prepended
	outerKey sql.Expression // over the outer row
	kind     KeyKind
	index    *keyedIndex // shared by the node's copies
	// nullAware: the key is an IN subquery's value (keyedin.go): rows
	// whose value is NULL go to every outer row, and an outer row whose
	// key is NULL gets every row.
	nullAware bool
}

var (
	_ sql.Expressioner    = (*KeyedSource)(nil)
	_ sql.ExecBuilderNode = (*KeyedSource)(nil)
)

// keyedIndex is the source's rows by key, for one statement.
type keyedIndex struct {
	mu    sync.Mutex
	pid   uint64 // the statement they were read in
	built bool
	// perRow: the source is read per outer row, as without the index
	// (past the memory budget, or not a plain table read).
	perRow   bool
	rows     map[any][]sql.Row
	residual []sql.Expression // conditions on the outer row pushed into the source
	// nulls and all (nullAware only): the rows whose key is NULL, and
	// every row.
	nulls, all []sql.Row
}

func (k *KeyedSource) Resolved() bool { return k.Source.Resolved() }
func (k *KeyedSource) String() string {
	return fmt.Sprintf("KeyedSource(%s = %s): read once per statement, by key%s", k.innerKey, k.outerKey, k.nullAwareNote())
}
func (k *KeyedSource) Schema(ctx *sql.Context) sql.Schema { return k.Source.Schema(ctx) }
func (k *KeyedSource) Children() []sql.Node               { return []sql.Node{k.Source} }
func (k *KeyedSource) IsReadOnly() bool                   { return k.Source.IsReadOnly() }

// Expressions implements sql.Expressioner, so that go-mysql-server assigns
// the keys' column positions as it does a filter's.
func (k *KeyedSource) Expressions() []sql.Expression { return []sql.Expression{k.innerKey, k.outerKey} }

func (k *KeyedSource) WithExpressions(ctx *sql.Context, exprs ...sql.Expression) (sql.Node, error) {
	if len(exprs) != 2 {
		return nil, sql.ErrInvalidExpressionNumber.New(k, len(exprs), 2)
	}
	nk := *k
	nk.innerKey, nk.outerKey = exprs[0], exprs[1]
	return &nk, nil
}

func (k *KeyedSource) WithChildren(ctx *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	nk := *k
	nk.Source = children[0]
	return &nk, nil
}

// DebugString and DescribeQuery show the source below, as EXPLAIN does for
// other nodes.
func (k *KeyedSource) DescribeQuery(ctx *sql.Context, f sql.DescribeOptions) string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("KeyedSource(%s = %s): read once per statement, by key%s", sql.Describe(ctx, k.innerKey, f), sql.Describe(ctx, k.outerKey, f), k.nullAwareNote())
	_ = p.WriteChildren(sql.Describe(ctx, k.Source, f))
	return p.String()
}

// BuildRowIter hands out the rows of the outer row's key, the outer row
// prepended.
//
// go-mysql-server's filter pushdown runs again after the rule when the
// subquery sits in a derived table, and moves the subquery's filter below
// this node, onto the table: the source then holds conditions on the outer
// row. Its conjuncts on the table alone select the rows indexed, the
// others are checked on each outer row's rows (residual), and a source
// that is not a plain table read is read per outer row, as without the
// index.
func (k *KeyedSource) BuildRowIter(ctx *sql.Context, b sql.NodeExecBuilder, row sql.Row) (sql.RowIter, error) {
	idx := k.index
	idx.mu.Lock()
	if !idx.built || idx.pid != ctx.Pid() {
		if err := k.read(ctx, b, row); err != nil {
			idx.mu.Unlock()
			return nil, err
		}
	}
	perRow, rows, residual := idx.perRow, idx.rows, idx.residual
	idx.mu.Unlock()
	if perRow {
		return b.Build(ctx, k.Source, row)
	}
	key, ok, err := KeyOf(ctx, k.kind, k.outerKey, row)
	if err != nil {
		return nil, err
	}
	if k.nullAware {
		return &prependIter{prefix: row, rows: idx.inRows(key, ok), residual: residual}, nil
	}
	if !ok {
		return sql.RowsToRowIter(), nil
	}
	return &prependIter{prefix: row, rows: rows[key], residual: residual}, nil
}

// OncePerStatement implements vecexec.ReadOnce, for EXPLAIN: "" when the
// source is read per outer row (see split).
func (k *KeyedSource) OncePerStatement(ctx *sql.Context) string {
	if _, _, ok := k.split(ctx); !ok {
		return ""
	}
	return "its rows fill the subquery's table by key"
}

// split is the source as a table read under the conjuncts on its own
// columns, and the conjuncts on other (outer) columns; ok is false when
// the source is something else, or a conjunct cannot be told apart.
func (k *KeyedSource) split(ctx *sql.Context) (base sql.Node, residual []sql.Expression, ok bool) {
	var conds []sql.Expression
	n := k.Source
	for {
		f, isFilter := n.(*plan.Filter)
		if !isFilter {
			break
		}
		conds = append(conds, expression.SplitConjunction(ctx, f.Expression)...)
		n = f.Child
	}
	var cols sql.ColSet
	switch t := n.(type) {
	case *plan.TableAlias:
		cols = t.Columns()
	case *plan.ResolvedTable:
		cols = t.Columns()
	case *plan.PrependNode:
		if rt, isTable := t.Child.(*plan.ResolvedTable); isTable {
			cols = rt.Columns()
		}
	}
	if cols.Empty() {
		return nil, nil, false
	}
	var own []sql.Expression
	for _, c := range conds {
		switch {
		case ReadsOnly(ctx, c, cols, true):
			own = append(own, c)
		case ReadsOuterOnlyBesides(ctx, c):
			residual = append(residual, c)
		default:
			return nil, nil, false
		}
	}
	if len(own) > 0 {
		n = plan.NewFilter(ctx, expression.JoinAnd(own...), n)
	}
	return n, residual, true
}

// ReadsOuterOnlyBesides says e can be evaluated on a row alone: it holds no
// subquery and nothing nondeterministic.
func ReadsOuterOnlyBesides(ctx *sql.Context, e sql.Expression) bool {
	ok := true
	transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
		switch e := e.(type) {
		case *plan.Subquery:
			ok = false
		case sql.NonDeterministicExpression:
			ok = ok && !e.IsNonDeterministic()
		}
		return !ok
	})
	return ok
}

// read fills the index from the source; idx.mu is held. The outer row
// only pads the rows to the positions the keys read.
func (k *KeyedSource) read(ctx *sql.Context, b sql.NodeExecBuilder, row sql.Row) (err error) {
	idx := k.index
	idx.pid, idx.built, idx.perRow, idx.rows, idx.residual = ctx.Pid(), true, false, map[any][]sql.Row{}, nil
	idx.nulls, idx.all = nil, nil
	base, residual, ok := k.split(ctx)
	if !ok {
		idx.perRow = true
		return nil
	}
	idx.residual = residual
	iter, err := b.Build(ctx, base, row)
	if err != nil {
		idx.built = false
		return err
	}
	defer func() {
		if cerr := iter.Close(ctx); err == nil {
			err = cerr
		}
		if err != nil {
			idx.built, idx.rows, idx.nulls, idx.all = false, nil, nil, nil
		}
	}()
	n := 0
	for {
		r, err := iter.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		n++
		if n%memlimit.CheckEvery == 0 && ctx.Memory != nil && !ctx.Memory.HasAvailable() {
			// The statement's memory (memlimit/memlimit.go): read per outer row.
			idx.perRow, idx.rows, idx.nulls, idx.all = true, nil, nil, nil
			return nil
		}
		key, ok, err := KeyOf(ctx, k.kind, k.innerKey, r)
		if err != nil {
			return err
		}
		r = r[len(row):].Copy()
		if k.nullAware {
			idx.all = append(idx.all, r)
			if !ok {
				idx.nulls = append(idx.nulls, r)
			}
		}
		if !ok {
			continue // NULL = anything is never true
		}
		idx.rows[key] = append(idx.rows[key], r)
	}
}

// prependIter is rows with prefix prepended to each, those for which every
// residual condition is true.
type prependIter struct {
	prefix   sql.Row
	rows     []sql.Row
	residual []sql.Expression
	i        int
}

func (p *prependIter) Next(ctx *sql.Context) (sql.Row, error) {
	for p.i < len(p.rows) {
		r := p.rows[p.i]
		p.i++
		out := make(sql.Row, 0, len(p.prefix)+len(r))
		out = append(append(out, p.prefix...), r...)
		keep := true
		for _, c := range p.residual {
			v, err := c.Eval(ctx, out)
			if err != nil {
				return nil, err
			}
			if v == nil {
				keep = false // NULL, as a filter takes it
			} else if keep, err = sql.ConvertToBool(ctx, v); err != nil {
				return nil, err
			}
			if !keep {
				break
			}
		}
		if keep {
			return out, nil
		}
	}
	return nil, io.EOF
}

func (p *prependIter) Close(*sql.Context) error { return nil }

// DecorrelateVar is the session variable that turns the rewrite off (SET
// icesql_decorrelate = OFF): an escape hatch, and the differential tests'
// way to the answers of the subquery run per outer row.
const DecorrelateVar = "icesql_decorrelate"

package sqlfunc

import (
	"math"
	"math/bits"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// go-mysql-server computes BIGINT +, - and * with Go's wrapping integer
// arithmetic: 9223372036854775807 + 1 answers -9223372036854775808, and a
// WHERE over such a sum silently picks other rows. MySQL fails the
// statement with ER_DATA_OUT_OF_RANGE (1690). icesql puts a checked
// operation in place of every integer one: by an analyzer rule in the full
// analysis (before vectorize, which translates the checked form like the
// plain one) and by an exec builder for the plans go-mysql-server analyzes
// with its short rule sets (single-table SELECT, INSERT VALUES, UPDATE,
// DELETE), which run no rule of icesql's. The same two put MySQL's integer
// remainder in place of go-mysql-server's % (mod.go).

// CheckedArithmetic is an integer +, - or * that fails with 1690 where the
// exact result leaves its type's range.
type CheckedArithmetic struct {
	*expression.Arithmetic
}

var _ sql.Expression = (*CheckedArithmetic)(nil)

// needsCheck says whether e is an integer +, - or * that go-mysql-server
// would let wrap: both operands integers (not dates, whose arithmetic is
// go-mysql-server's own) and a BIGINT result.
func needsCheck(ctx *sql.Context, e sql.Expression) (*expression.Arithmetic, bool) {
	a, ok := e.(*expression.Arithmetic)
	if !ok || len(a.Op) != 1 || (a.Op[0] != '+' && a.Op[0] != '-' && a.Op[0] != '*') {
		return nil, false
	}
	t := a.Type(ctx)
	if t != types.Int64 && t != types.Uint64 {
		return nil, false
	}
	lt, rt := a.LeftChild.Type(ctx), a.RightChild.Type(ctx)
	if !types.IsInteger(lt) || !types.IsInteger(rt) {
		return nil, false
	}
	return a, true
}

// checkArithmetic replaces the integer operations of e, and of the plans
// of the subqueries in e, with checked ones.
func checkArithmetic(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	return transform.Expr(ctx, e, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if sq, ok := e.(*plan.Subquery); ok {
			q, same, err := CheckNodeArithmetic(ctx, sq.Query)
			if err != nil || same {
				return e, transform.SameTree, err
			}
			return sq.WithQuery(q), transform.NewTree, nil
		}
		if m, ok := mysqlOperation(ctx, e); ok {
			return m, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// mysqlOperation is icesql's version of e when go-mysql-server's answer
// would differ from MySQL's: a checked integer +, - or *, a % (mod.go), a
// date written as text (temporaltext.go), or a comparison with a DECIMAL
// (decimalcompare.go).
func mysqlOperation(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	if a, ok := needsCheck(ctx, e); ok {
		return &CheckedArithmetic{Arithmetic: a}, true
	}
	if m, ok := e.(*expression.Mod); ok && m.Resolved() {
		return newMod(ctx, m), true
	}
	if !e.Resolved() {
		return nil, false
	}
	if t, ok := temporalCast(ctx, e); ok { // temporaltext.go
		return t, true
	}
	if l, ok := lenientIntArgs(ctx, e); ok { // intargs.go
		return l, true
	}
	if l, ok := withNullPosition(e); ok { // intargs.go
		return l, true
	}
	return mysqlComparison(ctx, e)
}

// hasUncheckedArithmetic says whether any expression of n (not of its
// children) has an operation left to replace.
func hasUncheckedArithmetic(ctx *sql.Context, n sql.Node) bool {
	ex, ok := n.(sql.Expressioner)
	if !ok {
		return false
	}
	for _, e := range ex.Expressions() {
		if transform.InspectExpr(ctx, e, func(ctx *sql.Context, e sql.Expression) bool {
			_, ok := mysqlOperation(ctx, e)
			return ok
		}) {
			return true
		}
	}
	return false
}

// builtHashLookup says n is a hash join's table already built: its keys
// were checked at its first build, and a join builds it again for every
// outer row (looking its keys through took 7% of TPC-H Q9).
func builtHashLookup(n sql.Node) bool {
	hl, ok := n.(*plan.HashLookup)
	if !ok {
		return false
	}
	hl.Mutex.Lock()
	defer hl.Mutex.Unlock()
	return hl.Lookup != nil
}

// CheckOverflowID is checkOverflow's rule id, apart from engine/rules.go's list.
const CheckOverflowID analyzer.RuleId = 1200

// CheckOverflow is the analyzer rule: every node's integer operations,
// subqueries' plans included, become checked ones.
func CheckOverflow(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return CheckNodeArithmetic(ctx, n)
}

func CheckNodeArithmetic(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		return transform.OneNodeExpressions(ctx, n, checkArithmetic)
	})
}

// CheckedBuilder checks the integer operations of the nodes the analyzer's
// short rule sets left unchecked, as they are built.
type CheckedBuilder struct {
	Next sql.NodeExecBuilder // the rest of icesql's builders
	Base sql.NodeExecBuilder // go-mysql-server's builder, which asks next first
}

func (b CheckedBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	if strict, ok := strictNumbers(ctx, n); ok { // strictnumbers.go
		return b.Base.Build(ctx, strict, row)
	}
	if builtHashLookup(n) || !hasUncheckedArithmetic(ctx, n) {
		return b.Next.Build(ctx, n, row)
	}
	checked, _, err := transform.OneNodeExpressions(ctx, n, checkArithmetic)
	if err != nil {
		return nil, err
	}
	if hasUncheckedArithmetic(ctx, checked) {
		// A node that does not take its expressions back (WithExpressions
		// keeping some): build it as it is rather than loop.
		return b.Next.Build(ctx, n, row)
	}
	// Through the base builder, so that it builds the checked node when
	// no builder of icesql's takes it (its children come back here).
	return b.Base.Build(ctx, checked, row)
}

func (c *CheckedArithmetic) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	e, err := c.Arithmetic.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	if a, ok := needsCheck(ctx, e); ok {
		return &CheckedArithmetic{Arithmetic: a}, nil
	}
	return e, nil
}

func (c *CheckedArithmetic) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, err := c.LeftChild.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	r, err := c.RightChild.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if l == nil || r == nil {
		return nil, nil
	}
	if c.Type(ctx) == types.Uint64 {
		x, ok1 := l.(uint64)
		y, ok2 := r.(uint64)
		if !ok1 || !ok2 {
			return c.plain(ctx, l, r)
		}
		v, overflow := uintOp(c.Op[0], x, y)
		if overflow {
			return nil, mysqlerr.New(mysql.ERDataOutOfRange, "BIGINT UNSIGNED value is out of range in '%s'", c.String())
		}
		return v, nil
	}
	x, ok1 := Signed(l)
	y, ok2 := Signed(r)
	if !ok1 || !ok2 {
		return c.plain(ctx, l, r)
	}
	v, overflow := intOp(c.Op[0], x, y)
	if overflow {
		return nil, mysqlerr.New(mysql.ERDataOutOfRange, "BIGINT value is out of range in '%s'", c.String())
	}
	return v, nil
}

// plain computes l op r as go-mysql-server does, for operand values of
// other Go types (a BIGINT UNSIGNED above the signed range, a string).
func (c *CheckedArithmetic) plain(ctx *sql.Context, l, r any) (any, error) {
	a := expression.NewArithmetic(
		expression.NewLiteral(l, c.LeftChild.Type(ctx)),
		expression.NewLiteral(r, c.RightChild.Type(ctx)), c.Op)
	return a.Eval(ctx, nil)
}

// Signed is v as an int64 when it is an integer that fits one.
func Signed(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int16:
		return int64(v), true
	case int8:
		return int64(v), true
	case int:
		return int64(v), true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		return int64(v), v <= math.MaxInt64
	}
	return 0, false
}

// intOp is x op y, and whether the exact result leaves int64.
func intOp(op byte, x, y int64) (int64, bool) {
	switch op {
	case '+':
		s := x + y
		return s, (x >= 0) == (y >= 0) && (s >= 0) != (x >= 0)
	case '-':
		d := x - y
		return d, (x >= 0) != (y >= 0) && (d >= 0) != (x >= 0)
	default:
		p := x * y
		return p, x != 0 && (p/x != y || (x == -1 && y == math.MinInt64))
	}
}

// uintOp is x op y, and whether the exact result leaves uint64.
func uintOp(op byte, x, y uint64) (uint64, bool) {
	switch op {
	case '+':
		s, carry := bits.Add64(x, y, 0)
		return s, carry != 0
	case '-':
		d, borrow := bits.Sub64(x, y, 0)
		return d, borrow != 0
	default:
		hi, lo := bits.Mul64(x, y)
		return lo, hi != 0
	}
}

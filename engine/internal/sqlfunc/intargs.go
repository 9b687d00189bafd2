package sqlfunc

import (
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL reads a string where a string function wants a count or a position
// (SUBSTRING('abc', 'x'), LEFT(s, '2abc'), REPEAT(s, ' 3')) as it reads any
// string as an integer: its leading integer, 0 when there is none, with
// warning 1292 when something was cut. go-mysql-server refused such a
// string with an error (1105 "Truncated incorrect bigint value"), so those
// arguments, when they are text, are wrapped in intArg.

// intArgPositions are the children of a string function that MySQL reads
// as integers.
func intArgPositions(e sql.Expression) []int {
	switch e := e.(type) {
	case *guarded: // packetlimit.go: REPEAT, SPACE, LPAD, RPAD, INSERT
		return intArgPositions(e.inner)
	case *function.Substring, *function.Insert:
		return []int{1, 2}
	case function.Left, *function.Left, function.Right, *function.Right, *function.Repeat, *function.Pad, *pad:
		return []int{1}
	case *function.Locate, *nullPosition, *function.SubstringIndex:
		return []int{2}
	case *function.Space:
		return []int{0}
	}
	return nil
}

// lenientIntArgs is e with its text arguments in integer positions read as
// MySQL reads them; ok is false when e has none.
func lenientIntArgs(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	pos := intArgPositions(e)
	if pos == nil {
		return nil, false
	}
	children := e.Children()
	changed := false
	for _, i := range pos {
		if i >= len(children) {
			continue
		}
		if _, done := children[i].(*intArg); done {
			continue
		}
		// REPEAT of a negative count is '' in MySQL; go-mysql-server
		// refused it (1105 "negative Repeat count").
		repeat := isRepeat(e) && i == 1
		if !repeat && !types.IsText(children[i].Type(ctx)) {
			continue
		}
		if !changed {
			children = append([]sql.Expression(nil), children...)
			changed = true
		}
		children[i] = &intArg{child: children[i], floorZero: repeat}
	}
	if !changed {
		return nil, false
	}
	out, err := e.WithChildren(ctx, children...)
	if err != nil {
		return nil, false
	}
	return out, true
}

// isRepeat says e is REPEAT, guarded or not.
func isRepeat(e sql.Expression) bool {
	if g, ok := e.(*guarded); ok {
		e = g.inner
	}
	_, ok := e.(*function.Repeat)
	return ok
}

// intArg is its child read as a BIGINT, a string the way MySQL reads a
// string as an integer; floorZero makes a negative count 0.
type intArg struct {
	child     sql.Expression
	floorZero bool
}

var _ sql.Expression = (*intArg)(nil)

func (a *intArg) Resolved() bool                   { return a.child.Resolved() }
func (a *intArg) String() string                   { return a.child.String() }
func (a *intArg) Type(*sql.Context) sql.Type       { return types.Int64 }
func (a *intArg) IsNullable(ctx *sql.Context) bool { return a.child.IsNullable(ctx) }
func (a *intArg) Children() []sql.Expression       { return []sql.Expression{a.child} }

func (a *intArg) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	return &intArg{child: children[0], floorZero: a.floorZero}, nil
}

func (a *intArg) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := a.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	var n int64
	if types.IsText(a.child.Type(ctx)) {
		s := TextOf(ctx, v)
		var whole bool
		if n, whole = leadingInt(s); !whole {
			ctx.Warn(1292, "Truncated incorrect INTEGER value: '%s'", s)
		}
	} else {
		c, _, err := types.Int64.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		n = c.(int64)
	}
	if a.floorZero && n < 0 {
		n = 0
	}
	return n, nil
}

// leadingInt is s read as MySQL reads a string as an integer: spaces
// skipped, an optional sign, then the digits up to the first other
// character (none: 0), held within BIGINT; whole says nothing but spaces
// followed the digits.
func leadingInt(s string) (n int64, whole bool) {
	t := strings.TrimLeft(s, " \t\n\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	i := 0
	var u uint64
	over := false
	for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
		d := uint64(t[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			over = true
		} else {
			u = u*10 + d
		}
	}
	whole = i > 0 && strings.TrimRight(t[i:], " \t\n\r") == ""
	switch {
	case neg && (over || u > 1<<63):
		return math.MinInt64, whole
	case neg:
		return -int64(u), whole
	case over || u > math.MaxInt64:
		return math.MaxInt64, whole
	}
	return int64(u), whole
}

// nullPosition is LOCATE(substr, str, pos) that is NULL when pos is NULL,
// as in MySQL; go-mysql-server's searched from the start instead.
type nullPosition struct{ *function.Locate }

// withNullPosition is e, a three-argument LOCATE, answering NULL for a
// NULL position; ok is false for anything else.
func withNullPosition(e sql.Expression) (sql.Expression, bool) {
	l, ok := e.(*function.Locate)
	if !ok || len(l.Children()) != 3 {
		return nil, false
	}
	return &nullPosition{l}, true
}

func (n *nullPosition) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	pos, err := n.Children()[2].Eval(ctx, row)
	if err != nil || pos == nil {
		return nil, err
	}
	return n.Locate.Eval(ctx, row)
}

func (n *nullPosition) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	e, err := n.Locate.WithChildren(ctx, children...)
	if err != nil {
		return nil, err
	}
	l, ok := e.(*function.Locate)
	if !ok {
		return e, nil
	}
	return &nullPosition{l}, nil
}

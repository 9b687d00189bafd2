package sqlfunc

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// String functions where go-mysql-server's answer differs from MySQL's:
//
//   - CONCAT, CONCAT_WS, LPAD, RPAD and other string functions
//     (temporalTextFunctions) turn a DATE or DATETIME argument into
//     text through the value alone, so a DATE reads '2024-01-02 00:00:00'
//     and a DATETIME(6) loses its trailing zeros; MySQL uses the argument's
//     type, as a client sees the value ('2024-01-02').
//   - LPAD and RPAD count bytes: RPAD('héllo', 7, 'é') cut an 'é' in half.
//     MySQL counts characters (bytes only for binary strings).

// fixedFunctions are icesql's versions of go-mysql-server built-ins whose
// answers differ from MySQL's; packetlimit.go bounds their results too.
var fixedFunctions = map[string]sql.Function{
	"concat":    TextArgsFunction("concat"),
	"concat_ws": TextArgsFunction("concat_ws"),
	"replace":   TextArgsFunction("replace"),
	"lpad":      sql.Function3{Name: "lpad", Fn: func(ctx *sql.Context, s, n, p sql.Expression) sql.Expression { return newPad(ctx, true, s, n, p) }},
	"rpad":      sql.Function3{Name: "rpad", Fn: func(ctx *sql.Context, s, n, p sql.Expression) sql.Expression { return newPad(ctx, false, s, n, p) }},
}

// TemporalTextFunctions are the other string functions that read a DATE
// or DATETIME argument as text (LENGTH(d) was 19, LEFT(d, 13) showed its
// midnight).
var TemporalTextFunctions = []string{
	"length", "char_length", "character_length", "octet_length", "left", "right",
	"substring", "substr", "mid", "locate", "instr", "reverse",
}

// functionFor is icesql's version of the built-in function name, or
// go-mysql-server's.
func functionFor(name string) sql.Function {
	if f, ok := fixedFunctions[name]; ok {
		return f
	}
	return builtinFunction(name)
}

// TextArgsFunction is go-mysql-server's built-in name with its date and
// datetime arguments turned into text as MySQL does.
func TextArgsFunction(name string) sql.Function {
	builtin := builtinFunction(name)
	return sql.FunctionN{Name: name, Fn: func(ctx *sql.Context, args ...sql.Expression) (sql.Expression, error) {
		return builtin.NewInstance(ctx, withTemporalText(ctx, args))
	}}
}

// withTemporalText wraps the date and datetime expressions of args in
// temporalText.
func withTemporalText(ctx *sql.Context, args []sql.Expression) []sql.Expression {
	out := make([]sql.Expression, len(args))
	for i, a := range args {
		out[i] = a
		if _, done := a.(*temporalText); !done && a.Resolved() && types.IsTime(a.Type(ctx)) {
			out[i] = &temporalText{a}
		}
	}
	return out
}

// temporalText is a DATE, DATETIME or TIMESTAMP expression as the text a
// client sees: its type formats it.
type temporalText struct{ sql.Expression }

func (t *temporalText) Type(*sql.Context) sql.Type { return types.LongText }

func (t *temporalText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.Expression.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	s, err := t.Expression.Type(ctx).SQL(ctx, nil, v)
	if err != nil {
		return nil, err
	}
	text, _ := PaddedYear(s.ToBytes()) // yearpad.go: 0011-01-02, not 11-01-02
	return string(text), nil
}

func (t *temporalText) Children() []sql.Expression { return []sql.Expression{t.Expression} }

func (t *temporalText) WithChildren(_ *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &temporalText{children[0]}, nil
}

func (t *temporalText) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_Default, 4 // a value converted to text, as MySQL's coercibility of a cast
}

// pad is LPAD (left) or RPAD(str, len, padstr), counting characters.
type pad struct {
	str, length, padStr sql.Expression
	left                bool
}

var _ sql.FunctionExpression = (*pad)(nil)
var _ sql.CollationCoercible = (*pad)(nil)

func newPad(ctx *sql.Context, left bool, str, length, padStr sql.Expression) *pad {
	args := withTemporalText(ctx, []sql.Expression{str, length, padStr})
	return &pad{str: args[0], length: args[1], padStr: args[2], left: left}
}

func (p *pad) FunctionName() string {
	if p.left {
		return "lpad"
	}
	return "rpad"
}

func (p *pad) Description() string {
	return "returns the string str, padded with the string padstr to a length of len characters."
}

func (p *pad) Resolved() bool {
	return p.str.Resolved() && p.length.Resolved() && p.padStr.Resolved()
}

func (p *pad) String() string {
	return fmt.Sprintf("%s(%s, %s, %s)", p.FunctionName(), p.str, p.length, p.padStr)
}

func (p *pad) Type(*sql.Context) sql.Type { return types.LongText }

func (p *pad) IsNullable(*sql.Context) bool { return true }

func (p *pad) Children() []sql.Expression { return []sql.Expression{p.str, p.length, p.padStr} }

func (p *pad) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 3 {
		return nil, sql.ErrInvalidChildrenNumber.New(p, len(children), 3)
	}
	return newPad(ctx, p.left, children[0], children[1], children[2]), nil
}

func (p *pad) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	lc, lk := sql.GetCoercibility(ctx, p.str)
	rc, rk := sql.GetCoercibility(ctx, p.padStr)
	return sql.ResolveCoercibility(lc, lk, rc, rk)
}

// Eval follows MySQL: NULL when an argument is NULL, len is negative, or
// padding is needed and padstr is empty; str longer than len is cut to
// its first len characters.
func (p *pad) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	var vals [3]any
	for i, e := range p.Children() {
		v, err := e.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		vals[i] = v
	}
	n, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	length, ok := n.(int64)
	if !ok || length < 0 {
		return nil, nil
	}
	str, padStr := TextOf(ctx, vals[0]), TextOf(ctx, vals[2])
	// Binary strings count bytes, as in MySQL.
	binary := types.IsBinaryType(p.str.Type(ctx)) || types.IsBinaryType(p.padStr.Type(ctx))
	s, ok := padText(str, length, padStr, p.left, binary)
	if !ok {
		return nil, nil
	}
	return s, nil
}

// padText pads str with padStr to length characters (bytes when binary),
// or cuts it to its first length ones; false when padding is needed and
// padStr is empty.
func padText(str string, length int64, padStr string, left, binary bool) (string, bool) {
	count := utf8.RuneCountInString
	if binary {
		count = func(s string) int { return len(s) }
	}
	have := int64(count(str))
	if have >= length {
		return prefixOf(str, length, binary), true
	}
	if padStr == "" {
		return "", false
	}
	need := length - have
	per := int64(count(padStr))
	fill := strings.Repeat(padStr, int(need/per)) + prefixOf(padStr, need%per, binary)
	if left {
		return fill + str, true
	}
	return str + fill, true
}

// prefixOf is the first n characters of s (bytes when binary).
func prefixOf(s string, n int64, binary bool) string {
	if binary {
		return s[:n]
	}
	i := 0
	for k := int64(0); k < n && i < len(s); k++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i]
}

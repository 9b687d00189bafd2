package sqlfunc

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// DefaultMaxAllowedPacket is MySQL 8's default max_allowed_packet (64 MiB);
// go-mysql-server's is 1 GiB, which lets one REPEAT allocate a gigabyte.
const DefaultMaxAllowedPacket = 64 << 20

// resultBound is an upper bound, in bytes, of what a string function returns
// for the argument values vals (already evaluated, in argument order). It
// must be computed without building the result: that is what it guards.
type resultBound func(ctx *sql.Context, vals []any) int64

// PacketBoundedFunctions are the string functions whose result can be far
// larger than their arguments. As in MySQL, a result longer than
// max_allowed_packet is NULL with warning 1301, and never allocated.
var PacketBoundedFunctions = map[string]resultBound{
	"repeat": func(ctx *sql.Context, v []any) int64 {
		return mulBound(int64(len(TextOf(ctx, v[0]))), intOf(ctx, v[1]))
	},
	"space": func(ctx *sql.Context, v []any) int64 { return intOf(ctx, v[0]) },
	"lpad":  padBound,
	"rpad":  padBound,
	"concat": func(ctx *sql.Context, v []any) int64 {
		return sumBound(ctx, v)
	},
	"concat_ws": func(ctx *sql.Context, v []any) int64 {
		if len(v) == 0 {
			return 0
		}
		return addBound(sumBound(ctx, v[1:]), mulBound(int64(len(TextOf(ctx, v[0]))), int64(len(v)-1)))
	},
	"insert": func(ctx *sql.Context, v []any) int64 {
		return addBound(int64(len(TextOf(ctx, v[0]))), int64(len(TextOf(ctx, v[3]))))
	},
	"replace": func(ctx *sql.Context, v []any) int64 {
		s, from, to := TextOf(ctx, v[0]), TextOf(ctx, v[1]), TextOf(ctx, v[2])
		if from == "" || len(to) <= len(from) {
			return int64(len(s))
		}
		return addBound(int64(len(s)), mulBound(int64(strings.Count(s, from)), int64(len(to)-len(from))))
	},
}

// padBound bounds LPAD/RPAD(str, len, padstr): len characters of at most
// the widest character of str and padstr.
func padBound(ctx *sql.Context, v []any) int64 {
	width := int64(1)
	for _, x := range []any{v[0], v[len(v)-1]} {
		s := TextOf(ctx, x)
		for _, r := range s {
			width = max(width, int64(utf8.RuneLen(r)))
		}
	}
	return mulBound(intOf(ctx, v[1]), width)
}

func sumBound(ctx *sql.Context, v []any) int64 {
	var n int64
	for _, x := range v {
		n = addBound(n, int64(len(TextOf(ctx, x))))
	}
	return n
}

func addBound(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulBound(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// TextOf is v as the text a string function sees ("" for NULL or what does
// not convert: the function itself reports that).
func TextOf(ctx *sql.Context, v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	case []byte:
		return string(s)
	}
	c, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return ""
	}
	s, _, err := sql.Unwrap[string](ctx, c)
	if err != nil {
		return ""
	}
	return s
}

// intOf is v as a count (0 for NULL, negative or what does not convert);
// Int64.Convert saturates what is out of range.
func intOf(ctx *sql.Context, v any) int64 {
	if v == nil {
		return 0
	}
	c, _, err := types.Int64.Convert(ctx, v)
	n, ok := c.(int64)
	if err != nil || !ok || n < 0 {
		return 0
	}
	return n
}

// PacketBoundedFunction is go-mysql-server's built-in function name,
// wrapped so that its result is bounded by max_allowed_packet.
func PacketBoundedFunction(name string, bound resultBound) sql.Function {
	builtin := functionFor(name) // stringfuncs.go
	check := func(ctx *sql.Context, vals []any) (bool, error) {
		limit := MaxAllowedPacket(ctx)
		if n := bound(ctx, vals); n > limit {
			ctx.Warn(mysqlerr.ErWarnAllowedPacketOverflowed, "Result of %s() was larger than max_allowed_packet (%d) - truncated", name, limit)
			return true, nil
		}
		return false, nil
	}
	return sql.FunctionN{Name: name, Fn: func(ctx *sql.Context, args ...sql.Expression) (sql.Expression, error) {
		f, err := builtin.NewInstance(ctx, args)
		if err != nil {
			return nil, err
		}
		return newGuarded(ctx, f, check)
	}}
}

// builtinFunction is go-mysql-server's built-in function name.
func builtinFunction(name string) sql.Function {
	for _, f := range function.BuiltIns {
		if f.FunctionName() == name {
			return f
		}
	}
	panic("go-mysql-server has no built-in function " + name)
}

// MaxAllowedPacket is the session's max_allowed_packet.
func MaxAllowedPacket(ctx *sql.Context) int64 {
	v, err := ctx.GetSessionVariable(ctx, "max_allowed_packet")
	if err != nil {
		return DefaultMaxAllowedPacket
	}
	n := intOf(ctx, v)
	if n <= 0 {
		return DefaultMaxAllowedPacket
	}
	return n
}

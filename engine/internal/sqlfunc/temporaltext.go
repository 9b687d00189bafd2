package sqlfunc

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// CAST(x AS CHAR), CONVERT(x, CHAR) and CAST(x AS BINARY) of a DATE,
// DATETIME or TIMESTAMP wrote the value alone as a date-time without its
// fraction: a DATE 2024-03-05 was '2024-03-05 00:00:00', a DATETIME(3)
// 10:11:12.500 was '10:11:12.5'. MySQL writes it as a client sees it, by
// its type. icesql converts it as the string functions do (temporalText,
// stringfuncs.go), from mysqlOperation (overflow.go).

// temporalCast is e, a conversion of a date to text, converting the date's
// text; ok is false for any other e.
func temporalCast(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	c, ok := e.(*expression.Convert)
	if !ok {
		return nil, false
	}
	if t := c.Type(ctx); !types.IsText(t) && !types.IsBinaryType(t) {
		return nil, false
	}
	if _, done := c.Child.(*temporalText); done || !types.IsTime(c.Child.Type(ctx)) {
		return nil, false
	}
	out, err := c.WithChildren(ctx, &temporalText{c.Child})
	return out, err == nil
}

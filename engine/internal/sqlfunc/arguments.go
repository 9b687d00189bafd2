package sqlfunc

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Statements icesql runs itself by writing other SQL (REPLACE and INSERT
// ... ON DUPLICATE KEY UPDATE become MERGEs) see their ? parameters only
// as placeholders. go-mysql-server binds a prepared statement's values to
// the expressions it builds, and fails the statement when a value is left
// unused ("invalid arguments. expected: 0, found: N"). So such a
// statement hands its placeholders to go-mysql-server as the injected
// statement's children: bound while preparing they are BindVars, bound
// while executing they are the values, which the statement then writes
// into its text as literals.

// Placeholders are the ? parameters of node, in order.
func Placeholders(node ast.SQLNode) ast.Exprs {
	var args ast.Exprs
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if v, ok := n.(*ast.SQLVal); ok && v.Type == ast.ValArg {
			args = append(args, v)
		}
		return true, nil
	}, node)
	return args
}

// BindArguments is stmt with its placeholders replaced by the values
// go-mysql-server bound to them (children, from placeholders). bound is
// false while the statement is being prepared: its parameters have no
// values yet.
func BindArguments(stmt ast.Statement, children []any) (_ ast.Statement, bound bool, err error) {
	if len(children) == 0 {
		return stmt, true, nil
	}
	args := Placeholders(stmt)
	if len(args) != len(children) {
		return nil, false, fmt.Errorf("%d parameters bound to %d values", len(args), len(children))
	}
	values := make(map[string]string, len(args))
	for i, c := range children {
		switch e := c.(type) {
		case *expression.BindVar:
			return stmt, false, nil
		case *expression.Literal:
			lit, err := sqlLiteral(e)
			if err != nil {
				return nil, false, err
			}
			values[string(args[i].(*ast.SQLVal).Val)] = lit
		default:
			return nil, false, fmt.Errorf("parameter bound to %T, not a value", c)
		}
	}
	buf := ast.NewTrackedBuffer(func(buf *ast.TrackedBuffer, node ast.SQLNode) {
		if v, ok := node.(*ast.SQLVal); ok && v.Type == ast.ValArg {
			if lit, ok := values[string(v.Val)]; ok {
				buf.WriteString(lit)
				return
			}
		}
		node.Format(buf)
	})
	buf.Myprintf("%v", stmt)
	out, err := ast.Parse(buf.String())
	if err != nil {
		return nil, false, fmt.Errorf("statement with its parameters bound: %w", err)
	}
	return out, true, nil
}

// hexLiteral is a binary string literal of b.
func hexLiteral(b []byte) string {
	if len(b) == 0 {
		return "''"
	}
	return fmt.Sprintf("X'%x'", b)
}

// sqlLiteral is SQL text for the value of a bound parameter.
func sqlLiteral(l *expression.Literal) (string, error) {
	str := func(s string) string { return ast.String(ast.NewStrVal([]byte(s))) }
	switch v := l.Value().(type) {
	case nil:
		return "NULL", nil
	case string:
		if types.IsBinaryType(l.Typ) || !utf8.ValidString(v) {
			return hexLiteral([]byte(v)), nil
		}
		return str(v), nil
	case []byte:
		return hexLiteral(v), nil
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return fmt.Sprintf("%d", v), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'e', -1, 32), nil
	case float64:
		// The exponent keeps it a DOUBLE, as the client sent it.
		return strconv.FormatFloat(v, 'e', -1, 64), nil
	case *apd.Decimal:
		return v.Text('f'), nil
	case apd.Decimal:
		return v.Text('f'), nil
	case time.Time:
		if l.Typ.Type() == sqltypes.Date {
			return str(v.Format("2006-01-02")), nil
		}
		return str(v.Format("2006-01-02 15:04:05.999999")), nil
	case types.Timespan:
		return str(v.String()), nil
	}
	return "", sql.ErrUnsupportedFeature.New(fmt.Sprintf("a parameter of type %s", l.Typ))
}

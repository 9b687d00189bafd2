package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// A client binds a DECIMAL parameter of a prepared statement (JDBC's
// setBigDecimal, Python's Decimal) as MYSQL_TYPE_NEWDECIMAL with the
// number's text. vitess reads its value as a string, so go-mysql-server
// compared it with a DECIMAL column as a double (m = 0.10000000000000000001
// matched 0.1) and `? + d` was a DOUBLE. Bound as a decimal instead, it
// would be a literal of its own narrow type, which go-mysql-server rounds to
// a compared column's type while binding (d > 2.499 became d > 2.50, as for
// the literals decimalLiterals wraps). So decimalParams binds it as a
// DECIMAL and wraps its ? in CAST(? AS DECIMAL(65, its scale)) in the
// statement's text, as decimalLiterals does for literals; a statement with
// other text is prepared anew by go-mysql-server, under that text.

// decimalParamHandler binds the DECIMAL parameters of prepared statements
// as decimals.
type decimalParamHandler struct {
	mysql.Handler
}

func (h decimalParamHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	if p, ok := decimalParams(prepare); ok {
		prepare = p
	}
	return h.Handler.ComStmtExecute(ctx, c, prepare, callback)
}

// decimalParams is prepare with its DECIMAL parameters bound as decimals,
// or ok false when it has none (or its text cannot be rewritten).
func decimalParams(prepare *mysql.PrepareData) (_ *mysql.PrepareData, ok bool) {
	scales := map[int]int{} // parameter index: scale
	for i, t := range prepare.ParamsType {
		if querypb.Type(t) != sqltypes.Decimal {
			continue
		}
		bv := prepare.BindVars[fmt.Sprintf("v%d", i+1)]
		if bv == nil || bv.Type != sqltypes.VarBinary {
			continue
		}
		if scale, ok := plainDecimal(string(bv.Value)); ok {
			scales[i] = scale
		}
	}
	if len(scales) == 0 {
		return nil, false
	}
	text, ok := castParams(prepare.PrepareStmt, scales)
	if !ok {
		return nil, false
	}
	out := *prepare
	out.PrepareStmt = text
	out.BindVars = make(map[string]*querypb.BindVariable, len(prepare.BindVars))
	for k, v := range prepare.BindVars {
		out.BindVars[k] = v
	}
	for i := range scales {
		name := fmt.Sprintf("v%d", i+1)
		out.BindVars[name] = &querypb.BindVariable{Type: sqltypes.Decimal, Value: prepare.BindVars[name].Value}
	}
	return &out, true
}

// plainDecimal is the scale of s when s is a decimal number as MySQL writes
// one (sign, digits, point, digits) that a DECIMAL holds.
func plainDecimal(s string) (scale int, ok bool) {
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, _ := strings.Cut(body, ".")
	if whole == "" && frac == "" {
		return 0, false
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	digits := len(strings.TrimLeft(whole, "0")) + len(frac)
	if len(frac) > types.DecimalTypeMaxScale || digits > types.DecimalTypeMaxPrecision {
		return 0, false
	}
	return len(frac), true
}

// castParams is query with the ?s of the given indexes (from 0, in the
// order of the text) in CAST(? AS DECIMAL(65, scale)). The ?s are found
// by vitess's tokenizer, so none inside a string or a comment is taken.
func castParams(query string, scales map[int]int) (string, bool) {
	var b strings.Builder
	tkn := ast.NewStringTokenizer(query)
	last, index := 0, 0
	for {
		typ, _ := tkn.Scan()
		if typ == 0 {
			break
		}
		if typ == ast.LEX_ERROR {
			return "", false
		}
		if typ != ast.VALUE_ARG {
			continue
		}
		// The tokenizer's Position is one past the character it has
		// read ahead, which follows the ?.
		at := tkn.Position - 2
		if at < last || at < 0 || at >= len(query) || query[at] != '?' {
			return "", false
		}
		if scale, ok := scales[index]; ok {
			b.WriteString(query[last:at])
			fmt.Fprintf(&b, "CAST(? AS DECIMAL(%d, %d))", types.DecimalTypeMaxPrecision, scale)
			last = at + 1
		}
		index++
	}
	b.WriteString(query[last:])
	return b.String(), true
}

// The same holds for EXECUTE ... USING @v of a statement prepared by SQL's
// PREPARE: go-mysql-server binds a DECIMAL user variable as a literal of its
// value's narrow type, and rounds it to a compared column's type. So icesql
// keeps the text of each PREPARE and, at each EXECUTE, prepares the
// statement again from it with the ?s of DECIMAL variables in a CAST.

// preparedDecimals records the text of a PREPARE, and for an EXECUTE
// prepares the statement again as its DECIMAL variables need.
func (p parser) preparedDecimals(ctx context.Context, stmt ast.Statement) {
	sctx, ok := ctx.(*sql.Context)
	if !ok {
		return
	}
	s, ok := sctx.Session.(*Session)
	if !ok {
		return
	}
	switch stmt := stmt.(type) {
	case *ast.Prepare:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.preparedTexts == nil {
			s.preparedTexts = map[string]string{}
		}
		// PREPARE ... FROM @var: the variable's text is read later.
		if strings.HasPrefix(stmt.Expr, "@") {
			delete(s.preparedTexts, stmt.Name)
			return
		}
		s.preparedTexts[stmt.Name] = stmt.Expr
	case *ast.Execute:
		s.mu.Lock()
		text, ok := s.preparedTexts[stmt.Name]
		s.mu.Unlock()
		if !ok {
			return
		}
		if _, ok := sctx.Session.GetPreparedQuery(stmt.Name); !ok {
			return // deallocated
		}
		scales := map[int]int{}
		for i, name := range stmt.VarList {
			t, v, err := sctx.GetUserVariable(sctx, strings.TrimPrefix(name, "@"))
			if err != nil || v == nil || !types.IsDecimal(t) {
				continue
			}
			scales[i] = int(t.(sql.DecimalType).Scale())
		}
		text, ok = castParams(text, scales)
		if !ok {
			return
		}
		again, _, err := p.ParseOneWithOptions(ctx, text, sql.LoadSqlMode(sctx).ParserOptions())
		if err != nil {
			return // EXECUTE answers with the statement PREPARE kept
		}
		sctx.Session.PrepareQuery(stmt.Name, again)
	}
}

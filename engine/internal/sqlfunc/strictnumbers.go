package sqlfunc

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// In strict mode MySQL refuses text written into a number column unless
// it is a number (spaces around it allowed): text with no number in front,
// an empty or blank string too, with ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
// (1366, "Incorrect integer value: 'x' for column 'i' at row 1"), and a
// number followed by other text ('12abc') with WARN_DATA_TRUNCATED (1265,
// "Data truncated for column 'i' at row 1"). go-mysql-server converted ''
// to 0 without a word (its string-to-number conversion reads no digit as 0
// and reports no truncation for an empty rest) and stored 0, and refused
// the others with a message that names no column. strictNumbers checks
// those values as an INSERT ... VALUES, an INSERT ... SELECT or an UPDATE
// is built (INSERT IGNORE and UPDATE IGNORE keep the 0, as MySQL does with
// a warning, and so does a session without a strict sql_mode).

// strictNumbers is n with the text values it writes into number columns
// checked, or ok false when n writes none unchecked.
func strictNumbers(ctx *sql.Context, n sql.Node) (sql.Node, bool) {
	if !strictMode(ctx) {
		return nil, false
	}
	switch n := n.(type) {
	case *plan.InsertInto:
		return strictInsert(ctx, n)
	case *plan.UpdateSource:
		return strictUpdate(ctx, n)
	}
	return nil, false
}

func strictMode(ctx *sql.Context) bool {
	m := sql.LoadSqlMode(ctx)
	return m.ModeEnabled("STRICT_TRANS_TABLES") || m.ModeEnabled("STRICT_ALL_TABLES")
}

func strictInsert(ctx *sql.Context, ii *plan.InsertInto) (sql.Node, bool) {
	if ii.Ignore {
		return nil, false
	}
	sch := ii.Destination.Schema(ctx)
	// The analyzer projects the VALUES onto every column of the table, in
	// the table's order: value k of each row goes to the column whose
	// projection reads field k.
	var values *plan.Values
	cols := make([]*sql.Column, 0, len(sch))
	switch src := ii.Source.(type) {
	case *plan.Values:
		values = src
		for _, name := range ii.ColumnNames {
			var col *sql.Column
			if j := sch.IndexOfColName(name); j >= 0 {
				col = sch[j]
			}
			cols = append(cols, col)
		}
	case *plan.Project:
		if len(src.Projections) != len(sch) {
			return nil, false
		}
		v, ok := src.Child.(*plan.Values)
		if !ok {
			return strictProjection(ctx, ii, src, sch)
		}
		if len(v.ExpressionTuples) == 0 {
			return nil, false
		}
		values = v
		cols = make([]*sql.Column, len(v.ExpressionTuples[0]))
		for j, e := range src.Projections {
			if gf, ok := e.(*expression.GetField); ok && gf.Index() >= 0 && gf.Index() < len(cols) {
				cols[gf.Index()] = sch[j]
			}
		}
	default:
		return nil, false
	}
	changed := false
	tuples := make([][]sql.Expression, len(values.ExpressionTuples))
	for r, tuple := range values.ExpressionTuples {
		tuples[r] = tuple
		if len(tuple) != len(cols) {
			continue
		}
		out := make([]sql.Expression, len(tuple))
		for i, e := range tuple {
			out[i] = e
			if c, ok := checkedNumber(ctx, e, cols[i], r+1); ok {
				out[i], changed = c, true
			}
		}
		tuples[r] = out
	}
	if !changed {
		return nil, false
	}
	nv := *values
	nv.ExpressionTuples = tuples
	if p, ok := ii.Source.(*plan.Project); ok {
		np, err := p.WithChildren(ctx, &nv)
		if err != nil {
			return nil, false
		}
		return ii.WithSource(np), true
	}
	return ii.WithSource(&nv), true
}

// strictProjection checks the projection of an INSERT ... SELECT onto the
// table's columns: a text column of the SELECT read into a number column.
func strictProjection(ctx *sql.Context, ii *plan.InsertInto, p *plan.Project, sch sql.Schema) (sql.Node, bool) {
	from := p.Child.Schema(ctx)
	out := make([]sql.Expression, len(p.Projections))
	changed := false
	for j, e := range p.Projections {
		out[j] = e
		gf, ok := e.(*expression.GetField)
		if !ok || gf.Index() < 0 || gf.Index() >= len(from) || !types.IsText(from[gf.Index()].Type) {
			continue
		}
		if !types.IsNumber(sch[j].Type) {
			continue
		}
		out[j], changed = &numberText{child: e, column: sch[j].Name, kind: numberKind(sch[j].Type)}, true
	}
	if !changed {
		return nil, false
	}
	np, err := p.WithExpressions(ctx, out...)
	if err != nil {
		return nil, false
	}
	return ii.WithSource(np), true
}

func strictUpdate(ctx *sql.Context, u *plan.UpdateSource) (sql.Node, bool) {
	if u.Ignore {
		return nil, false
	}
	exprs := u.Expressions()
	out := make([]sql.Expression, len(exprs))
	changed := false
	for i, e := range exprs {
		out[i] = e
		set, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		gf, ok := set.LeftChild.(*expression.GetField)
		if !ok {
			continue
		}
		col := &sql.Column{Name: gf.Name(), Type: gf.Type(ctx)}
		if c, ok := checkedNumber(ctx, set.RightChild, col, 0); ok {
			if ns, err := set.WithChildren(ctx, set.LeftChild, c); err == nil {
				out[i], changed = ns, true
			}
		}
	}
	if !changed {
		return nil, false
	}
	n, err := u.WithExpressions(ctx, out...)
	if err != nil {
		return nil, false
	}
	return n, true
}

// checkedNumber is e checked for text that is not a number when it is
// text written into col, a number column.
func checkedNumber(ctx *sql.Context, e sql.Expression, col *sql.Column, row int) (sql.Expression, bool) {
	if col == nil || !types.IsNumber(col.Type) || !types.IsText(e.Type(ctx)) {
		return nil, false
	}
	if _, done := e.(*numberText); done {
		return nil, false
	}
	return &numberText{child: e, column: col.Name, kind: numberKind(col.Type), row: row}, true
}

func numberKind(t sql.Type) string {
	switch {
	case types.IsInteger(t):
		return "integer"
	case types.IsDecimal(t):
		return "decimal"
	}
	return "double"
}

// numberText is its child, failing when it is text that is not a number
// (1366, or 1265 when a number is followed by other text).
type numberText struct {
	child  sql.Expression
	column string
	kind   string
	row    int // the row of an INSERT's VALUES, 0 in an UPDATE
}

var _ sql.Expression = (*numberText)(nil)

func (b *numberText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := b.child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return v, nil
	}
	trimmed := strings.TrimSpace(s)
	n := numberPrefix(trimmed)
	if n > 0 && n == len(trimmed) {
		return v, nil
	}
	at := ""
	if b.row > 0 {
		at = fmt.Sprintf(" at row %d", b.row)
	}
	if n > 0 {
		return nil, mysqlerr.New(mysql.ERWarnDataTruncated, "Data truncated for column '%s'%s", b.column, at)
	}
	return nil, mysqlerr.New(mysql.ERTruncatedWrongValueForField, "Incorrect %s value: '%s' for column '%s'%s", b.kind, s, b.column, at)
}

// numberPrefix is the length of the number s starts with, as MySQL reads
// one from text: a sign, digits with an optional fraction (or a fraction
// alone), and an exponent when digits follow its e; 0 when s starts with
// none.
func numberPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func(j int) int {
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	j := digits(i)
	whole := j > i
	if j < len(s) && s[j] == '.' {
		if k := digits(j + 1); whole || k > j+1 {
			whole, j = true, k
		}
	}
	if !whole {
		return 0
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if e := digits(k); e > k {
			j = e
		}
	}
	return j
}

func (b *numberText) Type(ctx *sql.Context) sql.Type   { return b.child.Type(ctx) }
func (b *numberText) IsNullable(ctx *sql.Context) bool { return b.child.IsNullable(ctx) }
func (b *numberText) Resolved() bool                   { return b.child.Resolved() }
func (b *numberText) String() string                   { return b.child.String() }
func (b *numberText) Children() []sql.Expression       { return []sql.Expression{b.child} }
func (b *numberText) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, b.child)
}

func (b *numberText) WithChildren(ctx *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(b, len(children), 1)
	}
	nb := *b
	nb.child = children[0]
	return &nb, nil
}

package vecexec

import (
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown/vector"
)

// VectorizeVar is the session variable that turns the vectorized path off
// (SET icesql_vectorize = OFF): an escape hatch for users, and the way the
// differential tests get the row path's answer.
const VectorizeVar = "icesql_vectorize"

var registerVectorizeVar sync.Once

// AddVectorizeVar declares icesql_vectorize; go-mysql-server's system
// variables are process-wide.
func AddVectorizeVar() {
	registerVectorizeVar.Do(func() {
		sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{sqlval.SwitchVariable(VectorizeVar)})
	})
}

func VectorizeOn(ctx *sql.Context) bool { return sqlval.SwitchedOn(ctx, VectorizeVar) }

// Vectorize replaces a GroupBy over an Iceberg scan (through a Filter and a
// table alias, both optional) with a vectorAggregate computing it on Arrow
// batches (pushdown/vector), when every expression in it translates; the
// rest of the plan (the ORDER BY, LIMIT and final projection above, which
// see only the groups) stays with go-mysql-server. A subtree that does not
// translate stays on the row path, and EXPLAIN says why.
func Vectorize(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	// A subquery's rows carry its outer scope's columns in front, which
	// the vector node's rows do not: subqueries stay on the row path.
	if !VectorizeOn(ctx) || (scope != nil && !scope.IsEmpty()) {
		return n, transform.SameTree, nil
	}
	read := columnsReadAbove(ctx, n) // vecpassthrough.go
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return n, transform.SameTree, nil
		}
		child := gb.Child
		var cond sql.Expression
		if f, ok := child.(*plan.Filter); ok {
			cond, child = f.Expression, f.Child
		}
		if ta, ok := child.(*plan.TableAlias); ok {
			child = ta.Child
		}
		rt, ok := child.(*plan.ResolvedTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		t, ok := AsScanTable(rt.Table)
		if !ok {
			return n, transform.SameTree, nil
		}
		node, why := newVectorAggregate(ctx, t, gb, cond, read[gb])
		if node == nil {
			t.ScanRef().VectorNote = "no, the row path runs the GROUP BY: " + why
			return n, transform.SameTree, nil
		}
		t.ScanRef().VectorNote = vectorAggNote
		return node, transform.NewTree, nil
	})
}

// VecTranslator maps go-mysql-server expressions over one Iceberg table to
// pushdown/vector expressions, declining what it cannot compute exactly as
// go-mysql-server's row path would.
type VecTranslator struct {
	Ctx  *sql.Context
	T    ScanTable
	Cols map[string]bool // Iceberg names read
	// rowLevel: translating a row-level change's WHERE (rowscan_fast.go).
	RowLevel bool
	// columnOf, when set, resolves column references instead of t: the
	// columns of a GROUP BY over a join (vecjoinagg.go).
	columnOf func(*expression.GetField) (vector.Column, iceberg.Type, error)
}

type declined string

func (d declined) Error() string { return string(d) }

func decline(format string, args ...any) error { return declined(fmt.Sprintf(format, args...)) }

// column is what a column reference reads and how its values look in a
// row of the row path (rowValue in sqlval/types.go).
func (tr *VecTranslator) column(gf *expression.GetField) (vector.Column, iceberg.Type, error) {
	if tr.columnOf != nil {
		return tr.columnOf(gf)
	}
	if !tr.T.Owns(gf) {
		return vector.Column{}, nil, decline("column %s is not the scanned table's", gf.Name())
	}
	j := tr.T.AllColumns().IndexOfColName(gf.Name())
	if j < 0 || j >= len(tr.T.ColumnNames()) {
		return vector.Column{}, nil, decline("unknown column %s", gf.Name())
	}
	name := tr.T.ColumnNames()[j]
	f, ok := tr.T.Iceberg().Schema().FindFieldByName(name)
	if !ok {
		return vector.Column{}, nil, decline("unknown column %s", gf.Name())
	}
	var typ vector.Type
	switch ft := f.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.BooleanType: // BOOLEAN is TINYINT(1)
		typ = vector.Type{Kind: vector.Int}
	case iceberg.DecimalType:
		typ = vector.Type{Kind: vector.Decimal, Scale: int32(ft.Scale())}
	case iceberg.DateType:
		typ = vector.Type{Kind: vector.Date}
	case iceberg.Float64Type, iceberg.Float32Type:
		typ = vector.Type{Kind: vector.Float} // keys, COUNT, MIN and MAX only (pushdown/vector/float.go)
	case iceberg.StringType:
		st, ok := tr.T.AllColumns()[j].Type.(sql.StringType)
		if !ok || st.Collation() != sql.Collation_utf8mb4_0900_bin {
			return vector.Column{}, nil, decline("column %s does not compare bytewise", gf.Name())
		}
		typ = vector.Type{Kind: vector.String}
	default:
		return vector.Column{}, nil, decline("column %s has type %s", gf.Name(), f.Type)
	}
	tr.Cols[name] = true
	return vector.Column{Name: name, T: typ}, f.Type, nil
}

// value translates an expression giving a number, date or string.
func (tr *VecTranslator) value(e sql.Expression) (vector.Expr, error) {
	switch e := e.(type) {
	case *expression.GetField:
		c, _, err := tr.column(e)
		return c, err
	case *expression.Literal:
		return tr.literal(e)
	case *sqlfunc.MySQLMod: // sqlfunc/mod.go: an integer remainder is a BIGINT, as the vector's
		if e.Integer || tr.RowLevel {
			return tr.mod(e.Mod) // rowscan_fast.go
		}
	case *expression.Mod:
		if tr.RowLevel {
			return tr.mod(e) // rowscan_fast.go
		}
	case *function.Extract:
		if unit, ok := e.LeftChild.(*expression.Literal); ok && strings.EqualFold(fmt.Sprint(unit.Value()), "YEAR") {
			return tr.year(e.RightChild)
		}
	case *function.Year:
		return tr.year(e.Child)
	case *sqlfunc.CheckedArithmetic: // sqlfunc/overflow.go: the vector path checks too
		return tr.value(e.Arithmetic)
	case *expression.Arithmetic:
		op := vector.ArithOp(e.Op[0])
		if len(e.Op) != 1 || (op != '+' && op != '-' && op != '*') {
			return nil, decline("operator %s", e.Op)
		}
		l, err := tr.value(e.LeftChild)
		if err != nil {
			return nil, err
		}
		r, err := tr.value(e.RightChild)
		if err != nil {
			return nil, err
		}
		a := vector.Arith{Op: op, L: l, R: r}
		if err := vector.Check(a, false); err != nil {
			return nil, decline("%s: %v", e, err)
		}
		return a, nil
	}
	return nil, decline("expression %s", e)
}

// caseWhen translates a searched CASE of numbers (TPC-H Q8, Q12, Q14:
// SUM(CASE WHEN ... THEN ... ELSE 0 END)) at the type go-mysql-server
// gives it, to which it converts each branch's value.
func (tr *VecTranslator) caseWhen(e *expression.Case) (vector.Expr, int32, error) {
	if e.Expr != nil {
		return nil, 0, decline("CASE %s WHEN", e.Expr)
	}
	var scale int32 // of the CASE's type
	switch ct := e.Type(tr.Ctx).(type) {
	case sql.DecimalType:
		scale = int32(ct.Scale())
	default:
		if !types.IsInteger(ct) || types.IsUnsigned(ct) {
			return nil, 0, decline("a CASE of type %s", ct)
		}
	}
	branches := []sql.Expression{e.Else}
	for _, b := range e.Branches {
		branches = append(branches, b.Value)
	}
	vals := make([]vector.Expr, len(branches))
	t := vector.Type{Kind: vector.Int} // the branches' own: the widest scale
	for i, b := range branches {
		if b == nil {
			continue
		}
		v, err := tr.value(b)
		if err != nil {
			return nil, 0, err
		}
		vals[i] = v
		switch bt := v.Type(); bt.Kind {
		case vector.Decimal:
			t = vector.Type{Kind: vector.Decimal, Scale: max(t.Scale, bt.Scale)}
		case vector.Int:
		default:
			if c, ok := v.(vector.Const); !ok || !c.Null {
				return nil, 0, decline("a CASE of %s", b)
			}
		}
	}
	if t.Scale > scale || (t.Kind == vector.Decimal) != (scale > 0) {
		return nil, 0, decline("a CASE whose type %s rounds its branches", e.Type(tr.Ctx))
	}
	for i, v := range vals {
		if c, ok := v.(vector.Const); v == nil || ok && c.Null {
			vals[i] = vector.Const{Null: true, T: t}
		}
	}
	acc := vals[0]
	for i := len(e.Branches) - 1; i >= 0; i-- {
		when, err := tr.Predicate(e.Branches[i].Cond)
		if err != nil {
			return nil, 0, err
		}
		acc = vector.Case{When: when, Then: vals[i+1], Else: acc, T: t}
	}
	if err := vector.Check(acc, false); err != nil {
		return nil, 0, decline("%s: %v", e, err)
	}
	return acc, scale - t.Scale, nil
}

// year is the year of d, a date.
func (tr *VecTranslator) year(d sql.Expression) (vector.Expr, error) {
	v, err := tr.value(d)
	if err != nil {
		return nil, err
	}
	y := vector.Year{E: v}
	if err := vector.Check(y, false); err != nil {
		return nil, decline("the year of %s: %v", d, err)
	}
	return y, nil
}

func (tr *VecTranslator) literal(l *expression.Literal) (vector.Const, error) {
	switch v := l.Val.(type) {
	case nil:
		return vector.Const{Null: true}, nil
	case int8:
		return intConst(int64(v)), nil
	case int16:
		return intConst(int64(v)), nil
	case int32:
		return intConst(int64(v)), nil
	case int64:
		return intConst(v), nil
	case uint8:
		return intConst(int64(v)), nil
	case uint16:
		return intConst(int64(v)), nil
	case uint32:
		return intConst(int64(v)), nil
	case *apd.Decimal:
		return decimalConst(v)
	case apd.Decimal:
		return decimalConst(&v)
	case string:
		if types.IsText(l.Type(tr.Ctx)) {
			return vector.Const{T: vector.Type{Kind: vector.String}, S: v}, nil
		}
	case time.Time:
		if days, ok := wholeDay(v); ok && (types.IsDateType(l.Type(tr.Ctx)) || types.IsDatetimeType(l.Type(tr.Ctx))) {
			return vector.Const{T: vector.Type{Kind: vector.Date}, I: days}, nil
		}
	}
	return vector.Const{}, decline("literal %s", l)
}

func intConst(v int64) vector.Const { return vector.Const{T: vector.Type{Kind: vector.Int}, I: v} }

func decimalConst(d *apd.Decimal) (vector.Const, error) {
	if d.Form != apd.Finite || d.Exponent > 0 || d.Exponent < -38 || !d.Coeff.IsInt64() {
		return vector.Const{}, decline("decimal literal %s", d)
	}
	v := d.Coeff.Int64()
	if d.Negative {
		v = -v
	}
	return vector.Const{T: vector.Type{Kind: vector.Decimal, Scale: -d.Exponent}, I: v}, nil
}

// wholeDay is t as days since 1970-01-01 when t is a midnight in UTC.
func wholeDay(t time.Time) (int64, bool) {
	t = t.UTC()
	if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
		return 0, false
	}
	secs := t.Unix()
	if secs%86400 != 0 {
		return 0, false
	}
	return secs / 86400, true
}

// dateText is a string literal written YYYY-MM-DD, as days; a date column
// compares with it as with that date.
func dateText(c vector.Const) (vector.Const, bool) {
	if c.T.Kind != vector.String || c.Null || len(c.S) != 10 {
		return c, false
	}
	t, err := time.Parse("2006-01-02", c.S)
	if err != nil {
		return c, false
	}
	days, _ := wholeDay(t)
	return vector.Const{T: vector.Type{Kind: vector.Date}, I: days}, true
}

// predicates translates the two sides of AND or OR.
func (tr *VecTranslator) predicates(left, right sql.Expression) (vector.Expr, vector.Expr, error) {
	l, err := tr.Predicate(left)
	if err != nil {
		return nil, nil, err
	}
	r, err := tr.Predicate(right)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// Predicate translates a WHERE condition.
func (tr *VecTranslator) Predicate(e sql.Expression) (vector.Expr, error) {
	switch e := e.(type) {
	case *expression.And:
		l, r, err := tr.predicates(e.LeftChild, e.RightChild)
		if err != nil {
			return nil, err
		}
		return vector.And{L: l, R: r}, nil
	case *expression.Or:
		l, r, err := tr.predicates(e.LeftChild, e.RightChild)
		if err != nil {
			return nil, err
		}
		return vector.Or{L: l, R: r}, nil
	case *expression.Not:
		in, err := tr.Predicate(e.Child)
		if err != nil {
			return nil, err
		}
		return vector.Not{E: in}, nil
	case *expression.IsNull:
		in, err := tr.value(e.Child)
		if err != nil {
			return nil, err
		}
		return vector.IsNull{E: in}, nil
	case *expression.Equals:
		return tr.compare(vector.EQ, e.Left(), e.Right())
	case *expression.LessThan:
		return tr.compare(vector.LT, e.Left(), e.Right())
	case *expression.LessThanOrEqual:
		return tr.compare(vector.LE, e.Left(), e.Right())
	case *expression.GreaterThan:
		return tr.compare(vector.GT, e.Left(), e.Right())
	case *expression.GreaterThanOrEqual:
		return tr.compare(vector.GE, e.Left(), e.Right())
	case *expression.Between:
		lo, err := tr.compare(vector.GE, e.Val, e.Lower)
		if err != nil {
			return nil, err
		}
		hi, err := tr.compare(vector.LE, e.Val, e.Upper)
		if err != nil {
			return nil, err
		}
		return vector.And{L: lo, R: hi}, nil
	case *expression.InTuple:
		return tr.in(e)
	case *expression.HashInTuple:
		return tr.in(e)
	case *expression.Like:
		return tr.like(e) // veclike.go
	case *expression.GetField:
		// WHERE b: a BOOLEAN (TINYINT(1)) or integer column holds where it
		// is neither 0 nor NULL.
		if c, _, err := tr.column(e); err == nil && c.T.Kind == vector.Int {
			return vector.Compare{Op: vector.NE, L: c, R: intConst(0)}, nil
		}
	}
	return nil, decline("condition %s", e)
}

// operands translates the two sides of a comparison, making a YYYY-MM-DD
// string a date where the other side is a date.
func (tr *VecTranslator) operands(l, r sql.Expression) (vector.Expr, vector.Expr, error) {
	lv, err := tr.value(l)
	if err != nil {
		return nil, nil, err
	}
	rv, err := tr.value(r)
	if err != nil {
		return nil, nil, err
	}
	lv, rv = asDate(lv, rv), asDate(rv, lv)
	if lc, ok := lv.(vector.Const); ok && lc.Null {
		lc.T = rv.Type()
		lv = lc
	}
	if rc, ok := rv.(vector.Const); ok && rc.Null {
		rc.T = lv.Type()
		rv = rc
	}
	return lv, rv, nil
}

func asDate(e, other vector.Expr) vector.Expr {
	if c, ok := e.(vector.Const); ok && other.Type().Kind == vector.Date {
		if d, ok := dateText(c); ok {
			return d
		}
	}
	return e
}

func (tr *VecTranslator) compare(op vector.CmpOp, l, r sql.Expression) (vector.Expr, error) {
	lv, rv, err := tr.operands(l, r)
	if err != nil {
		return nil, err
	}
	c := vector.Compare{Op: op, L: lv, R: rv}
	if err := vector.Check(c, true); err != nil {
		return nil, decline("%s %s %s: %v", l, opText(op), r, err)
	}
	return c, nil
}

func opText(op vector.CmpOp) string {
	return [...]string{"", "=", "<>", "<", "<=", ">", ">="}[op]
}

// in translates IN (and the HashInTuple the analyzer makes of it). The
// hashed form converts the list to the column's type first, so a list
// element must convert exactly: no decimal with more digits after the
// point than the column, no decimal for an integer column.
func (tr *VecTranslator) in(e interface {
	sql.Expression
	Left() sql.Expression
	Right() sql.Expression
}) (vector.Expr, error) {
	tuple, ok := e.Right().(expression.Tuple)
	if !ok {
		return nil, decline("IN %s", e.Right())
	}
	left, err := tr.value(e.Left())
	if err != nil {
		return nil, err
	}
	out := vector.In{E: left}
	for _, el := range tuple {
		lit, ok := el.(*expression.Literal)
		if !ok {
			return nil, decline("IN element %s", el)
		}
		c, err := tr.literal(lit)
		if err != nil {
			return nil, err
		}
		if c.Null {
			c.T = left.Type()
		}
		c = asDate(c, left).(vector.Const)
		if lt := left.Type(); !c.Null && (c.T.Kind != lt.Kind && !(lt.Kind == vector.Decimal && c.T.Kind == vector.Int) || c.T.Scale > lt.Scale) {
			return nil, decline("IN element %s for a %s", el, e.Left())
		}
		out.List = append(out.List, c)
	}
	if err := vector.Check(out, true); err != nil {
		return nil, decline("%s: %v", e, err)
	}
	return out, nil
}

// unalias strips an alias, returning the name the column shows.
func unalias(e sql.Expression) (sql.Expression, string) {
	if a, ok := e.(*expression.Alias); ok {
		return a.Child, a.Name()
	}
	return e, e.String()
}

// vecOutput is one column of the GroupBy's rows: a grouping key, or an
// aggregate, and how to give its value as the row path does.
type vecOutput struct {
	key   int // index into the plan's keys, or -1
	agg   int // index into the plan's aggregates, or -1
	value func(vector.Value) any
	// for aggregates
	fn    vector.AggFunc
	scale int32
	up    int32 // the power of ten a SUM (at scale) is multiplied by to be at its type's scale
	kind  vector.Kind
	exact *sqlval.ExactAgg // the exact SUM or AVG wrapping fn, if any
}

// newVectorAggregate translates gb; above is what the nodes above it refer
// to (columnsReadAbove).
func newVectorAggregate(ctx *sql.Context, t ScanTable, gb *plan.GroupBy, cond sql.Expression, above map[string]bool) (*vectorAggregate, string) {
	if t.AsOf() != nil {
		return nil, "time travel reads are not vectorized"
	}
	tr := &VecTranslator{Ctx: ctx, T: t, Cols: map[string]bool{}}
	p := &vector.Plan{}
	if cond != nil {
		f, err := tr.Predicate(cond)
		if err != nil {
			return nil, err.Error()
		}
		p.Filter = f
	}
	keys, keyFields, keyTypes, why := tr.groupKeys(gb)
	if why != "" {
		return nil, why
	}
	p.Keys = keys
	var outs []vecOutput
	for _, dep := range gb.SelectDeps {
		e, _ := unalias(dep)
		if gf, ok := e.(*expression.GetField); ok {
			k, isKey := keyFields[strings.ToLower(gf.String())]
			if isKey {
				outs = append(outs, vecOutput{key: k, agg: -1, value: columnValue(p.Keys[k].Type(), keyTypes[k])})
				continue
			}
			if e, ok = passThrough(gf, above); !ok {
				return nil, "selecting " + gf.String() + ", which is not grouped by"
			}
		}
		out, agg, err := tr.aggregate(e)
		if err != nil {
			return nil, err.Error()
		}
		out.key, out.agg = -1, len(p.Aggs)
		p.Aggs = append(p.Aggs, agg)
		outs = append(outs, out)
	}
	if err := p.Check(); err != nil {
		return nil, err.Error()
	}
	var read []string
	for _, name := range t.ColumnNames() {
		if tr.Cols[name] {
			read = append(read, name)
		}
	}
	return &vectorAggregate{t: t, read: read, plan: p, outs: outs, schema: gb.Schema(ctx), original: gb}, ""
}

// groupKeys translates gb's grouping columns: the plan's keys, each key's
// index by its column's lower-case name, and the keys' Iceberg types; or
// says why one does not translate.
func (tr *VecTranslator) groupKeys(gb *plan.GroupBy) ([]vector.Expr, map[string]int, []iceberg.Type, string) {
	var keys []vector.Expr
	fields := map[string]int{}
	var types []iceberg.Type
	for _, k := range gb.GroupByExprs {
		gf, ok := k.(*expression.GetField)
		if !ok {
			return nil, nil, nil, "grouping by " + k.String()
		}
		c, it, err := tr.column(gf)
		if err != nil {
			return nil, nil, nil, err.Error()
		}
		fields[strings.ToLower(gf.String())] = len(keys)
		keys = append(keys, c)
		types = append(types, it)
	}
	return keys, fields, types, ""
}

func (tr *VecTranslator) aggregate(e sql.Expression) (vecOutput, vector.Agg, error) {
	var fn vector.AggFunc
	var arg sql.Expression
	e, exact := unwrapExact(e)
	switch a := e.(type) {
	case *aggregation.Count:
		if countsRows(a) {
			return vecOutput{fn: vector.CountStar}, vector.Agg{Func: vector.CountStar}, nil
		}
		fn, arg = vector.Count, a.Child
	case *aggregation.Sum:
		fn, arg = vector.Sum, a.Child
	case *aggregation.Avg:
		fn, arg = vector.Avg, a.Child
	case *aggregation.Min:
		fn, arg = vector.Min, a.Child
	case *aggregation.Max:
		fn, arg = vector.Max, a.Child
	case *aggregation.CountDistinct:
		if err := countDistinctArg(a); err != nil {
			return vecOutput{}, vector.Agg{}, err
		}
		fn, arg = vector.CountDistinct, a.Children()[0]
	default:
		return vecOutput{}, vector.Agg{}, decline("aggregate %s", e)
	}
	if w, ok := e.(sql.WindowAdaptableExpression); ok && w.Window() != nil {
		return vecOutput{}, vector.Agg{}, decline("window %s", e)
	}
	var v vector.Expr
	var up int32
	var err error
	if c, ok := arg.(*expression.Case); ok {
		// A CASE is computed at its branches' scale; its sum is brought
		// to the scale of the CASE's type, as the row path sums values
		// converted to it (DECIMAL(65,30) when a branch is an integer).
		if v, up, err = tr.caseWhen(c); err == nil && up > 0 && fn != vector.Sum && fn != vector.Count {
			err = decline("%s of a CASE of a wider decimal type", e)
		}
	} else {
		v, err = tr.value(arg)
	}
	if err != nil {
		return vecOutput{}, vector.Agg{}, err
	}
	if c, ok := v.(vector.Const); ok && (c.Null || c.T.Kind == vector.String) {
		return vecOutput{}, vector.Agg{}, decline("aggregate of a constant %s", arg)
	}
	typ := v.Type()
	out := vecOutput{fn: fn, scale: typ.Scale, up: up, kind: typ.Kind, exact: exact}
	agg := vector.Agg{Func: fn, Arg: v, ExactFloat: typ.Kind == vector.Int && exact == nil}
	if fn == vector.Min || fn == vector.Max {
		var it iceberg.Type
		if gf, ok := arg.(*expression.GetField); ok {
			_, it, _ = tr.column(gf)
		}
		out.value = columnValue(typ, it)
	}
	return out, agg, nil
}

// columnValue gives a value as the row path's row holds it: a column's as
// rowValue reads it from Arrow (colType non-nil), an expression's as
// go-mysql-server computes it (int64, or a decimal at the static scale).
func columnValue(typ vector.Type, colType iceberg.Type) func(vector.Value) any {
	switch typ.Kind {
	case vector.Int:
		switch colType.(type) {
		case iceberg.Int32Type:
			return func(v vector.Value) any { return int32(v.I) }
		case iceberg.BooleanType:
			return func(v vector.Value) any { return int8(v.I) } // as rowValue
		}
		return func(v vector.Value) any { return v.I }
	case vector.Decimal:
		return func(v vector.Value) any { return apd.New(v.I, -typ.Scale) }
	case vector.Date:
		return func(v vector.Value) any { return time.Unix(v.I*86400, 0).UTC() }
	case vector.Float:
		if _, ok := colType.(iceberg.Float32Type); ok {
			return func(v vector.Value) any { return float32(vector.FloatOf(v)) }
		}
		return func(v vector.Value) any { return vector.FloatOf(v) }
	}
	return func(v vector.Value) any { return v.S }
}

// scaled is sum, at the argument's scale, at the output's (o.scale + o.up).
func (o vecOutput) scaled(sum *big.Int) *big.Int {
	if o.up == 0 {
		return sum
	}
	return new(big.Int).Mul(sum, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(o.up)), nil))
}

// aggregateValue is an aggregate's result as go-mysql-server's
// aggregation buffers give it (sql/expression/function/aggregation).
func (o vecOutput) aggregateValue(v vector.AggValue) (any, error) {
	if o.exact != nil {
		return o.exactValue(v)
	}
	switch o.fn {
	case vector.CountStar, vector.Count, vector.CountDistinct:
		return v.Count, nil
	}
	if v.Null {
		return nil, nil
	}
	switch o.fn {
	case vector.Sum, vector.Avg:
		if o.kind == vector.Int {
			// sumBuffer adds integers as float64s; ExactFloat made the
			// order of addition irrelevant.
			sum := float64(v.Sum.Int64())
			if o.fn == vector.Avg {
				return sum / float64(v.Count), nil
			}
			return sum, nil
		}
		// sumBuffer starts from apd.New(0, 0): the exponent is at most 0.
		sum := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(o.scaled(v.Sum)), -(o.scale + o.up))
		if o.fn == vector.Avg {
			return types.DecimalDiv(sum, types.DecimalFromInt64(v.Count), -sum.Exponent+4, false), nil
		}
		return sum, nil
	}
	return o.value(v.Val), nil
}

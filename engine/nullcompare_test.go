package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
)

// nullFirstOperands are values of the types a comparison meets, each with
// NULL: numbers of every kind, strings of a binary and a case-insensitive
// collation (with values that convert to numbers and dates), dates and
// times, JSON, blobs, enums and tuples holding NULLs.
func nullFirstOperands(t *testing.T) []struct {
	typ  sql.Type
	vals []any
} {
	t.Helper()
	ts := func(s string) types.Timespan {
		v, err := types.Time.ConvertToTimespan(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	dec := types.MustCreateDecimalType(10, 2)
	decimals := func(ss ...string) []any {
		var out []any
		for _, s := range ss {
			v, _, err := dec.Convert(sql.NewEmptyContext(), s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	day := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	words := []any{"apple", "Apple", "apple ", "7", "0.5", "", "2024-01-15", "10:00:00", `{"a": 1}`}
	return []struct {
		typ  sql.Type
		vals []any
	}{
		{types.Int64, []any{int64(7), int64(0), int64(-15), int64(2024)}},
		{types.Int32, []any{int32(7), int32(-3)}},
		{types.Boolean, []any{int8(1), int8(0)}},
		{types.Uint64, []any{uint64(7), uint64(1) << 63}},
		{types.Float64, []any{7.0, 0.5, -15.0, 1e15}},
		{types.Float32, []any{float32(0.5), float32(7)}},
		{dec, decimals("7.00", "0.50", "-15.25")},
		{types.LongText, words},
		{types.MustCreateString(sqltypes.VarChar, 200, sql.Collation_utf8mb4_0900_ai_ci), words},
		{types.MustCreateString(sqltypes.VarChar, 200, sql.Collation_utf8mb4_bin), words},
		{types.Date, []any{day, day.AddDate(0, 0, 1)}},
		{types.DatetimeMaxPrecision, []any{day, day.Add(10 * time.Hour)}},
		{types.Time, []any{ts("10:00:00"), ts("-01:30:00")}},
		{types.Year, []any{int16(2024)}},
		{types.JSON, []any{types.MustJSON(`{"a": 1}`), types.MustJSON(`7`), types.MustJSON(`"apple"`)}},
		{types.LongBlob, []any{[]byte("apple"), []byte("7")}},
		{types.MustCreateEnumType([]string{"apple", "banana"}, sql.Collation_utf8mb4_0900_bin), []any{uint16(1), uint16(2)}},
		{types.CreateTuple(types.Int64, types.LongText), []any{[]any{int64(7), "apple"}, []any{int64(7), nil}, []any{nil, "apple"}, []any{int64(8), nil}}},
	}
}

// failing is an operand whose evaluation fails.
type failing struct{ expression.Literal }

var errOperand = errors.New("operand failed")

func (*failing) Eval(*sql.Context, sql.Row) (any, error) { return nil, errOperand }

// TestNullFirstMatchesComparison checks NULL-first comparisons against
// go-mysql-server's over every pair of operands above (each a column or a
// literal, whose collations weigh differently), in every comparison: the
// same answer, the same error, or the same panic.
func TestNullFirstMatchesComparison(t *testing.T) {
	ctx := sql.NewEmptyContext()
	type side struct {
		name string
		expr func(i int) sql.Expression // i: its place in the row
		val  any
	}
	var sides []side
	for _, o := range nullFirstOperands(t) {
		for _, v := range append([]any{nil}, o.vals...) {
			name := fmt.Sprintf("%s %v", o.typ, v)
			sides = append(sides,
				side{"column " + name, func(i int) sql.Expression { return expression.NewGetField(i, o.typ, "c", true) }, v},
				side{"literal " + name, func(int) sql.Expression { return expression.NewLiteral(v, o.typ) }, v})
		}
	}
	sides = append(sides, side{"failing", func(int) sql.Expression {
		return &failing{*expression.NewLiteral(int64(1), types.Int64)}
	}, nil})
	comparisons := map[string]func(l, r sql.Expression) expression.Comparer{
		"=":  func(l, r sql.Expression) expression.Comparer { return expression.NewEquals(l, r) },
		"<":  func(l, r sql.Expression) expression.Comparer { return expression.NewLessThan(l, r) },
		">":  func(l, r sql.Expression) expression.Comparer { return expression.NewGreaterThan(l, r) },
		"<=": func(l, r sql.Expression) expression.Comparer { return expression.NewLessThanOrEqual(l, r) },
		">=": func(l, r sql.Expression) expression.Comparer { return expression.NewGreaterThanOrEqual(l, r) },
	}
	type outcome struct {
		val    any
		err    string
		panics string
	}
	eval := func(e sql.Expression, row sql.Row) (o outcome) {
		defer func() {
			if p := recover(); p != nil {
				o.panics = fmt.Sprint(p)
			}
		}()
		v, err := e.Eval(ctx, row)
		o.val = v
		if err != nil {
			o.err = err.Error()
		}
		return o
	}
	cases, nulls, errs := 0, 0, 0
	for _, l := range sides {
		for _, r := range sides {
			row := sql.NewRow(l.val, r.val)
			for op, mk := range comparisons {
				cmp := mk(l.expr(0), r.expr(1))
				nf, err := sqlfunc.NewNullFirst(ctx, cmp)
				if err != nil {
					t.Fatal(err)
				}
				want, got := eval(cmp, row), eval(nf, row)
				if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
					t.Errorf("%s %s %s: NULL-first %+v, go-mysql-server %+v", l.name, op, r.name, got, want)
				}
				cases++
				if want.val == nil && want.err == "" && want.panics == "" {
					nulls++
				}
				if want.err != "" || want.panics != "" {
					errs++
				}
			}
		}
	}
	// The operands must reach every outcome, or the test shows little.
	if nulls == 0 || errs == 0 || nulls+errs == cases {
		t.Fatalf("%d cases, %d NULL, %d errors: the operands do not cover the outcomes", cases, nulls, errs)
	}
	t.Logf("%d cases: %d NULL, %d errors or panics", cases, nulls, errs)
}

// A NULL operand costs no allocation: go-mysql-server built an error with
// a stack trace for each.
func TestNullFirstBuildsNoError(t *testing.T) {
	ctx := sql.NewEmptyContext()
	cmp := expression.NewLessThan(expression.NewGetField(0, types.Int64, "a", true), expression.NewGetField(1, types.Int64, "b", true))
	nf, err := sqlfunc.NewNullFirst(ctx, cmp)
	if err != nil {
		t.Fatal(err)
	}
	row := sql.NewRow(nil, int64(3))
	allocs := func(e sql.Expression) float64 {
		return testing.AllocsPerRun(100, func() {
			if v, err := e.Eval(ctx, row); v != nil || err != nil {
				t.Fatalf("NULL < 3 = %v, %v", v, err)
			}
		})
	}
	if n := allocs(nf); n != 0 {
		t.Errorf("NULL-first comparison of a NULL: %v allocations, want 0", n)
	}
	t.Logf("go-mysql-server's comparison of a NULL: %v allocations", allocs(cmp))
}

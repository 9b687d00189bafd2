package pushdown

import (
	"math"
	"unicode"

	"github.com/cockroachdb/apd/v3"

	"github.com/apache/iceberg-go"
)

// The functions below build the Iceberg row filter of a scan from SQL
// predicates, one predicate at a time; the caller (engine) walks the SQL
// expression tree and combines their results with iceberg.NewAnd, NewOr and
// NewNot. Each returns ok=false when the predicate must stay in SQL.
//
// A pushed filter only ever narrows what Iceberg reads; SQL evaluates the
// whole WHERE clause again on the rows that arrive. So a pushed predicate
// may match more rows than SQL (a superset), never fewer. Where a result is
// an exact equivalent of the SQL predicate the functions say so, because
// only an exact predicate may be negated.

// Compare is the SQL comparison `column op v`, where op is one of
// iceberg.OpEQ, OpNEQ, OpLT, OpLTEQ, OpGT, OpGTEQ.
func Compare(field iceberg.NestedField, op iceberg.Operation, v any) (pred iceberg.BooleanExpression, exact, ok bool) {
	switch op {
	case iceberg.OpEQ, iceberg.OpNEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ:
	default:
		return nil, false, false
	}
	if _, ok := field.Type.(iceberg.BooleanType); ok && op != iceberg.OpEQ && op != iceberg.OpNEQ {
		return nil, false, false
	}
	lit, ok := literal(field.Type, v)
	if !ok {
		return nil, false, false
	}
	ref := iceberg.Reference(field.Name)
	pred = iceberg.LiteralPredicate(op, ref, lit)
	if !isFloat(field.Type) {
		return pred, true, true
	}
	if _, isDecimal := v.(*apd.Decimal); isDecimal {
		// go-mysql-server compares a float column with a DECIMAL literal
		// (1.5 is one) as decimals, and its conversion of NaN and ±Inf to
		// a decimal gives them values no comparison can predict. Keep
		// those rows; SQL decides.
		return iceberg.NewOr(pred, iceberg.IsNaN(ref), infinities(field.Type, ref)), false, true
	}
	// Compared as doubles, go-mysql-server orders NaN above every number
	// (its comparison falls through to "greater"), so NaN rows pass >, >=
	// and <>; Iceberg compares NaN with nothing and would prune them.
	switch op {
	case iceberg.OpGT, iceberg.OpGTEQ, iceberg.OpNEQ:
		pred = iceberg.NewOr(pred, iceberg.IsNaN(ref))
	}
	return pred, true, true
}

// In is `column IN (values)`. NULLs in the list match nothing and are
// dropped; any other value that does not convert keeps the whole IN in SQL.
func In(field iceberg.NestedField, values []any) (iceberg.BooleanExpression, bool) {
	lits := make([]iceberg.Literal, 0, len(values))
	for _, v := range values {
		if v == nil {
			continue
		}
		lit, ok := literal(field.Type, v)
		if !ok {
			return nil, false
		}
		lits = append(lits, lit)
	}
	ref := iceberg.Reference(field.Name)
	if _, isBool := field.Type.(iceberg.BooleanType); isBool {
		// iceberg-go v0.7.0 drops the true rows of IN (false, true) on a
		// boolean column, so say it otherwise.
		has := map[bool]bool{}
		for _, l := range lits {
			has[bool(l.(iceberg.BoolLiteral))] = true
		}
		switch {
		case has[true] && has[false]:
			return iceberg.NotNull(ref), true
		case has[true]:
			return iceberg.EqualTo(ref, true), true
		case has[false]:
			return iceberg.EqualTo(ref, false), true
		}
		return iceberg.AlwaysFalse{}, true
	}
	return iceberg.SetPredicate(iceberg.OpIn, ref, lits), true
}

// IsNull is `column IS NULL`; its negation is IS NOT NULL.
func IsNull(field iceberg.NestedField) (pred iceberg.BooleanExpression, exact, ok bool) {
	if _, isDecimal := field.Type.(iceberg.DecimalType); isDecimal {
		// iceberg-go v0.7.0 panics evaluating a null test on a decimal
		// column's rows (arrow compute's castBinaryDecimalArgs, index out
		// of range), in a goroutine no caller can recover.
		return nil, false, false
	}
	return iceberg.IsNull(iceberg.Reference(field.Name)), true, true
}

// Like is `column LIKE pattern` (with the given escape character) under a
// case- and accent-sensitive collation: the literal prefix before the first
// wildcard bounds a range of strings. It is exact when the pattern is that
// prefix and one trailing %. (A range rather than Iceberg's starts-with,
// which iceberg-go v0.7.0 prunes with but cannot evaluate on rows: "not
// implemented: starts_with".)
func Like(field iceberg.NestedField, pattern string, escape rune) (pred iceberg.BooleanExpression, exact, ok bool) {
	if _, isString := field.Type.(iceberg.StringType); !isString {
		return nil, false, false
	}
	var prefix []rune
	rest := ""
	runes := []rune(pattern)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if r == escape && i+1 < len(runes) {
			i++
			prefix = append(prefix, runes[i])
			continue
		}
		if r == '%' || r == '_' || r == escape {
			rest = string(runes[i:])
			break
		}
		prefix = append(prefix, r)
	}
	ref := iceberg.Reference(field.Name)
	if rest == "" {
		// No wildcard at all: LIKE is equality (under a binary collation).
		return iceberg.EqualTo(ref, string(prefix)), true, true
	}
	if len(prefix) == 0 {
		return nil, false, false
	}
	from := iceberg.GreaterThanEqual(ref, string(prefix))
	to, ok := successor(prefix)
	if !ok {
		return from, false, true
	}
	return iceberg.NewAnd(from, iceberg.LessThan(ref, to)), rest == "%", true
}

// successor is the least string above every string that starts with
// prefix, in Iceberg's (UTF-8 byte, so code point) order: the prefix with
// its last rune incremented.
func successor(prefix []rune) (string, bool) {
	for i := len(prefix) - 1; i >= 0; i-- {
		next := prefix[i] + 1
		if next == 0xD800 { // surrogates are not runes
			next = 0xE000
		}
		if next <= unicode.MaxRune {
			out := append(append([]rune{}, prefix[:i]...), next)
			return string(out), true
		}
	}
	return "", false
}

// infinities matches ±Inf, in the column's own type: a float64 infinity
// bound to a float column becomes "above the maximum" and matches nothing.
func infinities(t iceberg.Type, ref iceberg.UnboundTerm) iceberg.BooleanExpression {
	if _, ok := t.(iceberg.Float32Type); ok {
		return iceberg.IsIn(ref, float32(math.Inf(1)), float32(math.Inf(-1)))
	}
	return iceberg.IsIn(ref, math.Inf(1), math.Inf(-1))
}

func isFloat(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		return true
	}
	return false
}

// Promoted reports whether field had another type in an earlier schema
// (int widened to long, float to double, a decimal's precision raised).
// Files written before the change keep bounds in the old type's encoding,
// which iceberg-go v0.7.0's metrics evaluator decodes with the new type and
// rejects ("expected 8 bytes for int64 value, got 4"), failing the scan; Java
// Iceberg reads such bounds by their length. Until iceberg-go does, filters
// on a promoted column are not pushed down: they stay residuals, correct
// but unpruned.
func Promoted(schemas []*iceberg.Schema, field iceberg.NestedField) bool {
	for _, sc := range schemas {
		if old, ok := sc.FindFieldByID(field.ID); ok && !old.Type.Equals(field.Type) {
			return true
		}
	}
	return false
}

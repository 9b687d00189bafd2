package pushdown

import (
	"strings"

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
func Compare(field iceberg.NestedField, op iceberg.Operation, v any) (iceberg.BooleanExpression, bool) {
	switch op {
	case iceberg.OpEQ, iceberg.OpNEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ:
	default:
		return nil, false
	}
	if _, ok := field.Type.(iceberg.BooleanType); ok && op != iceberg.OpEQ && op != iceberg.OpNEQ {
		return nil, false
	}
	lit, ok := literal(field.Type, v)
	if !ok {
		return nil, false
	}
	ref := iceberg.Reference(field.Name)
	pred := iceberg.BooleanExpression(iceberg.LiteralPredicate(op, ref, lit))
	if isFloat(field.Type) {
		// go-mysql-server orders NaN above every number (its comparison
		// falls through to "greater"), so NaN rows pass >, >= and <>;
		// Iceberg compares NaN with nothing and would prune them.
		switch op {
		case iceberg.OpGT, iceberg.OpGTEQ, iceberg.OpNEQ:
			pred = iceberg.NewOr(pred, iceberg.IsNaN(ref))
		}
	}
	return pred, true
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
	return iceberg.SetPredicate(iceberg.OpIn, iceberg.Reference(field.Name), lits), true
}

// IsNull is `column IS NULL`.
func IsNull(field iceberg.NestedField) iceberg.BooleanExpression {
	return iceberg.IsNull(iceberg.Reference(field.Name))
}

// NotNull is `column IS NOT NULL`.
func NotNull(field iceberg.NestedField) iceberg.BooleanExpression {
	return iceberg.NotNull(iceberg.Reference(field.Name))
}

// Like is `column LIKE pattern` (with the given escape character) under a
// case- and accent-sensitive collation: the literal prefix before the first
// wildcard becomes a starts-with predicate. It is exact when the pattern is
// that prefix and one trailing %.
func Like(field iceberg.NestedField, pattern string, escape rune) (pred iceberg.BooleanExpression, exact, ok bool) {
	if _, isString := field.Type.(iceberg.StringType); !isString {
		return nil, false, false
	}
	var prefix strings.Builder
	rest := ""
	runes := []rune(pattern)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if r == escape && i+1 < len(runes) {
			i++
			prefix.WriteRune(runes[i])
			continue
		}
		if r == '%' || r == '_' || r == escape {
			rest = string(runes[i:])
			break
		}
		prefix.WriteRune(r)
	}
	if prefix.Len() == 0 {
		return nil, false, false
	}
	ref := iceberg.Reference(field.Name)
	if rest == "" {
		// No wildcard at all: LIKE is equality (under a binary collation).
		return iceberg.EqualTo(ref, prefix.String()), true, true
	}
	return iceberg.StartsWith(ref, prefix.String()), rest == "%", true
}

func isFloat(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		return true
	}
	return false
}

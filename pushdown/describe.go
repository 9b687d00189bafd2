package pushdown

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
)

// Describe prints a row filter in SQL-like form for EXPLAIN, with column
// names and literals as Iceberg holds them.
func Describe(schema *iceberg.Schema, filter iceberg.BooleanExpression) string {
	if filter == nil {
		return "none"
	}
	bound, err := iceberg.BindExpr(schema, filter, false)
	if err != nil {
		return filter.String()
	}
	s, err := iceberg.VisitExpr[string](bound, describer{})
	if err != nil {
		return filter.String()
	}
	return s
}

type describer struct{}

func (describer) VisitTrue() string                  { return "true" }
func (describer) VisitFalse() string                 { return "false" }
func (describer) VisitNot(child string) string       { return "NOT (" + child + ")" }
func (describer) VisitAnd(left, right string) string { return "(" + left + " AND " + right + ")" }
func (describer) VisitOr(left, right string) string  { return "(" + left + " OR " + right + ")" }

func (describer) VisitUnbound(p iceberg.UnboundPredicate) string { return p.String() }

var opText = map[iceberg.Operation]string{
	iceberg.OpEQ: "=", iceberg.OpNEQ: "!=", iceberg.OpLT: "<", iceberg.OpLTEQ: "<=",
	iceberg.OpGT: ">", iceberg.OpGTEQ: ">=", iceberg.OpIn: "IN", iceberg.OpNotIn: "NOT IN",
	iceberg.OpStartsWith: "STARTS WITH", iceberg.OpNotStartsWith: "NOT STARTS WITH",
	iceberg.OpIsNull: "IS NULL", iceberg.OpNotNull: "IS NOT NULL",
	iceberg.OpIsNan: "IS NAN", iceberg.OpNotNan: "IS NOT NAN",
}

func (describer) VisitBound(p iceberg.BoundPredicate) string {
	name := p.Ref().Field().Name
	op, ok := opText[p.Op()]
	if !ok {
		op = p.Op().String()
	}
	switch p := p.(type) {
	case iceberg.BoundLiteralPredicate:
		return fmt.Sprintf("%s %s %s", name, op, literalText(p.Literal()))
	case iceberg.BoundSetPredicate:
		vals := make([]string, 0, p.Literals().Len())
		for _, l := range p.Literals().Members() {
			vals = append(vals, literalText(l))
		}
		slices.Sort(vals)
		return fmt.Sprintf("%s %s (%s)", name, op, strings.Join(vals, ", "))
	}
	return name + " " + op
}

func literalText(l iceberg.Literal) string {
	switch l.(type) {
	case iceberg.StringLiteral, iceberg.DateLiteral, iceberg.TimestampLiteral:
		return "'" + l.String() + "'"
	}
	return l.String()
}

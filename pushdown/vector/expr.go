// Package vector computes filters, arithmetic and grouped aggregates on
// Arrow record batches, many rows per call instead of one. It knows nothing
// of SQL engines: a caller translates its expressions into the small
// language below, only where it can say exactly what the result must be,
// and reads the groups back as plain values.
//
// Values live as int64 wherever possible: integers, dates (days since
// 1970-01-01) and decimals (the unscaled integer, with the scale in the
// type). An operation whose exact result leaves int64 stops the run with
// ErrInexact; the caller then computes the query another way, so a result
// is either exact or not given.
package vector

import (
	"errors"
	"fmt"
)

// ErrInexact says a value left the range this package computes exactly in
// (a decimal beyond 18 digits, an integer sum beyond what a float64 holds
// exactly); the caller must compute the query another way.
var ErrInexact = errors.New("vector: value outside the exact range")

// Kind is the family of a value.
type Kind uint8

// The kinds of values.
const (
	Int     Kind = iota + 1 // int64; 32-bit integer columns widen, booleans are 0 and 1
	Decimal                 // unscaled int64, scale in Type.Scale
	Date                    // days since 1970-01-01
	String                  // bytes, compared bytewise
	Float                   // DOUBLE or FLOAT, as an ordered int64 (float.go)
)

// Type is a value's kind and, for decimals, its scale.
type Type struct {
	Kind  Kind
	Scale int32
}

func (t Type) numeric() bool { return t.Kind == Int || t.Kind == Decimal || t.Kind == Date }

// Expr is an expression over the columns of a batch.
type Expr interface{ Type() Type }

// Column reads the batch column of that name.
type Column struct {
	Name string
	T    Type
}

// Const is a constant; Null makes it SQL NULL.
type Const struct {
	T    Type
	Null bool
	I    int64 // Int, Decimal (unscaled), Date
	S    string
}

// ArithOp is +, - or *.
type ArithOp byte

// Arith is L op R. An integer result that leaves int64 stops the run with
// ErrInexact (SQL fails the statement, or skips the row, as the caller
// decides); decimals keep every digit: + and - at the larger scale, * at
// the sum of the scales.
type Arith struct {
	Op   ArithOp
	L, R Expr
}

// CmpOp is a comparison.
type CmpOp uint8

// The comparisons.
const (
	EQ CmpOp = iota + 1
	NE
	LT
	LE
	GT
	GE
)

// Compare is L op R, NULL when either is NULL.
type Compare struct {
	Op   CmpOp
	L, R Expr
}

// And, Or and Not follow SQL's three-valued logic.
type And struct{ L, R Expr }

// Or is L OR R.
type Or struct{ L, R Expr }

// Not is NOT E.
type Not struct{ E Expr }

// IsNull is E IS NULL (never NULL itself).
type IsNull struct{ E Expr }

// In is E IN (List...): NULL when E is NULL, or when no element matches and
// one of them is NULL.
type In struct {
	E    Expr
	List []Const
}

// boolType is the type of predicates; it never reaches an aggregate.
var boolType = Type{Kind: 0}

func (c Column) Type() Type      { return c.T }
func (c Const) Type() Type       { return c.T }
func (Compare) Type() Type       { return boolType }
func (And) Type() Type           { return boolType }
func (Or) Type() Type            { return boolType }
func (Not) Type() Type           { return boolType }
func (IsNull) Type() Type        { return boolType }
func (In) Type() Type            { return boolType }
func (a Arith) Type() Type       { t, _ := arithType(a.Op, a.L.Type(), a.R.Type()); return t }
func (o ArithOp) String() string { return string(o) }

// arithType is the result type of l op r, or an error when this package
// cannot compute it.
func arithType(op ArithOp, l, r Type) (Type, error) {
	if op != '+' && op != '-' && op != '*' {
		return Type{}, fmt.Errorf("operator %c", op)
	}
	switch {
	case l.Kind == Int && r.Kind == Int:
		return Type{Kind: Int}, nil
	case (l.Kind == Int || l.Kind == Decimal) && (r.Kind == Int || r.Kind == Decimal):
		if op == '*' {
			return Type{Kind: Decimal, Scale: l.Scale + r.Scale}, nil
		}
		return Type{Kind: Decimal, Scale: max(l.Scale, r.Scale)}, nil
	}
	return Type{}, fmt.Errorf("%c on kinds %d and %d", op, l.Kind, r.Kind)
}

// Check says whether e is an expression this package can evaluate, and
// whether it is a predicate (want true) or a value (want false).
func Check(e Expr, predicate bool) error {
	switch e := e.(type) {
	case Column:
		if predicate {
			return errors.New("a column is not a predicate")
		}
		if e.T.Kind < Int || e.T.Kind > Float {
			return fmt.Errorf("column %s: unknown kind", e.Name)
		}
		return nil
	case Const:
		if predicate {
			return errors.New("a constant is not a predicate")
		}
		return nil
	case Mod:
		if predicate {
			return errors.New("arithmetic is not a predicate")
		}
		return checkMod(e)
	case Year:
		if predicate {
			return errors.New("a year is not a predicate")
		}
		return checkYear(e)
	case Case:
		if predicate {
			return errors.New("a CASE is not a predicate")
		}
		return checkCase(e)
	case Arith:
		if predicate {
			return errors.New("arithmetic is not a predicate")
		}
		if err := Check(e.L, false); err != nil {
			return err
		}
		if err := Check(e.R, false); err != nil {
			return err
		}
		_, err := arithType(e.Op, e.L.Type(), e.R.Type())
		return err
	}
	if !predicate {
		return errors.New("a predicate is not a value")
	}
	switch e := e.(type) {
	case Compare:
		if err := Check(e.L, false); err != nil {
			return err
		}
		if err := Check(e.R, false); err != nil {
			return err
		}
		return comparable(e.L.Type(), e.R.Type())
	case And:
		return errors.Join(Check(e.L, true), Check(e.R, true))
	case Or:
		return errors.Join(Check(e.L, true), Check(e.R, true))
	case Not:
		return Check(e.E, true)
	case IsNull:
		return Check(e.E, false)
	case In:
		if err := Check(e.E, false); err != nil {
			return err
		}
		for _, c := range e.List {
			if err := comparable(e.E.Type(), c.T); err != nil && !c.Null {
				return err
			}
		}
		return nil
	case Match:
		return checkMatch(e) // match.go
	}
	return fmt.Errorf("unknown expression %T", e)
}

func comparable(l, r Type) error {
	switch {
	case l.Kind == String && r.Kind == String, l.Kind == Date && r.Kind == Date:
		return nil
	case (l.Kind == Int || l.Kind == Decimal) && (r.Kind == Int || r.Kind == Decimal):
		return nil
	}
	return fmt.Errorf("cannot compare kinds %d and %d", l.Kind, r.Kind)
}

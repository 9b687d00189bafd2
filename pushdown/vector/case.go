package vector

import (
	"errors"
	"fmt"
)

// Case is CASE WHEN When THEN Then ELSE Else END over numbers (a CASE of
// several WHENs is Cases nested in Else; no ELSE is a NULL Const). T is the
// CASE's type, which the caller takes from the row path: an integer when
// both branches are, else a decimal at a scale no branch exceeds, each
// branch's values brought to it exactly. Both branches are computed for
// every row; a value that leaves the exact range in the branch a row does
// not take still gives ErrInexact, and the caller's row path answers.
type Case struct {
	When, Then, Else Expr
	T                Type
}

func (c Case) Type() Type { return c.T }

func checkCase(c Case) error {
	if err := Check(c.When, true); err != nil {
		return err
	}
	for _, b := range []Expr{c.Then, c.Else} {
		if err := Check(b, false); err != nil {
			return err
		}
		switch bt := b.Type(); {
		case c.T.Kind == Int && bt.Kind == Int:
		case c.T.Kind == Decimal && (bt.Kind == Int || bt.Kind == Decimal && bt.Scale <= c.T.Scale):
		default:
			return fmt.Errorf("a CASE of kind %d with a branch of kind %d scale %d", c.T.Kind, bt.Kind, bt.Scale)
		}
	}
	if c.T.Kind != Int && c.T.Kind != Decimal {
		return errors.New("a CASE that is not a number")
	}
	return nil
}

func (c *compiler) caseWhen(e Case) (numFn, error) {
	if err := checkCase(e); err != nil {
		return nil, err
	}
	when, err := c.pred(e.When)
	if err != nil {
		return nil, err
	}
	then, err := c.num(e.Then)
	if err != nil {
		return nil, err
	}
	els, err := c.num(e.Else)
	if err != nil {
		return nil, err
	}
	// Each branch's values are multiplied up to the CASE's scale.
	up := func(b Expr) int32 {
		if b.Type().Kind == Decimal {
			return e.T.Scale - b.Type().Scale
		}
		return e.T.Scale
	}
	tUp, eUp := up(e.Then), up(e.Else)
	out := &numVec{}
	var nulls []bool
	return func(b *batch, sel []int32) (*numVec, error) {
		w, err := when(b, sel)
		if err != nil {
			return nil, err
		}
		tv, err := then(b, sel)
		if err != nil {
			return nil, err
		}
		ev, err := els(b, sel)
		if err != nil {
			return nil, err
		}
		out.v = grow(out.v, len(sel))
		nulls = grow(nulls, len(sel))
		out.null = nulls
		anyNull := false
		for i := range sel {
			src, k := ev, eUp
			if w.v[i] && (w.null == nil || !w.null[i]) {
				src, k = tv, tUp
			}
			if src.null != nil && src.null[i] {
				out.null[i] = true
				out.v[i] = 0
				anyNull = true
				continue
			}
			v, ok := rescale(src.v[i], k)
			if !ok {
				return nil, ErrInexact
			}
			out.null[i], out.v[i] = false, v
		}
		if !anyNull {
			out.null = nil
		}
		return out, nil
	}, nil
}

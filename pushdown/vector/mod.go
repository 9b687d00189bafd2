package vector

import (
	"errors"
	"fmt"
)

// Mod is L % R of two integers by a constant divisor other than zero: the
// remainder of truncated division, whose sign is the dividend's (MySQL's %
// and MOD). A zero divisor gives NULL and a warning in MySQL, which a
// batch cannot raise, so it is left to the caller's row path.
type Mod struct {
	L Expr
	R Const
}

func (Mod) Type() Type { return Type{Kind: Int} }

func checkMod(e Mod) error {
	if err := Check(e.L, false); err != nil {
		return err
	}
	if e.L.Type().Kind != Int || e.R.T.Kind != Int {
		return fmt.Errorf("%% on kinds %d and %d", e.L.Type().Kind, e.R.T.Kind)
	}
	if e.R.Null || e.R.I == 0 {
		return errors.New("% by NULL or zero")
	}
	return nil
}

func (c *compiler) mod(e Mod) (numFn, error) {
	if err := checkMod(e); err != nil {
		return nil, err
	}
	l, err := c.num(e.L)
	if err != nil {
		return nil, err
	}
	d := e.R.I
	out := &numVec{}
	return func(b *batch, sel []int32) (*numVec, error) {
		lv, err := l(b, sel)
		if err != nil {
			return nil, err
		}
		out.v = grow(out.v, len(sel))
		if d == -1 {
			// Go's % gives 0 for math.MinInt64 % -1 as for every other
			// dividend; spelled out so the reader need not know that.
			clear(out.v)
		} else {
			for i, x := range lv.v[:len(sel)] {
				out.v[i] = x % d
			}
		}
		out.null = lv.null
		return out, nil
	}, nil
}

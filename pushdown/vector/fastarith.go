package vector

import "math/bits"

// Decimal arithmetic is exact: every + - * checks for overflow, and a
// constant operand (the 1 of TPC-H's 1 - l_discount) was filled into a
// vector and rescaled value by value. fastArith rescales a constant once,
// and checks a batch at once instead of every value: when the largest
// magnitudes of the operands prove that no result overflows, it computes
// with plain int64 operations; otherwise the checked kernel runs.

// fastArith is the decimal operation e at the result's scale (operands
// rescaled by 10^lk and 10^rk) over l and r, with checked as the kernel
// for batches it cannot prove safe.
func (c *compiler) fastArith(e Arith, lk, rk int32, l, r, checked numFn) numFn {
	lc, lConst := e.L.(Const)
	rc, rConst := e.R.(Const)
	switch {
	case lConst && rConst, lConst && lc.Null, rConst && rc.Null:
		return checked
	case rConst:
		k, ok := rescale(rc.I, rk)
		if !ok {
			return checked
		}
		return c.constArith(e.Op, l, lk, k, false, checked)
	case lConst:
		k, ok := rescale(lc.I, lk)
		if !ok {
			return checked
		}
		return c.constArith(e.Op, r, rk, k, true, checked)
	}
	if lk != 0 || rk != 0 {
		return checked
	}
	out := &numVec{}
	return func(b *batch, sel []int32) (*numVec, error) {
		lv, err := l(b, sel)
		if err != nil {
			return nil, err
		}
		rv, err := r(b, sel)
		if err != nil {
			return nil, err
		}
		x, y := lv.v[:len(sel)], rv.v[:len(sel)]
		mx, my := width(lv, x), width(rv, y)
		if !fits(e.Op, mx, my) {
			return checked(b, sel)
		}
		out.bits = resultWidth(e.Op, mx, my) + 1
		out.null = orNulls(out.null, lv.null, rv.null, len(sel))
		out.v = grow(out.v, len(sel))
		o := out.v[:len(x)]
		y = y[:len(x)]
		switch e.Op {
		case '+':
			for i := range o {
				o[i] = x[i] + y[i]
			}
		case '-':
			for i := range o {
				o[i] = x[i] - y[i]
			}
		default:
			for i := range o {
				o[i] = x[i] * y[i]
			}
		}
		return out, nil
	}
}

// constArith is v·10^vk op k (k op v·10^vk when constLeft).
func (c *compiler) constArith(op ArithOp, v numFn, vk int32, k int64, constLeft bool, checked numFn) numFn {
	if vk < 0 || int(vk) >= len(pow10) {
		return checked
	}
	scale := pow10[vk]
	kw := bits.Len64(absU(k))
	out := &numVec{}
	return func(b *batch, sel []int32) (*numVec, error) {
		vv, err := v(b, sel)
		if err != nil {
			return nil, err
		}
		x := vv.v[:len(sel)]
		w := width(vv, x)
		if vk != 0 {
			// |x·10^vk| < 2^(w + bits of 10^vk).
			w += bits.Len64(uint64(scale))
			if w > 63 {
				return checked(b, sel)
			}
		}
		if !fits(op, w, kw) {
			return checked(b, sel)
		}
		out.v = grow(out.v, len(sel))
		out.null = vv.null
		out.bits = resultWidth(op, w, kw) + 1
		o := out.v[:len(x)]
		switch {
		case op == '*':
			m := k * scale
			for i := range o {
				o[i] = x[i] * m
			}
		case op == '+':
			for i := range o {
				o[i] = x[i]*scale + k
			}
		case constLeft: // k - x
			for i := range o {
				o[i] = k - x[i]*scale
			}
		default:
			for i := range o {
				o[i] = x[i]*scale - k
			}
		}
		return out, nil
	}
}

// width is magnitude(x) for v's values x, known or computed.
func width(v *numVec, x []int64) int {
	if v.bits > 0 {
		return v.bits - 1
	}
	return magnitude(x)
}

// resultWidth bounds the magnitude of a op b for |a| < 2^x, |b| < 2^y.
func resultWidth(op ArithOp, x, y int) int {
	if op == '*' {
		return x + y
	}
	return max(x, y) + 1
}

// magnitude is a bound on the values' bits: every |v| < 2^magnitude(v).
func magnitude(v []int64) int {
	var m uint64
	for _, x := range v {
		m |= absU(x)
	}
	return bits.Len64(m)
}

// fits says op on operands below 2^a and 2^b in magnitude cannot
// overflow an int64.
func fits(op ArithOp, a, b int) bool {
	if op == '*' {
		return a+b <= 63
	}
	return a <= 62 && b <= 62
}

package vector

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// batch is the record being computed on, with its columns found by name
// once.
type batch struct {
	rec  arrow.RecordBatch
	cols []arrow.Array // by column slot
	gen  uint64        // counts the batches bound, for memoized values
}

// columns gives each column name an index into batch.cols.
type columns struct {
	names []string
	slot  map[string]int
}

func (c *columns) add(name string) int {
	if i, ok := c.slot[name]; ok {
		return i
	}
	if c.slot == nil {
		c.slot = map[string]int{}
	}
	c.slot[name] = len(c.names)
	c.names = append(c.names, name)
	return len(c.names) - 1
}

func (c *columns) bind(b *batch, rec arrow.RecordBatch) error {
	b.rec = rec
	b.gen++
	b.cols = b.cols[:0]
	for _, name := range c.names {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return fmt.Errorf("vector: batch has no column %s", name)
		}
		b.cols = append(b.cols, rec.Column(idx[0]))
	}
	return nil
}

// numVec is the values of a numeric expression for the selected rows.
type numVec struct {
	v    []int64
	null []bool // nil: no NULL
	// bits, when not 0, bounds every value: |v| < 2^(bits-1). Only the
	// kernels of fastarith.go set it, on every result they return.
	bits int
}

// boolVec is the truth of a predicate for the selected rows.
type boolVec struct {
	v    []bool
	null []bool // nil: no NULL
}

type numFn func(b *batch, sel []int32) (*numVec, error)
type boolFn func(b *batch, sel []int32) (*boolVec, error)

// compiler turns expressions into closures. Every closure owns its output
// buffers, so one compiled program serves one goroutine.
type compiler struct {
	cols *columns
	// nums shares one closure among equal numeric expressions (Q1 reads
	// l_extendedprice * (1 - l_discount) twice), each computing once per
	// batch and selection; colNums does for plain columns, keyed without
	// formatting them (a point lookup compiles little else).
	nums    map[string]numFn
	colNums map[Column]numFn
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

func (c *compiler) num(e Expr) (numFn, error) {
	switch e := e.(type) {
	case Const:
		return c.numUncached(e) // nothing to share: it computes nothing
	case Column:
		if f, ok := c.colNums[e]; ok {
			return f, nil
		}
		f, err := c.numUncached(e)
		if err != nil {
			return nil, err
		}
		f = memoize(f)
		if c.colNums == nil {
			c.colNums = map[Column]numFn{}
		}
		c.colNums[e] = f
		return f, nil
	}
	key := fmt.Sprintf("%#v", e)
	if f, ok := c.nums[key]; ok {
		return f, nil
	}
	f, err := c.numUncached(e)
	if err != nil {
		return nil, err
	}
	f = memoize(f)
	if c.nums == nil {
		c.nums = map[string]numFn{}
	}
	c.nums[key] = f
	return f, nil
}

// memoize reuses f's last result while the batch and the selection are
// the same. A selection buffer is written once per batch, so the same
// start and length within one batch mean the same rows.
func memoize(f numFn) numFn {
	var gen uint64
	var start *int32
	n := -1
	var last *numVec
	return func(b *batch, sel []int32) (*numVec, error) {
		var s *int32
		if len(sel) > 0 {
			s = &sel[0]
		}
		if last != nil && b.gen == gen && s == start && len(sel) == n {
			return last, nil
		}
		v, err := f(b, sel)
		if err != nil {
			last = nil
			return nil, err
		}
		gen, start, n, last = b.gen, s, len(sel), v
		return v, nil
	}
}

func (c *compiler) numUncached(e Expr) (numFn, error) {
	switch e := e.(type) {
	case Column:
		return c.column(e)
	case Const:
		out := &numVec{}
		return func(_ *batch, sel []int32) (*numVec, error) {
			out.v = grow(out.v, len(sel))
			if e.Null {
				out.null = grow(out.null, len(sel))
				for i := range out.null {
					out.null[i] = true
				}
				return out, nil
			}
			out.null = nil
			for i := range out.v {
				out.v[i] = e.I
			}
			return out, nil
		}, nil
	case Arith:
		return c.arith(e)
	case Mod:
		return c.mod(e)
	case Year:
		return c.year(e)
	case Case:
		return c.caseWhen(e)
	}
	return nil, fmt.Errorf("vector: %T is not a numeric value", e)
}

func (c *compiler) column(col Column) (numFn, error) {
	slot := c.cols.add(col.Name)
	out := &numVec{}
	var own []int64 // out.v unless it reads the batch's values in place
	return func(b *batch, sel []int32) (*numVec, error) {
		arr := b.cols[slot]
		own = grow(own, len(sel))
		out.v = own
		switch a := arr.(type) {
		case *array.Int64:
			if vals := a.Int64Values(); len(sel) == len(vals) {
				// Every row selected (sel is increasing): the values as
				// they are, which no kernel writes to.
				out.v = vals
				break
			}
			vals := a.Int64Values()
			for i, r := range sel {
				out.v[i] = vals[r]
			}
		case *array.Int32:
			vals := a.Int32Values()
			for i, r := range sel {
				out.v[i] = int64(vals[r])
			}
		case *array.Date32:
			vals := a.Date32Values()
			for i, r := range sel {
				out.v[i] = int64(vals[r])
			}
		case *array.Float64:
			if err := readFloats(out.v, a.Float64Values(), sel, a); err != nil {
				return nil, err
			}
		case *array.Float32:
			if err := readFloats(out.v, a.Float32Values(), sel, a); err != nil {
				return nil, err
			}
		case *array.Boolean: // BOOLEAN is TINYINT(1): 0 or 1
			for i, r := range sel {
				out.v[i] = 0
				if a.Value(int(r)) {
					out.v[i] = 1
				}
			}
		case *array.Decimal128:
			vals := a.Values()
			for i, r := range sel {
				n := vals[r]
				lo := int64(n.LowBits())
				if n.HighBits() != lo>>63 {
					if a.IsNull(int(r)) {
						continue
					}
					return nil, ErrInexact
				}
				out.v[i] = lo
			}
		default:
			return nil, fmt.Errorf("vector: column %s is %s, not a number", col.Name, arr.DataType())
		}
		out.null = nulls(arr, sel, out.null)
		return out, nil
	}, nil
}

// nulls is which selected rows of arr are NULL, nil when none is.
func nulls(arr arrow.Array, sel []int32, buf []bool) []bool {
	if arr.NullN() == 0 {
		return nil
	}
	buf = grow(buf, len(sel))
	for i, r := range sel {
		buf[i] = arr.IsNull(int(r))
	}
	return buf
}

func orNulls(dst, a, b []bool, n int) []bool {
	if a == nil && b == nil {
		return nil
	}
	dst = grow(dst, n)
	switch {
	case a == nil:
		copy(dst, b)
	case b == nil:
		copy(dst, a)
	default:
		for i := range dst {
			dst[i] = a[i] || b[i]
		}
	}
	return dst
}

var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// rescale multiplies v by 10^k, exactly or not at all.
func rescale(v int64, k int32) (int64, bool) {
	if k == 0 || v == 0 {
		return v, true
	}
	if k < 0 || int(k) >= len(pow10) {
		return 0, false
	}
	return mulExact(v, pow10[k])
}

func mulExact(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(absU(a), absU(b))
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return -int64(lo), true
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // MinInt64 wraps to 1<<63, its magnitude
	}
	return uint64(a)
}

func (c *compiler) arith(e Arith) (numFn, error) {
	lt, rt := e.L.Type(), e.R.Type()
	t, err := arithType(e.Op, lt, rt)
	if err != nil {
		return nil, err
	}
	l, err := c.num(e.L)
	if err != nil {
		return nil, err
	}
	r, err := c.num(e.R)
	if err != nil {
		return nil, err
	}
	out := &numVec{}
	if t.Kind == Int {
		return func(b *batch, sel []int32) (*numVec, error) {
			lv, err := l(b, sel)
			if err != nil {
				return nil, err
			}
			rv, err := r(b, sel)
			if err != nil {
				return nil, err
			}
			out.v = grow(out.v, len(sel))
			x, y := lv.v[:len(sel)], rv.v[:len(sel)]
			out.null = orNulls(out.null, lv.null, rv.null, len(sel))
			if err := intOp(e.Op, out.v, x, y, out.null); err != nil {
				return nil, err
			}
			return out, nil
		}, nil
	}
	// Decimals: bring both sides to the result's scale for + and -.
	lk, rk := int32(0), int32(0)
	if e.Op != '*' {
		lk, rk = t.Scale-lt.Scale, t.Scale-rt.Scale
	}
	return c.fastArith(e, lk, rk, l, r, func(b *batch, sel []int32) (*numVec, error) {
		lv, err := l(b, sel)
		if err != nil {
			return nil, err
		}
		rv, err := r(b, sel)
		if err != nil {
			return nil, err
		}
		out.null = orNulls(out.null, lv.null, rv.null, len(sel))
		out.v = grow(out.v, len(sel))
		x, y := lv.v[:len(sel)], rv.v[:len(sel)]
		null := out.null
		if lk == 0 && rk == 0 {
			if err := decimalOp(e.Op, out.v, x, y, null); err != nil {
				return nil, err
			}
			return out, nil
		}
		for i := range out.v {
			if null != nil && null[i] {
				continue
			}
			a, ok1 := rescale(x[i], lk)
			bb, ok2 := rescale(y[i], rk)
			if !ok1 || !ok2 {
				return nil, ErrInexact
			}
			var v int64
			ok := true
			switch e.Op {
			case '+':
				v = a + bb
				ok = !((a >= 0) == (bb >= 0) && (v >= 0) != (a >= 0))
			case '-':
				v = a - bb
				ok = !((a >= 0) != (bb >= 0) && (v >= 0) != (a >= 0))
			default:
				v, ok = mulExact(a, bb)
			}
			if !ok {
				return nil, ErrInexact
			}
			out.v[i] = v
		}
		return out, nil
	}), nil
}

// intOp sets out to x op y. A result that leaves int64 (where neither
// side is NULL) is ErrInexact: the row path then computes the statement
// and reports the overflow as SQL does, with the error of the row that
// overflowed, or with no error when SQL would not evaluate that row.
func intOp(op ArithOp, out, x, y []int64, null []bool) error {
	overflow := false
	switch op {
	case '+':
		for i := range out {
			s := x[i] + y[i]
			overflow = overflow || ((x[i] >= 0) == (y[i] >= 0) && (s >= 0) != (x[i] >= 0) && (null == nil || !null[i]))
			out[i] = s
		}
	case '-':
		for i := range out {
			d := x[i] - y[i]
			overflow = overflow || ((x[i] >= 0) != (y[i] >= 0) && (d >= 0) != (x[i] >= 0) && (null == nil || !null[i]))
			out[i] = d
		}
	default:
		for i := range out {
			p, ok := mulExact(x[i], y[i])
			overflow = overflow || (!ok && (null == nil || !null[i]))
			out[i] = p
		}
	}
	if overflow {
		return ErrInexact
	}
	return nil
}

// cmpScaled compares a·10^-sa with b·10^-sb exactly.
func cmpScaled(a int64, sa int32, b int64, sb int32) int {
	if sa == sb {
		return cmp64(a, b)
	}
	if sa < sb {
		return -cmpScaled(b, sb, a, sa)
	}
	// Compare a with b·10^k, k > 0, in 128 bits.
	k := sa - sb
	if b == 0 {
		return cmp64(a, 0)
	}
	if int(k) >= len(pow10) {
		// |b·10^k| ≥ 10^19 > |a|.
		if b > 0 {
			return -1
		}
		return 1
	}
	bs, ok := mulExact(b, pow10[k])
	if ok {
		return cmp64(a, bs)
	}
	if b > 0 {
		return -1
	}
	return 1
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func holds(op CmpOp, c int) bool {
	switch op {
	case EQ:
		return c == 0
	case NE:
		return c != 0
	case LT:
		return c < 0
	case LE:
		return c <= 0
	case GT:
		return c > 0
	}
	return c >= 0
}

func (c *compiler) pred(e Expr) (boolFn, error) {
	switch e := e.(type) {
	case Compare:
		if e.L.Type().Kind == String {
			return c.compareStrings(e)
		}
		return c.compareNums(e)
	case And, Or:
		var le, re Expr
		and := false
		if a, ok := e.(And); ok {
			le, re, and = a.L, a.R, true
		} else {
			le, re = e.(Or).L, e.(Or).R
		}
		l, err := c.pred(le)
		if err != nil {
			return nil, err
		}
		r, err := c.pred(re)
		if err != nil {
			return nil, err
		}
		out := &boolVec{}
		var nbuf, lbuf []bool
		return func(b *batch, sel []int32) (*boolVec, error) {
			lv, err := l(b, sel)
			if err != nil {
				return nil, err
			}
			// Copy the left side: the right one may share buffers
			// with it when both read the same closure.
			out.v = grow(out.v, len(sel))
			copy(out.v, lv.v)
			ln := lv.null
			var lnull []bool
			if ln != nil {
				lbuf = grow(lbuf, len(sel))
				copy(lbuf, ln)
				lnull = lbuf
			}
			rv, err := r(b, sel)
			if err != nil {
				return nil, err
			}
			var nullOut []bool
			if lnull != nil || rv.null != nil {
				nbuf = grow(nbuf, len(sel))
				nullOut = nbuf
			}
			for i := range out.v {
				lvv, lnn := out.v[i], lnull != nil && lnull[i]
				rvv, rnn := rv.v[i], rv.null != nil && rv.null[i]
				var v, n bool
				if and {
					// FALSE wins, then NULL.
					switch {
					case (!lvv && !lnn) || (!rvv && !rnn):
						v, n = false, false
					case lnn || rnn:
						v, n = false, true
					default:
						v = true
					}
				} else {
					switch {
					case (lvv && !lnn) || (rvv && !rnn):
						v, n = true, false
					case lnn || rnn:
						v, n = false, true
					}
				}
				out.v[i] = v
				if nullOut != nil {
					nullOut[i] = n
				}
			}
			out.null = nullOut
			return out, nil
		}, nil
	case Not:
		inner, err := c.pred(e.E)
		if err != nil {
			return nil, err
		}
		out := &boolVec{}
		return func(b *batch, sel []int32) (*boolVec, error) {
			v, err := inner(b, sel)
			if err != nil {
				return nil, err
			}
			out.v = grow(out.v, len(sel))
			for i := range out.v {
				out.v[i] = !v.v[i]
			}
			out.null = v.null
			return out, nil
		}, nil
	case IsNull:
		inner, err := c.nullness(e.E)
		if err != nil {
			return nil, err
		}
		out := &boolVec{}
		return func(b *batch, sel []int32) (*boolVec, error) {
			n, err := inner(b, sel)
			if err != nil {
				return nil, err
			}
			out.v = grow(out.v, len(sel))
			if n == nil {
				clear(out.v)
			} else {
				copy(out.v, n)
			}
			out.null = nil
			return out, nil
		}, nil
	case In:
		return c.in(e)
	case Match:
		return c.match(e) // match.go
	}
	return nil, fmt.Errorf("vector: %T is not a predicate", e)
}

// nullness gives which rows of a value are NULL (nil: none).
func (c *compiler) nullness(e Expr) (func(b *batch, sel []int32) ([]bool, error), error) {
	if e.Type().Kind == String {
		s, err := c.str(e)
		if err != nil {
			return nil, err
		}
		var buf []bool
		return func(b *batch, sel []int32) ([]bool, error) {
			sv := s(b)
			if sv.arr == nil {
				buf = grow(buf, len(sel))
				for i := range buf {
					buf[i] = sv.constNull
				}
				return buf, nil
			}
			buf = nulls(sv.arr, sel, buf)
			return buf, nil
		}, nil
	}
	n, err := c.num(e)
	if err != nil {
		return nil, err
	}
	return func(b *batch, sel []int32) ([]bool, error) {
		v, err := n(b, sel)
		if err != nil {
			return nil, err
		}
		return v.null, nil
	}, nil
}

func (c *compiler) compareNums(e Compare) (boolFn, error) {
	lt, rt := e.L.Type(), e.R.Type()
	l, err := c.num(e.L)
	if err != nil {
		return nil, err
	}
	r, err := c.num(e.R)
	if err != nil {
		return nil, err
	}
	out := &boolVec{}
	sameScale := lt.Scale == rt.Scale || lt.Kind == Date
	return func(b *batch, sel []int32) (*boolVec, error) {
		lv, err := l(b, sel)
		if err != nil {
			return nil, err
		}
		rv, err := r(b, sel)
		if err != nil {
			return nil, err
		}
		out.v = grow(out.v, len(sel))
		x, y := lv.v[:len(sel)], rv.v[:len(sel)]
		if sameScale {
			switch e.Op {
			case EQ:
				for i := range out.v {
					out.v[i] = x[i] == y[i]
				}
			case NE:
				for i := range out.v {
					out.v[i] = x[i] != y[i]
				}
			case LT:
				for i := range out.v {
					out.v[i] = x[i] < y[i]
				}
			case LE:
				for i := range out.v {
					out.v[i] = x[i] <= y[i]
				}
			case GT:
				for i := range out.v {
					out.v[i] = x[i] > y[i]
				}
			default:
				for i := range out.v {
					out.v[i] = x[i] >= y[i]
				}
			}
		} else {
			for i := range out.v {
				out.v[i] = holds(e.Op, cmpScaled(x[i], lt.Scale, y[i], rt.Scale))
			}
		}
		out.null = orNulls(out.null, lv.null, rv.null, len(sel))
		return out, nil
	}, nil
}

// strVec reads a string column (arr) or is a constant.
type strVec struct {
	arr       arrow.Array
	value     func(i int) []byte
	constant  []byte
	constNull bool
}

func (c *compiler) str(e Expr) (func(b *batch) strVec, error) {
	switch e := e.(type) {
	case Const:
		v := strVec{constant: []byte(e.S), constNull: e.Null}
		return func(*batch) strVec { return v }, nil
	case Column:
		slot := c.cols.add(e.Name)
		return func(b *batch) strVec {
			arr := b.cols[slot]
			return strVec{arr: arr, value: stringReader(arr)}
		}, nil
	}
	return nil, fmt.Errorf("vector: %T is not a string value", e)
}

// stringReader reads row i of a string or binary array, dictionary
// encoded or not.
func stringReader(arr arrow.Array) func(i int) []byte {
	switch a := arr.(type) {
	case *array.String:
		return func(i int) []byte { return unsafeBytes(a.Value(i)) }
	case *array.LargeString:
		return func(i int) []byte { return unsafeBytes(a.Value(i)) }
	case *array.Binary:
		return a.Value
	case *array.LargeBinary:
		return a.Value
	case *array.Dictionary:
		dict := stringReader(a.Dictionary())
		return func(i int) []byte { return dict(a.GetValueIndex(i)) }
	}
	return func(int) []byte { panic(fmt.Sprintf("vector: %s is not a string column", arr.DataType())) }
}

func (c *compiler) compareStrings(e Compare) (boolFn, error) {
	l, err := c.str(e.L)
	if err != nil {
		return nil, err
	}
	r, err := c.str(e.R)
	if err != nil {
		return nil, err
	}
	out := &boolVec{}
	return func(b *batch, sel []int32) (*boolVec, error) {
		lv, rv := l(b), r(b)
		out.v = grow(out.v, len(sel))
		out.null = grow(out.null, len(sel))
		anyNull := false
		for i, row := range sel {
			lb, ln := lv.at(int(row))
			rb, rn := rv.at(int(row))
			if ln || rn {
				out.v[i], out.null[i] = false, true
				anyNull = true
				continue
			}
			out.v[i], out.null[i] = holds(e.Op, bytes.Compare(lb, rb)), false
		}
		if !anyNull {
			out.null = out.null[:0]
			out.null = nil
		}
		return out, nil
	}, nil
}

func (s strVec) at(i int) ([]byte, bool) {
	if s.arr == nil {
		return s.constant, s.constNull
	}
	if s.arr.IsNull(i) {
		return nil, true
	}
	return s.value(i), false
}

func (c *compiler) in(e In) (boolFn, error) {
	hasNull := false
	for _, k := range e.List {
		hasNull = hasNull || k.Null
	}
	out := &boolVec{}
	finish := func(n int, isNull func(i int) bool, match func(i int) bool) *boolVec {
		out.v = grow(out.v, n)
		out.null = grow(out.null, n)
		anyNull := false
		for i := range n {
			switch {
			case isNull(i):
				out.v[i], out.null[i] = false, true
			case match(i):
				out.v[i], out.null[i] = true, false
			default:
				out.v[i], out.null[i] = false, hasNull
			}
			anyNull = anyNull || out.null[i]
		}
		if !anyNull {
			out.null = nil
		}
		return out
	}
	if e.E.Type().Kind == String {
		s, err := c.str(e.E)
		if err != nil {
			return nil, err
		}
		set := map[string]bool{}
		for _, k := range e.List {
			if !k.Null {
				set[k.S] = true
			}
		}
		return func(b *batch, sel []int32) (*boolVec, error) {
			sv := s(b)
			return finish(len(sel),
				func(i int) bool { _, n := sv.at(int(sel[i])); return n },
				func(i int) bool { v, _ := sv.at(int(sel[i])); return set[string(v)] }), nil
		}, nil
	}
	n, err := c.num(e.E)
	if err != nil {
		return nil, err
	}
	t := e.E.Type()
	return func(b *batch, sel []int32) (*boolVec, error) {
		v, err := n(b, sel)
		if err != nil {
			return nil, err
		}
		return finish(len(sel),
			func(i int) bool { return v.null != nil && v.null[i] },
			func(i int) bool {
				for _, k := range e.List {
					if !k.Null && cmpScaled(v.v[i], t.Scale, k.I, k.T.Scale) == 0 {
						return true
					}
				}
				return false
			}), nil
	}, nil
}

// filter narrows sel to the rows where the predicate is TRUE. A chain of
// ANDs narrows conjunct by conjunct, so later conjuncts only see rows the
// earlier ones kept.
func (c *compiler) filter(e Expr) (func(b *batch, sel []int32) ([]int32, error), error) {
	if a, ok := e.(And); ok {
		if f, ok := c.ranges(a); ok {
			return f, nil
		}
		l, err := c.filter(a.L)
		if err != nil {
			return nil, err
		}
		r, err := c.filter(a.R)
		if err != nil {
			return nil, err
		}
		return func(b *batch, sel []int32) ([]int32, error) {
			s, err := l(b, sel)
			if err != nil || len(s) == 0 {
				return s, err
			}
			return r(b, s)
		}, nil
	}
	p, err := c.pred(e)
	if err != nil {
		return nil, err
	}
	var buf []int32
	return c.fuse(e, func(b *batch, sel []int32) ([]int32, error) {
		v, err := p(b, sel)
		if err != nil {
			return nil, err
		}
		buf = buf[:0]
		for i, row := range sel {
			if v.v[i] && (v.null == nil || !v.null[i]) {
				buf = append(buf, row)
			}
		}
		return buf, nil
	}), nil
}

// unsafeBytes views s as bytes without copying; the bytes are only read.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// decimalOp is out = x op y at one scale, exactly, skipping NULL rows.
func decimalOp(op ArithOp, out, x, y []int64, null []bool) error {
	ok := true
	switch op {
	case '+':
		for i := range out {
			a, b := x[i], y[i]
			v := a + b
			// Overflow when both signs agree and the result's differs.
			ok = ok && ((a^v)&(b^v) >= 0 || (null != nil && null[i]))
			out[i] = v
		}
	case '-':
		for i := range out {
			a, b := x[i], y[i]
			v := a - b
			ok = ok && ((a^b)&(a^v) >= 0 || (null != nil && null[i]))
			out[i] = v
		}
	default:
		for i := range out {
			if null != nil && null[i] {
				continue
			}
			v, fits := mulExact(x[i], y[i])
			ok = ok && fits
			out[i] = v
		}
	}
	if !ok {
		return ErrInexact
	}
	return nil
}

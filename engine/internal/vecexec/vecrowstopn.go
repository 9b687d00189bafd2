package vecexec

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/icesql/icesql/pushdown/vector"
)

// An ORDER BY ... LIMIT n over a scan, or over a WHERE clause the vector
// path computes, used to have every row the clause keeps built for
// go-mysql-server's TopN to keep n of them: "ORDER BY l_extendedprice DESC
// LIMIT 10" over TPC-H lineitem built six million rows. Now the vector
// filter's workers build a row only while its first sort key can place it
// among the first n: each worker keeps the n best first keys it has seen,
// and a row whose key is worse than all of them is worse than n rows of
// the table. Rows tied with the worst of them are built too, so the TopN,
// which still runs above on the rows built, orders them by every key
// exactly as before.

// rowsTopN is a TopN over a vectorFilter that narrows its rows.
type rowsTopN struct {
	v     *vectorFilter
	n     int64
	key   int  // the first sort key's column in v.cols
	desc  bool // descending: NULL sorts last
	conds sql.SortConditions
}

// newRowsTopN translates a TopN over a scan or a vectorized Filter, or says
// why it cannot ("" when its child is neither).
func newRowsTopN(ctx *sql.Context, n *plan.TopN) (*rowsTopN, string) {
	var v *vectorFilter
	var why string
	if f, ok := n.Child.(*plan.Filter); ok {
		v, why = newVectorFilter(ctx, f)
	} else if t, _ := filteredScan(n.Child); t != nil {
		v, why = newVectorScan(ctx, n.Child, nil)
	} else {
		return nil, ""
	}
	if v == nil {
		return nil, why
	}
	if n.CalcFoundRows {
		return nil, "SQL_CALC_FOUND_ROWS counts every row"
	}
	limit, err := iters.GetInt64Value(ctx, n.Limit)
	if err != nil || limit <= 0 {
		return nil, "the LIMIT is not a positive constant"
	}
	first := n.SortConditions[0]
	if first.NullOrdering != sql.NullsFirst {
		return nil, "NULLS LAST"
	}
	gf, ok := first.Expr.(*expression.GetField)
	if !ok || gf.Index() < 0 || gf.Index() >= len(v.cols) || !v.t.Owns(gf) {
		return nil, "the first sort key is not a column of the scan"
	}
	tr := &VecTranslator{Ctx: ctx, T: v.t, Cols: map[string]bool{}}
	if c, _, err := tr.column(gf); err != nil || c.Name != v.cols[gf.Index()] {
		return nil, "the first sort key is not a column the vector path reads"
	}
	return &rowsTopN{v: v, n: limit, key: gf.Index(), desc: first.Order == sql.Descending, conds: n.SortConditions}, ""
}

// noteRowsTopN tells EXPLAIN which ORDER BY ... LIMIT builds only the rows
// that can be among its first n.
func noteRowsTopN(ctx *sql.Context, n sql.Node, inner map[sql.Node]bool) {
	if !VectorizeOn(ctx) {
		return
	}
	WalkPlan(ctx, n, func(n sql.Node) {
		tn, ok := n.(*plan.TopN)
		if !ok || inner[tn] {
			return // a subquery's TopN is built again per outer row, on the row path
		}
		if top, _ := newRowsTopN(ctx, tn); top != nil {
			note := top.v.t.ScanRef().filterNote
			if note == "" {
				note = "yes: the scan runs on Arrow batches"
			}
			top.v.t.ScanRef().filterNote = note + "; the ORDER BY ... LIMIT builds only the rows that can be among its first " + strconv.FormatInt(top.n, 10)
		}
	})
}

func (r *rowsTopN) iter(ctx *sql.Context) (sql.RowIter, error) {
	rows, err := r.v.unordered(ctx, func() (batchFunc, error) {
		k, err := r.v.keeper()
		if err != nil {
			return nil, err
		}
		k.top = &BestKeys{N: int(r.n), key: r.key, Desc: r.desc}
		return k.filter, nil
	})
	if err != nil {
		return nil, err
	}
	if r.n == 1 {
		return iters.NewTopRowIter(r.conds, false, rows), nil
	}
	return iters.NewTopRowsIter(r.conds, r.n, false, rows), nil
}

// BestKeys is one worker's n best first sort keys, in a heap whose root
// is the worst of them. A column's keys are int64s (integers, dates, the
// unscaled values of a decimal) or strings (compared bytewise, as the
// vector path compares only columns of a binary collation).
type BestKeys struct {
	N, key   int
	Desc     bool
	ints     heap[int64]
	strs     heap[string]
	nonNulls int // keys seen that are not NULL
	buf      []int32
}

// Narrow keeps of the rows keep of a batch (whose columns are cols) those
// that can be among the first n.
func (b *BestKeys) Narrow(cols []arrow.Array, keep []int32) []int32 {
	out := b.buf[:0]
	arr := cols[b.key]
	ints, strs := intKeys(arr), strKeys(arr)
	if ints == nil && strs == nil {
		return keep // a representation without a key order here: all of them
	}
	for _, r := range keep {
		if arr.IsNull(int(r)) {
			// NULL sorts first ascending, last descending: then it
			// is worse than n keys once n have been seen.
			if !b.Desc || b.nonNulls < b.N {
				out = append(out, r)
			}
			continue
		}
		b.nonNulls++
		var in bool
		if ints != nil {
			k, ok := ints(int(r))
			in = !ok || b.ints.offer(k, b.N, b.Desc, func(k int64) int64 { return k })
		} else {
			in = b.strs.offer(strs(int(r)), b.N, b.Desc, strings.Clone)
		}
		if in {
			out = append(out, r)
		}
	}
	b.buf = out
	return out
}

// intKeys reads an integer, date, decimal or float column's keys, floats
// as pushdown/vector orders them (ok false: a decimal beyond int64, -0 or
// NaN, kept without a verdict), or is nil.
func intKeys(arr arrow.Array) func(i int) (int64, bool) {
	switch a := arr.(type) {
	case *array.Int64:
		return func(i int) (int64, bool) { return a.Value(i), true }
	case *array.Int32:
		return func(i int) (int64, bool) { return int64(a.Value(i)), true }
	case *array.Date32:
		return func(i int) (int64, bool) { return int64(a.Value(i)), true }
	case *array.Decimal128:
		return func(i int) (int64, bool) {
			v := a.Value(i)
			hi, lo := v.HighBits(), v.LowBits()
			return int64(lo), (hi == 0 && lo>>63 == 0) || (hi == -1 && lo>>63 == 1)
		}
	case *array.Float64: // -0 ties 0 but keys apart from it: no verdict
		return func(i int) (int64, bool) { return vector.FloatKey(a.Value(i)) }
	case *array.Float32:
		return func(i int) (int64, bool) { return vector.FloatKey(float64(a.Value(i))) }
	}
	return nil
}

// strKeys reads a string column's keys, without copying, or is nil.
func strKeys(arr arrow.Array) func(i int) string {
	switch a := arr.(type) {
	case *array.String:
		return a.Value
	case *array.Dictionary:
		if d, ok := a.Dictionary().(*array.String); ok {
			return func(i int) string { return d.Value(a.GetValueIndex(i)) }
		}
	}
	return nil
}

// heap is a binary heap of up to n keys whose root is the worst: the
// largest ascending, the smallest descending.
type heap[K cmp.Ordered] []K

// offer says whether k can be among the n best: it is when fewer than n
// keys were offered, or it is no worse than the worst of the n best (a
// tie is kept). keep makes the copy the heap holds of k.
func (h *heap[K]) offer(k K, n int, desc bool, keep func(K) K) bool {
	worse := func(a, b K) bool { return (a > b) != desc && a != b }
	s := *h
	if len(s) < n {
		s = append(s, keep(k))
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(s[i], s[p]) {
				break
			}
			s[i], s[p] = s[p], s[i]
			i = p
		}
		*h = s
		return true
	}
	if k == s[0] {
		return true
	}
	if worse(k, s[0]) {
		return false
	}
	s[0] = keep(k)
	for i := 0; ; {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && worse(s[l], s[w]) {
			w = l
		}
		if r < len(s) && worse(s[r], s[w]) {
			w = r
		}
		if w == i {
			break
		}
		s[i], s[w] = s[w], s[i]
		i = w
	}
	return true
}

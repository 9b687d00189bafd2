package engine

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// An inner hash join of two Iceberg scans (each with its WHERE clause, as
// go-mysql-server plans TPC-H Q3) on an integer key runs on the vector
// path: the build side's kept rows fill a map by key, and each probe batch
// is filtered, looked up by the key column's Arrow values, and only the
// rows that join become go-mysql-server rows. On the row path every probe
// row was built, hashed through go-mysql-server's generic hashing, and
// mostly thrown away (in Q3, 19 of 20).

// vectorJoin is a JoinNode computed on the vector path. Its rows are the
// join's: the left row's columns, then the right row's.
type vectorJoin struct {
	left, right *vectorFilter
	lkey, rkey  int            // the key's column in the left and right rows
	cond        sql.Expression // the join condition on the joined row; nil when it is the key equality alone
}

// newVectorJoin translates j, or says why it cannot: an inner join,
// hashed (the right side under a HashLookup) or nested-loop, whose
// condition has an equality of an integer column of each side.
func newVectorJoin(ctx *sql.Context, j *plan.JoinNode, row sql.Row) (*vectorJoin, string) {
	if len(row) != 0 || j.ScopeLen != 0 {
		return nil, "a join inside a subquery"
	}
	if j.Filter == nil {
		return nil, "no join condition"
	}
	rightNode := j.Right()
	switch j.Op {
	case plan.JoinTypeHash:
		hl, ok := rightNode.(*plan.HashLookup)
		if !ok {
			return nil, "no hash lookup"
		}
		rightNode = hl.Child
	case plan.JoinTypeInner:
	default:
		return nil, "a " + j.Op.String()
	}
	left, why := vectorSource(ctx, j.Left())
	if left == nil {
		return nil, "left side: " + why
	}
	right, why := vectorSource(ctx, rightNode)
	if right == nil {
		return nil, "right side: " + why
	}
	vj := &vectorJoin{left: left, right: right, cond: j.Filter}
	// Only an equality makes a NULL key join nothing, and the condition
	// still decides every pair the keys match.
	conj := expression.SplitConjunction(ctx, j.Filter)
	for _, c := range conj {
		if vj.keyEquality(ctx, c) {
			if len(conj) == 1 {
				vj.cond = nil
			}
			return vj, ""
		}
	}
	return nil, "the join condition has no equality of integer columns of each side"
}

// keyEquality says whether c is left column = right column, both signed
// integers, and makes them the join's key.
func (vj *vectorJoin) keyEquality(ctx *sql.Context, c sql.Expression) bool {
	e, ok := c.(*expression.Equals)
	if !ok {
		return false
	}
	a, ok1 := e.Left().(*expression.GetField)
	b, ok2 := e.Right().(*expression.GetField)
	if !ok1 || !ok2 {
		return false
	}
	if a.Index() > b.Index() {
		a, b = b, a
	}
	w := vj.left.width
	if a.Index() >= w || b.Index() < w {
		return false
	}
	rb := b.WithIndex(b.Index() - w).(*expression.GetField)
	if !intKey(ctx, vj.left, a) || !intKey(ctx, vj.right, rb) {
		return false
	}
	vj.lkey, vj.rkey = a.Index(), rb.Index()
	return true
}

// keyColumn is the column a hash lookup's key is: go-mysql-server makes
// the key a tuple, here of one column.
func keyColumn(e sql.Expression) (*expression.GetField, bool) {
	if t, ok := e.(expression.Tuple); ok && len(t) == 1 {
		e = t[0]
	}
	gf, ok := e.(*expression.GetField)
	return gf, ok
}

// intKey says gf is a signed integer column of v's rows.
func intKey(ctx *sql.Context, v *vectorFilter, gf *expression.GetField) bool {
	if !v.t.owns(gf) || gf.Index() < 0 || gf.Index() >= v.width || !types.IsSigned(gf.Type(ctx)) {
		return false
	}
	j := v.t.schema.IndexOfColName(gf.Name())
	if j < 0 || j >= len(v.t.names) || v.cols[gf.Index()] != v.t.names[j] {
		return false
	}
	f, ok := v.t.tbl.Schema().FindFieldByName(v.cols[gf.Index()])
	if !ok {
		return false
	}
	switch f.Type.String() {
	case "int", "long":
		return true
	}
	return false
}

func (vj *vectorJoin) iter(ctx *sql.Context) (sql.RowIter, error) {
	table, err := vj.build(ctx)
	if err != nil {
		return nil, err
	}
	width := vj.left.width + vj.right.width
	return vj.left.pipeline(ctx, func() (batchFunc, error) {
		k, err := vj.left.keeper()
		if err != nil {
			return nil, err
		}
		p := &prober{vj: vj, k: k, table: table, rows: rowBlocks{width: width}}
		return p.probe, nil
	})
}

// build reads the right side into a hash table by key, in scan order.
func (vj *vectorJoin) build(ctx *sql.Context) (*joinTable, error) {
	it, err := vj.right.iter(ctx)
	if err != nil {
		return nil, err
	}
	defer it.Close(ctx)
	t := &joinTable{}
	for {
		row, err := it.Next(ctx)
		if err == io.EOF {
			t.index()
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		if k, ok := intValue(row[vj.rkey]); ok {
			t.add(k, row)
		}
	}
}

func intValue(v any) (int64, bool) {
	switch v := v.(type) {
	case int32:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// prober joins one worker's probe batches.
type prober struct {
	vj    *vectorJoin
	k     *keptRows
	table *joinTable
	rows  rowBlocks
	buf   []sql.Row
}

func (p *prober) probe(ctx *sql.Context, rec arrow.RecordBatch) ([]sql.Row, error) {
	keep, pending, err := p.k.selectRows(ctx, rec)
	if err != nil {
		return nil, err
	}
	var out []sql.Row
	if keep == nil {
		for _, l := range pending {
			if k, ok := intValue(l[p.vj.lkey]); ok {
				if out, err = p.join(ctx, out, l, p.table.matches(k, p.buf[:0])); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	keys := p.k.cols[p.vj.lkey]
	key := keyReader(keys)
	if key == nil {
		return nil, fmt.Errorf("vectorized join over %s: key column is %s", p.vj.left.t.String(), keys.DataType())
	}
	for _, r := range keep {
		if keys.IsNull(int(r)) {
			continue
		}
		k := key(int(r))
		if !p.table.mayHave(k) {
			continue
		}
		matches := p.table.matches(k, p.buf[:0])
		p.buf = matches
		if len(matches) == 0 {
			continue
		}
		l, err := p.k.row(int(r))
		if err != nil {
			return nil, err
		}
		if out, err = p.join(ctx, out, l, matches); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// join appends the rows l makes with each of matches that pass the join
// condition.
func (p *prober) join(ctx *sql.Context, out []sql.Row, l sql.Row, matches []sql.Row) ([]sql.Row, error) {
	for _, m := range matches {
		row := p.rows.next()
		copy(row, l)
		copy(row[len(l):], m)
		if p.vj.cond != nil {
			ok, err := sql.EvaluateCondition(ctx, p.vj.cond, row)
			if err != nil {
				return nil, err
			}
			if !sql.IsTrue(ok) {
				continue
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// keyReader reads an integer key column's values as int64s.
func keyReader(arr arrow.Array) func(int) int64 {
	switch a := arr.(type) {
	case *array.Int32:
		vals := a.Int32Values()
		return func(i int) int64 { return int64(vals[i]) }
	case *array.Int64:
		vals := a.Int64Values()
		return func(i int) int64 { return vals[i] }
	}
	return nil
}

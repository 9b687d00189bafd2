package vecexec

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// A hash join of two Iceberg scans (each with its WHERE clause, as
// go-mysql-server plans TPC-H Q3) on an equality of keys the vector path
// codes (vecjoinkey.go: integers, booleans, byte-compared strings) runs on
// the vector path: the build side's kept rows fill a map by key, and each
// probe batch is filtered, looked up by the key column's Arrow values, and
// only the rows that join become go-mysql-server rows. On the row path
// every probe row was built, hashed through go-mysql-server's generic
// hashing, and mostly thrown away (in Q3, 19 of 20). A LEFT JOIN (and a
// RIGHT JOIN, which go-mysql-server plans as one with its sides swapped)
// keeps each probe row that joins nothing, padded with NULLs.

// vectorJoin is a JoinNode computed on the vector path. Its rows are the
// join's: the left row's columns, then the right row's.
type vectorJoin struct {
	left, right *vectorFilter
	lkey, rkey  int            // the key's column in the left and right rows
	keys        *joinKeys      // codes the key's values
	cond        sql.Expression // the join condition on the joined row; nil when it is the key equality alone
	Outer       bool           // a left outer join: a left row that joins nothing is kept, padded
}

// NewVectorJoin translates j, or says why it cannot: an inner or left
// outer join, hashed (the right side under a HashLookup) or nested-loop,
// whose condition has an equality of a key column of each side.
func NewVectorJoin(ctx *sql.Context, j *plan.JoinNode, row sql.Row) (*vectorJoin, string) {
	if len(row) != 0 || j.ScopeLen != 0 {
		return nil, "a join inside a subquery"
	}
	if j.Filter == nil {
		return nil, "no join condition"
	}
	rightNode := j.Right()
	switch j.Op {
	case plan.JoinTypeHash, plan.JoinTypeLeftOuterHash:
		hl, ok := rightNode.(*plan.HashLookup)
		if !ok {
			return nil, "no hash lookup"
		}
		rightNode = hl.Child
	case plan.JoinTypeInner, plan.JoinTypeLeftOuter:
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
	vj := &vectorJoin{left: left, right: right, cond: j.Filter, Outer: j.Op.IsLeftOuter()}
	// Only an equality makes a NULL key join nothing, and the condition
	// still decides every pair the keys match.
	conj := expression.SplitConjunction(ctx, j.Filter)
	for i, c := range conj {
		if vj.keyEquality(ctx, c) {
			rest := slices.Delete(slices.Clone(conj), i, i+1)
			switch {
			case len(rest) == 0:
				vj.cond = nil
			case vj.Outer:
				vj.filterBuildSide(ctx, rightNode, rest)
			}
			return vj, ""
		}
	}
	return nil, "the join condition has no equality of key columns of each side (integers, booleans, or strings compared byte by byte)"
}

// filterBuildSide moves the rest of an outer join's condition, when it
// reads only the right side's columns (go-mysql-server leaves such a
// condition in a LEFT JOIN's ON clause), to the right side's WHERE
// clause: a right row it rejects joins no left row either way, so the
// build side leaves it out and the keys alone decide the pairs, which an
// aggregate over the join needs (vecjoinagg.go).
func (vj *vectorJoin) filterBuildSide(ctx *sql.Context, rightNode sql.Node, rest []sql.Expression) {
	if right := pushIntoScan(ctx, rightNode, rest, vj.left.width); right != nil { // vecrel.go
		vj.right, vj.cond = right, nil
	}
}

// shiftToRight is conds, conditions on a joined row whose right side's
// columns start at w, on the right side's rows; false when one reads a
// column of the left side.
func shiftToRight(ctx *sql.Context, conds []sql.Expression, w int) ([]sql.Expression, bool) {
	shifted := make([]sql.Expression, 0, len(conds)+1)
	for _, c := range conds {
		e, _, err := transform.Expr(ctx, c, func(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			gf, ok := e.(*expression.GetField)
			if !ok {
				return e, transform.SameTree, nil
			}
			if gf.Index() < w {
				return nil, transform.SameTree, errLeftColumn
			}
			return gf.WithIndex(gf.Index() - w), transform.NewTree, nil
		})
		if err != nil {
			return nil, false
		}
		shifted = append(shifted, e)
	}
	return shifted, true
}

// errLeftColumn stops filterBuildSide at a column of the left side.
var errLeftColumn = errors.New("a column of the left side")

// keyEquality says whether c is left column = right column, of keys coded
// alike, and makes them the join's key.
func (vj *vectorJoin) keyEquality(ctx *sql.Context, c sql.Expression) bool {
	e, ok := c.(*expression.Equals)
	if !ok {
		return false
	}
	a, ok1 := exactOperand(e.Left()).(*expression.GetField)
	b, ok2 := exactOperand(e.Right()).(*expression.GetField)
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
	keys, ok := joinKeysOf(ctx, vj.left, a, vj.right, rb)
	if !ok {
		return false
	}
	vj.lkey, vj.rkey, vj.keys = a.Index(), rb.Index(), keys
	return true
}

// exactOperand is e without the exactDecimal that makes a comparison of
// decimals of two scales exact (sqlfunc/decimalcompare.go): the join's keys
// compare them exactly too (vecjoinkey.go).
func exactOperand(e sql.Expression) sql.Expression {
	if x, ok := e.(*sqlfunc.ExactDecimal); ok {
		return x.Child
	}
	return e
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
		p := &prober{vj: vj, k: k, table: table, rows: sqlval.RowBlocks{Width: width}}
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
		if errors.Is(err, io.EOF) {
			t.index()
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		if k, ok := vj.keys.add(row[vj.rkey]); ok {
			t.add(k, row)
		}
	}
}

// prober joins one worker's probe batches.
type prober struct {
	vj    *vectorJoin
	k     *keptRows
	table *joinTable
	rows  sqlval.RowBlocks
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
			if out, err = p.join(ctx, out, l, p.matches(p.vj.keys.find(l[p.vj.lkey]))); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	key, err := p.vj.keys.reader(p.k.cols[p.vj.lkey], false)
	if err != nil {
		return nil, fmt.Errorf("vectorized join over %s: %w", p.vj.left.t.String(), err)
	}
	for _, r := range keep {
		matches := p.matches(key(int(r)))
		if len(matches) == 0 && !p.vj.Outer {
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

// matches is the build rows of key k (none when ok is false).
func (p *prober) matches(k int64, ok bool) []sql.Row {
	if !ok || !p.table.mayHave(k) {
		return nil
	}
	p.buf = p.table.matches(k, p.buf[:0])
	return p.buf
}

// join appends the rows l makes with each of matches that pass the join
// condition; in an outer join, l padded with NULLs when none does.
func (p *prober) join(ctx *sql.Context, out []sql.Row, l sql.Row, matches []sql.Row) ([]sql.Row, error) {
	joined := false
	for _, m := range matches {
		row := p.rows.Next()
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
		joined = true
	}
	if !joined && p.vj.Outer {
		row := p.rows.Next()
		copy(row, l)
		clear(row[len(l):])
		out = append(out, row)
	}
	return out, nil
}

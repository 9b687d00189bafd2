package planrules

import (
	"errors"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/hash"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/icesql/icesql/engine/internal/memlimit"
)

// GroupByBuilder runs GROUP BY off the vector path (plan.GroupBy with
// grouping expressions) itself. go-mysql-server's grouping iterator reads
// its child on one goroutine and groups on another, through a channel; when
// the grouping side fails (its cache refused to grow past the memory
// budget, a key or an aggregate failed) it returns while the reading side
// is blocked sending to it, and the statement waits forever: the hostile
// test's GROUP BY of 10M groups under --memory-limit-mib 512 hung instead
// of answering 1041, and KILL QUERY could not end it. This one groups on
// the caller's goroutine, checks the budget as groups are added (1041 when
// over) and the context as rows arrive. Groups and their order are
// go-mysql-server's: one per hash of the grouping values (hash.HashOf, so
// collations group as they compare), in the order first seen.
type GroupByBuilder struct {
	Next sql.NodeExecBuilder
	Base sql.NodeExecBuilder // go-mysql-server's builder, for the child
}

func (b GroupByBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	g, ok := n.(*plan.GroupBy)
	if !ok || len(g.GroupByExprs) == 0 {
		return b.Next.Build(ctx, n, row)
	}
	child, err := b.Base.Build(ctx, g.Child, row)
	if err != nil {
		return nil, err
	}
	keySch := make(sql.Schema, len(g.GroupByExprs))
	for i, e := range g.GroupByExprs {
		keySch[i] = &sql.Column{Type: e.Type(ctx)}
	}
	return &groupingIter{selected: g.SelectDeps, by: g.GroupByExprs, keySch: keySch, child: child}, nil
}

// groupingIter groups its child's rows on the first Next, then returns one
// row per group.
type groupingIter struct {
	selected []sql.Expression
	by       []sql.Expression
	keySch   sql.Schema
	child    sql.RowIter
	groups   map[uint64][]sql.AggregationBuffer
	keys     []uint64 // in the order first seen
	grouped  bool
	next     int
}

func (it *groupingIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !it.grouped {
		if err := it.group(ctx); err != nil {
			it.dispose(ctx)
			return nil, err
		}
		it.grouped = true
	}
	if it.next >= len(it.keys) {
		return nil, io.EOF
	}
	bufs := it.groups[it.keys[it.next]]
	it.next++
	out := make(sql.Row, len(bufs))
	for i, b := range bufs {
		v, err := b.Eval(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (it *groupingIter) group(ctx *sql.Context) error {
	it.groups = map[uint64][]sql.AggregationBuffer{}
	var growth memlimit.Growth
	keyRow := make(sql.Row, len(it.by))
	for n := 1; ; n++ {
		row, err := it.child.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n%memlimit.CheckEvery == 0 {
			// A child that yields many rows to few groups never grows.
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		key, err := groupKey(ctx, it.by, it.keySch, keyRow, row)
		if err != nil {
			return err
		}
		bufs, ok := it.groups[key]
		if !ok {
			if bufs, err = NewBuffers(ctx, it.selected); err != nil {
				return err
			}
			it.groups[key] = bufs
			it.keys = append(it.keys, key)
			if err := growth.Grow(ctx, false); err != nil {
				return err
			}
		}
		for _, b := range bufs {
			if err := b.Update(ctx, row); err != nil {
				return err
			}
		}
	}
}

// groupKey hashes the grouping values of row as go-mysql-server does, so
// that values its collations call equal fall in one group. keyRow is
// scratch space of len(by).
func groupKey(ctx *sql.Context, by []sql.Expression, keySch sql.Schema, keyRow, row sql.Row) (uint64, error) {
	for i, e := range by {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return 0, err
		}
		if ext, ok := keySch[i].Type.(sql.ExtendedType); ok {
			b, err := ext.SerializeValue(ctx, v)
			if err != nil {
				return 0, err
			}
			v = string(b)
		}
		keyRow[i] = v
	}
	return hash.HashOf(ctx, keySch, keyRow)
}

// NewBuffers are a new group's aggregation buffers: a selected expression
// that is no aggregate takes its group's first value, as in
// go-mysql-server (and MySQL without ONLY_FULL_GROUP_BY).
func NewBuffers(ctx *sql.Context, selected []sql.Expression) ([]sql.AggregationBuffer, error) {
	bufs := make([]sql.AggregationBuffer, len(selected))
	for i, e := range selected {
		agg, ok := e.(sql.Aggregation)
		if !ok {
			agg = aggregation.NewFirst(e)
		}
		b, err := agg.NewBuffer(ctx)
		if err != nil {
			return nil, err
		}
		bufs[i] = b
	}
	return bufs, nil
}

func (it *groupingIter) dispose(ctx *sql.Context) {
	for _, bufs := range it.groups {
		for _, b := range bufs {
			b.Dispose(ctx)
		}
	}
	it.groups, it.keys = nil, nil
}

func (it *groupingIter) Close(ctx *sql.Context) error {
	it.dispose(ctx)
	return it.child.Close(ctx)
}

package engine

import (
	"errors"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// go-mysql-server's hash join builds the hash table of its inner side
// (plan.HashLookup) while the first outer row reads that side, and keeps
// it only if that read reached the end. Two joins stop early: an anti-join
// of NOT IN stops at the first inner row whose key is NULL, and a semi-join
// of IN or EXISTS at the first match. Then every outer row built the inner
// side again: `WHERE s NOT IN (SELECT s FROM t3)` over 3,000-row tables
// scanned t3 once per row of the outer table, for minutes.
//
// hashJoinBuilder builds every HashLookup itself: the first build reads the
// inner side to the end into the table, whoever asked, and every build
// then answers from it. The table lives on the node, as go-mysql-server's
// does, and dies with it (HashLookup.Dispose, at the end of the statement).

// nullKeyRows is the key under which the table of a NULL-aware join keeps
// the inner rows whose key has a NULL; go-mysql-server's keys are hashes
// and strings, never this.
type nullKeyRows struct{}

// hashJoinBuilder is the exec builder's priority builder: it builds
// HashLookup nodes and leaves every other node to next.
type hashJoinBuilder struct {
	next sql.NodeExecBuilder // the vector path's builder
	base sql.NodeExecBuilder // go-mysql-server's builder
}

func (b hashJoinBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	hl, ok := n.(*plan.HashLookup)
	if !ok {
		return b.next.Build(ctx, n, row)
	}
	hl.Mutex.Lock()
	defer hl.Mutex.Unlock()
	if hl.Lookup == nil {
		table, err := b.buildTable(ctx, hl, row)
		if err != nil {
			return nil, err
		}
		hl.Lookup = &table
	}
	rows, err := probe(ctx, hl, *hl.Lookup, row)
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(rows...), nil
}

// buildTable reads the inner side of hl to the end into a hash table.
func (b hashJoinBuilder) buildTable(ctx *sql.Context, hl *plan.HashLookup, row sql.Row) (table map[any][]sql.Row, err error) {
	iter, err := b.base.Build(ctx, hl.Child, row)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := iter.Close(ctx); err == nil {
			err = cerr
		}
	}()
	table = map[any][]sql.Row{}
	for {
		r, err := iter.Next(ctx)
		if errors.Is(err, io.EOF) {
			return table, nil
		}
		if err != nil {
			return nil, err
		}
		if hl.JoinType.IsExcludeNulls() {
			v, err := hl.RightEntryKey.Eval(ctx, r)
			if err != nil {
				return nil, err
			}
			if hasNull(v) {
				table[nullKeyRows{}] = append(table[nullKeyRows{}], r)
				continue
			}
		}
		key, _, err := hl.GetHashKey(ctx, hl.RightEntryKey, r)
		if err != nil {
			return nil, err
		}
		table[key] = append(table[key], r)
	}
}

// probe returns the inner rows the join must compare with the outer row:
// those with its key. A join that treats a NULL comparison apart (the
// anti-join of NOT IN, whose result is NULL, so no row, when the subquery
// holds a NULL) also gets every inner row whose comparison may be NULL:
// those with a NULL in their key, and all rows when the outer key has one.
// Every other inner row has a different key, so the join condition is
// false for it.
func probe(ctx *sql.Context, hl *plan.HashLookup, table map[any][]sql.Row, row sql.Row) ([]sql.Row, error) {
	if !hl.JoinType.IsExcludeNulls() {
		// As go-mysql-server does: a NULL key finds the rows with a NULL
		// key, which a null-safe comparison (<=>) matches.
		key, _, err := hl.GetHashKey(ctx, hl.LeftProbeKey, row)
		if err != nil {
			return nil, err
		}
		return table[key], nil
	}
	v, err := hl.LeftProbeKey.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if hasNull(v) {
		var all []sql.Row
		for _, rows := range table {
			all = append(all, rows...)
		}
		return all, nil
	}
	key, _, err := hl.GetHashKey(ctx, hl.LeftProbeKey, row)
	if err != nil {
		return nil, err
	}
	matched, nulls := table[key], table[nullKeyRows{}]
	if len(nulls) == 0 {
		return matched, nil
	}
	return append(append(make([]sql.Row, 0, len(matched)+len(nulls)), matched...), nulls...), nil
}

// hasNull says a key value (a value, or a tuple of them) holds a NULL.
func hasNull(v any) bool {
	if v == nil {
		return true
	}
	if tuple, ok := v.([]any); ok {
		for _, x := range tuple {
			if hasNull(x) {
				return true
			}
		}
	}
	return false
}

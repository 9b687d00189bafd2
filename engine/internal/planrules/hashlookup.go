package planrules

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
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

// HashJoinBuilder is the exec builder's priority builder: it builds
// HashLookup nodes and leaves every other node to next.
type HashJoinBuilder struct {
	Next sql.NodeExecBuilder // the vector path's builder
	Base sql.NodeExecBuilder // go-mysql-server's builder
}

func (b HashJoinBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	hl, ok := n.(*plan.HashLookup)
	if !ok {
		return b.Next.Build(ctx, n, row)
	}
	hl.Mutex.Lock()
	defer hl.Mutex.Unlock()
	if src, ok := hl.Child.(*OrSource); ok { // orjoin.go
		if hl.Lookup == nil {
			table, err := b.buildOrTable(ctx, hl, src, row)
			if err != nil {
				return nil, err
			}
			hl.Lookup = &table
		}
		rows, err := probeOr(ctx, hl, src, *hl.Lookup, row)
		if err != nil {
			return nil, err
		}
		return sql.RowsToRowIter(rows...), nil
	}
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
func (b HashJoinBuilder) buildTable(ctx *sql.Context, hl *plan.HashLookup, row sql.Row) (table map[any][]sql.Row, err error) {
	iter, err := b.Base.Build(ctx, hl.Child, row)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := iter.Close(ctx); err == nil {
			err = cerr
		}
	}()
	table = map[any][]sql.Row{}
	ints := hashesInts(ctx, hl)
	if ints {
		table[intKeyed{}] = nil
	}
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
		key, err := hashKey(ctx, hl, hl.RightEntryKey, r, ints)
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
	_, ints := table[intKeyed{}]
	if !hl.JoinType.IsExcludeNulls() {
		// As go-mysql-server does: a NULL key finds the rows with a NULL
		// key, which a null-safe comparison (<=>) matches.
		key, err := hashKey(ctx, hl, hl.LeftProbeKey, row, ints)
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
	key, err := hashKey(ctx, hl, hl.LeftProbeKey, row, ints)
	if err != nil {
		return nil, err
	}
	matched, nulls := table[key], table[nullKeyRows{}]
	if len(nulls) == 0 {
		return matched, nil
	}
	return append(append(make([]sql.Row, 0, len(matched)+len(nulls)), matched...), nulls...), nil
}

// intKey is the hash key of a join on at most four integer columns on both
// sides (TPC-H's keys): the values as int64, without go-mysql-server's
// conversion of the tuple to its compare type and hashing of the result,
// which took a fifth of Q9's time. Both sides of one HashLookup use the
// same kind of key, so that equal values meet.
type intKey struct {
	v     [4]int64
	nulls uint8 // bit i: column i is NULL
	big   uint8 // bit i: column i is a uint64 above the int64 range, its bits in v[i]
}

// intKeyed is in a table whose keys are intKeys, without rows.
type intKeyed struct{}

// hashKey is the key of row's value of e (one side's key) in hl's table:
// an intKey when ints (hashesInts, decided once per table).
func hashKey(ctx *sql.Context, hl *plan.HashLookup, e sql.Expression, row sql.Row, ints bool) (any, error) {
	if ints {
		cols := []sql.Expression{e}
		if t, ok := e.(expression.Tuple); ok {
			cols = t
		}
		var k intKey
		for i, c := range cols {
			v, err := c.Eval(ctx, row)
			if err != nil {
				return nil, err
			}
			switch v := v.(type) {
			case nil:
				k.nulls |= 1 << i
			case int8:
				k.v[i] = int64(v)
			case int16:
				k.v[i] = int64(v)
			case int32:
				k.v[i] = int64(v)
			case int64:
				k.v[i] = v
			case int:
				k.v[i] = int64(v)
			case uint8:
				k.v[i] = int64(v)
			case uint16:
				k.v[i] = int64(v)
			case uint32:
				k.v[i] = int64(v)
			case uint64:
				if v > math.MaxInt64 {
					k.big |= 1 << i
				}
				k.v[i] = int64(v)
			default:
				return nil, fmt.Errorf("hash join: an integer key column gave a %T", v)
			}
		}
		return k, nil
	}
	key, _, err := hl.GetHashKey(ctx, e, row)
	return key, err
}

// HashableEquality says the hash tables of hashPartialJoins and
// keyOrJoins may key an equality of l with r: the hash key compares their
// values exactly when they have one type, or are integer columns
// (intKey).
func HashableEquality(ctx *sql.Context, l, r sql.Expression) bool {
	return l.Type(ctx).Equals(r.Type(ctx)) || integerColumns(ctx, l) && integerColumns(ctx, r)
}

// hashesInts says both of hl's keys are one to four integer columns.
func hashesInts(ctx *sql.Context, hl *plan.HashLookup) bool {
	return integerColumns(ctx, hl.LeftProbeKey) && integerColumns(ctx, hl.RightEntryKey)
}

func integerColumns(ctx *sql.Context, e sql.Expression) bool {
	cols := []sql.Expression{e}
	if t, ok := e.(expression.Tuple); ok {
		cols = t
	}
	if len(cols) == 0 || len(cols) > 4 {
		return false
	}
	for _, c := range cols {
		if _, ok := c.(*expression.GetField); !ok || !types.IsInteger(c.Type(ctx)) {
			return false
		}
	}
	return true
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

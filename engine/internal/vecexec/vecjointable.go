package vecexec

import "github.com/dolthub/go-mysql-server/sql"

// joinTable is a vectorized join's build side: its rows in scan order,
// chained by key. Keys are gathered first and indexed once every row is
// in: where their range is small next to their number (order keys, ids),
// an array indexed by key - lo replaces the map, which both builds and
// rejects a probe key far faster.
type joinTable struct {
	rows []sql.Row
	keys []int64
	next []int32 // the next row with the same key, -1 for none
	lo   int64
	hi   int64
	// Exactly one of dense and heads is set by index.
	dense []int32         // first row of key lo+i, -1 for none
	heads map[int64]int32 // first row of a key
}

// Limits of the dense index: at most 16 slots per row, and 256 MiB.
const (
	joinDenseSlotsPerRow = 16
	maxJoinDenseSlots    = 1 << 26
)

func (t *joinTable) add(k int64, row sql.Row) {
	if len(t.rows) == 0 || k < t.lo {
		t.lo = k
	}
	if len(t.rows) == 0 || k > t.hi {
		t.hi = k
	}
	t.rows = append(t.rows, row)
	t.keys = append(t.keys, k)
}

// index chains the rows by key, keeping scan order within a key.
func (t *joinTable) index() {
	n := len(t.keys)
	t.next = make([]int32, n)
	if n == 0 {
		t.heads = map[int64]int32{}
		return
	}
	// hi - lo wraps for keys of both extreme signs; as unsigned it is the
	// true span.
	span := uint64(t.hi-t.lo) + 1
	if span != 0 && span <= maxJoinDenseSlots && span <= uint64(n)*joinDenseSlotsPerRow {
		t.dense = make([]int32, span)
		for i := range t.dense {
			t.dense[i] = -1
		}
		// Walk backwards so each row links to the next one in scan order.
		for i := n - 1; i >= 0; i-- {
			slot := uint64(t.keys[i] - t.lo)
			t.next[i] = t.dense[slot]
			t.dense[slot] = int32(i)
		}
		return
	}
	t.heads = make(map[int64]int32, n)
	for i := n - 1; i >= 0; i-- {
		k := t.keys[i]
		if h, ok := t.heads[k]; ok {
			t.next[i] = h
		} else {
			t.next[i] = -1
		}
		t.heads[k] = int32(i)
	}
}

// first is the first row with key k, -1 for none.
func (t *joinTable) first(k int64) int32 {
	if len(t.keys) == 0 || k < t.lo || k > t.hi {
		return -1
	}
	if t.dense != nil {
		return t.dense[uint64(k-t.lo)]
	}
	if h, ok := t.heads[k]; ok {
		return h
	}
	return -1
}

// mayHave is false when no row has key k.
func (t *joinTable) mayHave(k int64) bool { return t.first(k) >= 0 }

// matches appends the rows with key k to buf, in scan order.
func (t *joinTable) matches(k int64, buf []sql.Row) []sql.Row {
	for i := t.first(k); i >= 0; i = t.next[i] {
		buf = append(buf, t.rows[i])
	}
	return buf
}

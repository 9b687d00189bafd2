package vector

// A GROUP BY on one integer, date or decimal column (TPC-H's l_orderkey,
// with 1.5 million groups at SF1) looks its groups up by the key's int64
// itself. The general lookup encodes every row's key as a string for a
// map of strings, and a new group's key as another string and a slice of
// its own: with a million groups, hashing, allocating and collecting
// those strings was most of the GROUP BY's time.

// intGroupIDs fills w.gids with the groups of the selected rows, whose key
// values are v.
func (w *worker) intGroupIDs(v *numVec, sel []int32) {
	for i := range sel {
		null := v.null != nil && v.null[i]
		if i > 0 && null == (v.null != nil && v.null[i-1]) && (null || v.v[i] == v.v[i-1]) {
			w.gids[i] = w.gids[i-1] // runs of one key (files sorted by it)
			continue
		}
		if null {
			w.gids[i] = w.intGroup(Value{Null: true})
			continue
		}
		g, ok := w.ints[v.v[i]]
		if !ok {
			g = w.intGroup(Value{I: v.v[i]})
		}
		w.gids[i] = g
	}
}

// intGroup is the group of key k, added when new.
func (w *worker) intGroup(k Value) int32 {
	if k.Null {
		if w.nullG < 0 {
			w.nullG = w.newGroup(w.keyOf(k))
		}
		return w.nullG
	}
	if g, ok := w.ints[k.I]; ok {
		return g
	}
	g := w.newGroup(w.keyOf(k))
	w.ints[k.I] = g
	return g
}

// keyOf is k as a group's key values, carved from a shared slab rather
// than allocated one by one.
func (w *worker) keyOf(k Value) []Value {
	if len(w.slab) == 0 {
		w.slab = make([]Value, 1024)
	}
	vals := w.slab[:1:1]
	w.slab = w.slab[1:]
	vals[0] = k
	return vals
}

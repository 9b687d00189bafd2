package vector

// A GROUP BY on one integer, date or decimal column (TPC-H's l_orderkey,
// with 1.5 million groups at SF1) looks its groups up by the key's int64
// itself, in an intTable (inttable.go), and keeps each group's key as one
// int64. The general lookup encodes every row's key as a string for a map
// of strings, and a new group's key as another string and a slice of its
// own: with a million groups, hashing, allocating and collecting those
// strings was most of the GROUP BY's time.

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
		w.gids[i] = w.intGroup(Value{I: v.v[i]})
	}
}

// intGroup is the group of key k, added when new.
func (w *worker) intGroup(k Value) int32 {
	if k.Null {
		if w.nullG < 0 {
			w.nullG = w.newGroup()
			w.intKeys = append(w.intKeys, 0)
		}
		return w.nullG
	}
	g, added := w.ints.getOrAdd(k.I, int32(len(w.rows)))
	if added {
		w.newGroup()
		w.intKeys = append(w.intKeys, k.I)
	}
	return g
}

// intKey is group g's key on the integer-key path.
func (w *worker) intKey(g int32) Value {
	if g == w.nullG {
		return Value{Null: true}
	}
	return Value{I: w.intKeys[g]}
}

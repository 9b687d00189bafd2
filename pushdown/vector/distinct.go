package vector

import "unsafe"

// COUNT(DISTINCT x) keeps the (group, value) pairs seen: numbers by their
// int64 (decimals unscaled at the argument's one scale) in one pairSet for
// every group, strings by their bytes in a set per group. Each group
// counts its pairs as they are added. Workers keep their own, merged at
// the end. One flat set rather than a Go map per group: a COUNT(DISTINCT)
// of a million values, or of a few values in each of a million groups,
// cost a map's probing, growth and memory per group.

// distinctSets is one CountDistinct aggregate's pairs, and their counts by
// group.
type distinctSets struct {
	counts []int64
	nums   pairSet
	strs   []map[string]struct{} // by group, made on first use
}

// pairSet is a set of (group, value) pairs by open addressing, as
// intTable.
type pairSet struct {
	slots []pairSlot
	shift uint
	n     int
	limit int
	mem   *account // asked before the slots grow (memory.go)
}

// pairSlot is a value and its group plus one; 0 marks an empty slot.
type pairSlot struct {
	v int64
	g int32
}

// pairSlotBytes is the size of a pairSlot.
const pairSlotBytes = int64(unsafe.Sizeof(pairSlot{}))

// pairHome is the slot where a lookup of (g, v) starts: intTable's home
// of v with g's bits mixed into the hash.
func pairHome(g int32, v int64, shift uint) int {
	return int((intHash(v>>3)^uint64(g)*0xc2b2ae3d27d4eb4f)>>shift)&^7 | int(v&7)
}

// add adds (g, v) and says whether it is new.
func (s *pairSet) add(g int32, v int64) bool {
	if s.n >= s.limit {
		s.resize(max(2*len(s.slots), minIntSlots))
	}
	mask := len(s.slots) - 1
	for i := pairHome(g, v, s.shift); ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.g == 0 {
			sl.v, sl.g = v, g+1
			s.n++
			return true
		}
		if sl.v == v && sl.g == g+1 {
			return false
		}
	}
}

func (s *pairSet) resize(size int) {
	s.mem.grow(int64(size) * pairSlotBytes) // the old slots are live until copied
	old := s.slots
	defer s.mem.shrink(int64(len(old)) * pairSlotBytes)
	s.slots = make([]pairSlot, size)
	s.shift = 64
	for n := size; n > 1; n >>= 1 {
		s.shift--
	}
	s.limit = size / 4 * 3
	mask := size - 1
	for _, sl := range old {
		if sl.g == 0 {
			continue
		}
		i := pairHome(sl.g-1, sl.v, s.shift)
		for s.slots[i].g != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
	}
}

// reserve makes room for n pairs without growing again.
func (s *pairSet) reserve(n int) {
	size := max(len(s.slots), minIntSlots)
	for n >= size/4*3 {
		size *= 2
	}
	if size > len(s.slots) {
		s.resize(size)
	}
}

func (a *accum) updateDistinct(b *batch, sel, gids []int32, arg argFn) error {
	d := &a.distinct
	if arg.str != nil {
		sv := arg.str(b)
		for i, row := range sel {
			s, null := sv.at(int(row))
			if null {
				continue
			}
			g := gids[i]
			set := d.strs[g]
			if set == nil {
				a.mem.grow(mapBytes)
				set = map[string]struct{}{}
				d.strs[g] = set
			}
			if _, ok := set[string(s)]; !ok {
				a.mem.grow(int64(len(s)) + mapEntryBytes)
				set[string(s)] = struct{}{}
				d.counts[g]++
			}
		}
		return nil
	}
	v, err := arg.num(b, sel)
	if err != nil {
		return err
	}
	for i, g := range gids {
		if v.null != nil && v.null[i] {
			continue
		}
		if (i == 0 || g != gids[i-1] || v.v[i] != v.v[i-1] || v.null != nil && v.null[i-1]) && d.nums.add(g, v.v[i]) {
			d.counts[g]++
		}
	}
	return nil
}

// mergeDistinct adds o's pairs to a's, o's group g being a's remap[g].
func (a *accum) mergeDistinct(o *accum, remap []int32) {
	d, od := &a.distinct, &o.distinct
	for og, set := range od.strs {
		if set == nil {
			continue
		}
		g := remap[og]
		if d.strs[g] == nil {
			a.mem.grow(mapBytes)
			d.strs[g] = map[string]struct{}{}
		}
		for k := range set {
			if _, ok := d.strs[g][k]; !ok {
				a.mem.grow(mapEntryBytes) // the string is o's
				d.strs[g][k] = struct{}{}
				d.counts[g]++
			}
		}
	}
	d.nums.reserve(d.nums.n + od.nums.n)
	for _, sl := range od.nums.slots {
		if sl.g == 0 {
			continue
		}
		if g := remap[sl.g-1]; d.nums.add(g, sl.v) {
			d.counts[g]++
		}
	}
}

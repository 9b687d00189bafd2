package vector

import "unsafe"

// intTable maps int64 keys to group numbers by open addressing with linear
// probing over one flat slice: a lookup hashes the key with a multiply and
// reads one or two adjacent slots. A Go map of a million int64 keys spent
// most of TPC-H Q18's inner GROUP BY in its probing and growth, and kept
// about three times the memory.
type intTable struct {
	slots []intSlot // a power of two of them
	shift uint      // 64 - log2(len(slots)): a hash's top bits index a slot
	n     int       // keys held
	limit int       // the keys held before the table doubles: 3/4 of the slots
	mem   *account  // asked before the slots grow (memory.go)
}

// intSlot is a key and its group plus one; 0 marks an empty slot.
type intSlot struct {
	key int64
	g   int32
}

const minIntSlots = 256

// intSlotBytes is the size of an intSlot.
const intSlotBytes = int64(unsafe.Sizeof(intSlot{}))

// intHash spreads k's bits over the top ones: keys differing in any bits
// (consecutive keys, multiples of a power of two) land apart.
func intHash(k int64) uint64 {
	h := uint64(k)
	h ^= h >> 33
	return h * 0x9e3779b97f4a7c15
}

// home is the slot where a lookup of k starts, for a table of 1<<(64-shift)
// slots. Eight consecutive keys share an aligned block of eight slots, the
// blocks spread by the hash: keys read in order (files sorted by the key,
// as TPC-H's lineitem is by l_orderkey) touch each block's cache lines
// many times in a row instead of a random line per row, and any other
// keys spread as the hash spreads them.
func home(k int64, shift uint) int {
	return int(intHash(k>>3)>>shift)&^7 | int(k&7)
}

// getOrAdd is k's group, or next after adding k with it (added true).
func (t *intTable) getOrAdd(k int64, next int32) (g int32, added bool) {
	if t.n >= t.limit {
		t.resize(max(2*len(t.slots), minIntSlots))
	}
	mask := len(t.slots) - 1
	for i := home(k, t.shift); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.g == 0 {
			s.key, s.g = k, next+1
			t.n++
			return next, true
		}
		if s.key == k {
			return s.g - 1, false
		}
	}
}

// reserve makes room for n keys without growing again.
func (t *intTable) reserve(n int) {
	size := max(len(t.slots), minIntSlots)
	for n >= size/4*3 {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

func (t *intTable) resize(size int) {
	t.mem.grow(int64(size) * intSlotBytes) // the old slots are live until copied
	old := t.slots
	defer t.mem.shrink(int64(len(old)) * intSlotBytes)
	t.slots = make([]intSlot, size)
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	t.limit = size / 4 * 3
	mask := size - 1
	for _, s := range old {
		if s.g == 0 {
			continue
		}
		i := home(s.key, t.shift)
		for t.slots[i].g != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

package vector

import "unsafe"

// A run asks before its state grows: every table doubling, every doubling
// of the per-group slices, the merge's and the result's arrays are
// reserved with the caller's Reserve before they are allocated, and given
// back once dropped. A statement budget that watches the live heap from
// outside sees a large allocation only at the next collection; 4 million
// groups allocated between two looks took a server past its limit.

// Reserve is asked for n more bytes of a run's state before they are
// allocated (n < 0 gives bytes back, and its error is ignored); an error
// stops the run with it. It is called from several goroutines at once.
type Reserve func(n int64) error

// reserveChunk is how much a worker reserves at once for the small
// growths it accounts one by one (a string group's key, a string of a
// COUNT(DISTINCT)), so that the caller is asked once per chunk.
const reserveChunk = 1 << 20

// account is one worker's account with a run's Reserve; nil or a nil
// reserve never refuses.
type account struct {
	reserve Reserve
	credit  int64 // reserved and not yet used
	held    int64 // reserved and used
}

// refusal unwinds a worker refused memory, with the Reserve's error, to
// the recover of catchRefusal: the growth sites are deep in loops over
// rows that have no error to return, and the state a refused run leaves
// is dropped.
type refusal struct{ err error }

// grow reserves n bytes about to be allocated, or panics with a refusal.
func (m *account) grow(n int64) {
	if m == nil || m.reserve == nil || n <= 0 {
		return
	}
	m.held += n
	if n <= m.credit {
		m.credit -= n
		return
	}
	ask := n
	if n < reserveChunk {
		ask = reserveChunk
	}
	if err := m.reserve(ask); err != nil {
		m.held -= n
		panic(refusal{err})
	}
	m.credit += ask - n
}

// shrink gives back n bytes dropped.
func (m *account) shrink(n int64) {
	if m == nil || m.reserve == nil || n <= 0 {
		return
	}
	m.held -= n
	_ = m.reserve(-n)
}

// catchRefusal turns a refusal's panic into *err; any other panic goes on.
func catchRefusal(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if ref, ok := r.(refusal); ok {
		*err = ref.err
		return
	}
	panic(r)
}

// Go does not say what its maps hold, so the string paths reserve
// estimates: mapBytes for a small map of strings, mapEntryBytes for one
// more key in one (a string header, its share of the slots at the map's
// load, and the table's growth), the key's bytes counted apart.
const (
	mapBytes      = 200
	mapEntryBytes = 48
)

// valueBytes is the size of a Value.
const valueBytes = int64(unsafe.Sizeof(Value{}))

// release gives back everything the worker's state holds, once dropped.
func (m *account) release() {
	if m == nil || m.reserve == nil {
		return
	}
	_ = m.reserve(-(m.held + m.credit))
	m.held, m.credit = 0, 0
}

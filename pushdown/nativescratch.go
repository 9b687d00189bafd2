package pushdown

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// flbaScratch is the decoding space of a flbaPages. A scan opens one
// flbaPages per column and row group, and buffers allocated for each
// (zeroed by the runtime, then collected) were a tenth of TPC-H Q1's CPU.
// They are recycled instead; their capacities settle at the largest page.
type flbaScratch struct {
	dict, vals []int64
	defs       []int16
	idx        []uint32
}

var flbaScratchPool = sync.Pool{New: func() any { return &flbaScratch{} }}

func newFlbaPages(pages file.PageReader, width int, maxDef int16) *flbaPages {
	s := flbaScratchPool.Get().(*flbaScratch)
	// Empty slices: no dictionary, no page read yet.
	return &flbaPages{pages: pages, width: width, maxDef: maxDef,
		dict: s.dict[:0], vals: s.vals[:0], defs: s.defs[:0], idx: s.idx[:0]}
}

// close closes the page reader and recycles the scratch space.
func (f *flbaPages) close() {
	f.pages.Close()
	flbaScratchPool.Put(&flbaScratch{dict: f.dict[:0], vals: f.vals[:0], defs: f.defs[:0], idx: f.idx[:0]})
	f.dict, f.vals, f.defs, f.idx = nil, nil, nil, nil
}

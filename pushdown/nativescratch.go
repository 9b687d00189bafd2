package pushdown

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// flbaScratch is the decoding space of a flbaPages. A scan opens one
// flbaPages per column and row group, and its pages differ in size:
// buffers allocated for each (zeroed by the runtime, then collected) were a
// tenth of TPC-H Q1's CPU. They are recycled instead, with room to spare so
// that a slightly larger page does not reallocate.
type flbaScratch struct {
	dict []int64
	vals []int64  // the current page's rows (0 where NULL)
	defs []int16  // their definition levels; nil when maxDef is 0
	idx  []uint32 // unpacked levels or dictionary indices
}

var flbaScratchPool = sync.Pool{New: func() any { return &flbaScratch{} }}

func newFlbaPages(pages file.PageReader, width int, maxDef int16) *flbaPages {
	return &flbaPages{pages: pages, width: width, maxDef: maxDef, flbaScratch: flbaScratchPool.Get().(*flbaScratch)}
}

// close closes the page reader and recycles the scratch space.
func (f *flbaPages) close() {
	f.pages.Close()
	if s := f.flbaScratch; s != nil {
		f.flbaScratch = nil
		s.vals, s.defs, s.dict = s.vals[:0], s.defs[:0], s.dict[:0]
		flbaScratchPool.Put(s)
	}
}

// roomy is s with length n, reallocated with a quarter to spare when too
// small.
func roomy[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// nativeReadProps reads pages into buffers of the pool: arrow-go's default
// allocator gives every column chunk's page reader new zeroed buffers.
func nativeReadProps() *parquet.ReaderProperties {
	return parquet.NewReaderProperties(pool)
}

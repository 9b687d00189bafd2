package vector

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Selector finds the rows of batches where a predicate is TRUE, for a
// caller that hands only those rows on (a row-level DELETE or UPDATE
// finding the rows it changes). One Selector serves one goroutine.
type Selector struct {
	cols   columns
	b      batch
	filter func(b *batch, sel []int32) ([]int32, error)
	all    []int32
}

// NewSelector compiles pred, which Check must accept as a predicate.
func NewSelector(pred Expr) (*Selector, error) {
	if err := Check(pred, true); err != nil {
		return nil, err
	}
	s := &Selector{}
	c := &compiler{cols: &s.cols}
	f, err := c.filter(pred)
	if err != nil {
		return nil, err
	}
	s.filter = f
	return s, nil
}

// Columns are the names of the batch columns the predicate reads.
func (s *Selector) Columns() []string { return append([]string(nil), s.cols.names...) }

// Select returns the indices of the rows of rec where the predicate is
// TRUE, ascending. ErrInexact says
// a value left the exact range: the caller must decide those rows another
// way.
func (s *Selector) Select(rec arrow.RecordBatch) ([]int32, error) {
	if err := s.cols.bind(&s.b, rec); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	if len(s.all) < n {
		s.all = make([]int32, n)
		for i := range s.all {
			s.all[i] = int32(i)
		}
	}
	sel := s.all[:n]
	if n == 0 {
		return sel, nil
	}
	// The filter returns a buffer it reuses for the next batch; the copy
	// is the caller's.
	out, err := s.filter(&s.b, sel)
	if err != nil {
		return nil, err
	}
	return append([]int32(nil), out...), nil
}

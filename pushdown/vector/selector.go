package vector

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Selector evaluates a predicate on whole batches and gives the rows where
// it is TRUE, for a caller that then materialises only those rows (late
// materialisation: the columns the predicate does not read are never
// touched for rejected rows). One Selector serves one goroutine.
type Selector struct {
	cols   columns
	b      batch
	filter func(b *batch, sel []int32) ([]int32, error)
	all    []int32
}

// NewSelector compiles pred, which must be a predicate (Check(pred, true)).
func NewSelector(pred Expr) (*Selector, error) {
	if err := Check(pred, true); err != nil {
		return nil, err
	}
	s := &Selector{}
	c := &compiler{cols: &s.cols}
	f, err := c.filter(pred)
	if err != nil {
		return nil, fmt.Errorf("vector: compiling filter: %w", err)
	}
	s.filter = f
	return s, nil
}

// Columns is the names of the batch columns the predicate reads.
func (s *Selector) Columns() []string { return append([]string(nil), s.cols.names...) }

// Select returns the indexes of rec's rows where the predicate is TRUE, in
// increasing order; callers may keep it. ErrInexact says
// a value of this batch left the exact range; the caller must evaluate the
// batch another way.
func (s *Selector) Select(rec arrow.RecordBatch) ([]int32, error) {
	if err := s.cols.bind(&s.b, rec); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	if cap(s.all) < n {
		s.all = make([]int32, n)
		for i := range s.all {
			s.all[i] = int32(i)
		}
	}
	// The filter returns one of its own buffers, which the next batch
	// overwrites: copy, so that a caller may keep the selection.
	return s.selectIn(s.all[:n])
}

// SelectAmong is Select over the rows among (increasing indexes of rec's
// rows) alone: those of them where the predicate is TRUE.
func (s *Selector) SelectAmong(rec arrow.RecordBatch, among []int32) ([]int32, error) {
	if err := s.cols.bind(&s.b, rec); err != nil {
		return nil, err
	}
	return s.selectIn(among)
}

func (s *Selector) selectIn(sel []int32) ([]int32, error) {
	out, err := s.filter(&s.b, sel)
	if err != nil {
		return nil, err
	}
	return append([]int32(nil), out...), nil
}

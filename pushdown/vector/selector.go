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
func (s *Selector) Columns() []string { return s.cols.names }

// Select returns the indexes of rec's rows where the predicate is TRUE, in
// increasing order. The slice is reused by the next call. ErrInexact says
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
	return s.filter(&s.b, s.all[:n])
}

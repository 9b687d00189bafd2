package vecexec

import (
	"errors"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/dolthub/go-mysql-server/sql/expression"

	"github.com/icesql/icesql/pushdown/vector"
)

// RowSelection is the translated part of a row-level target's WHERE.
type RowSelection struct {
	Pred vector.Expr
	Cols []string // the Iceberg columns it reads
}

// mod translates % by a nonzero integer constant. Only in a row-level
// WHERE: go-mysql-server computes % in decimals, so as a SELECT's value or
// aggregate argument its type would differ from the vector's integer.
func (tr *VecTranslator) mod(e *expression.Mod) (vector.Expr, error) {
	l, err := tr.value(e.LeftChild)
	if err != nil {
		return nil, err
	}
	lit, ok := e.RightChild.(*expression.Literal)
	if !ok {
		return nil, decline("%% by %s", e.RightChild)
	}
	r, err := tr.literal(lit)
	if err != nil {
		return nil, err
	}
	m := vector.Mod{L: l, R: r}
	if err := vector.Check(m, false); err != nil {
		return nil, decline("%s: %v", e, err)
	}
	return m, nil
}

// ReadWith adds the columns the selection reads to read.
func (s *RowSelection) ReadWith(read []string) []string {
	out := append([]string(nil), read...)
	for _, c := range s.Cols {
		found := false
		for _, r := range out {
			if r == c {
				found = true
				break
			}
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}

// RowPicker gives the rows of each batch an identity scan turns into rows.
type RowPicker struct {
	sel  *vector.Selector
	pick []int32 // the picked rows of the current batch; nil: all
}

func NewRowPicker(s *RowSelection) (*RowPicker, error) {
	if s == nil {
		return nil, nil
	}
	sel, err := vector.NewSelector(s.Pred)
	if err != nil {
		return nil, err
	}
	return &RowPicker{sel: sel}, nil
}

// Choose evaluates the selection on a new batch.
func (p *RowPicker) Choose(rec arrow.RecordBatch) error {
	if p == nil {
		return nil
	}
	pick, err := p.sel.Select(rec)
	switch {
	case errors.Is(err, vector.ErrInexact):
		p.pick = nil // the Filter above decides every row of this batch
		return nil
	case err != nil:
		return err
	}
	if pick == nil {
		pick = []int32{}
	}
	p.pick = pick
	PickedBatches.Add(1)
	return nil
}

// PickedBatches counts the batches whose rows the vector evaluator picked,
// for the tests to see that the fast path ran.
var PickedBatches atomic.Int64

// Rows is how many rows of a batch of n rows are picked.
func (p *RowPicker) Rows(n int) int {
	if p == nil || p.pick == nil {
		return n
	}
	return len(p.pick)
}

// Index is the batch row of the i-th picked row.
func (p *RowPicker) Index(i int) int {
	if p == nil || p.pick == nil {
		return i
	}
	return int(p.pick[i])
}

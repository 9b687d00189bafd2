package vector

import "github.com/apache/arrow-go/v18/arrow"

// Partial is one goroutine's share of a grouped aggregation whose batches
// the caller makes itself (a join's joined rows, engine/vecjoinagg.go)
// rather than reads from a Source. Partials of one plan merge into one.
type Partial struct{ w *worker }

// NewPartial compiles p for one goroutine.
func NewPartial(p *Plan) (*Partial, error) { return NewPartialWithin(p, nil) }

// NewPartialWithin is NewPartial asking reserve before the state grows, as
// RunWithin does; Partials of one run share one reserve.
func NewPartialWithin(p *Plan, reserve Reserve) (*Partial, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	w, err := newWorker(p, &account{reserve: reserve})
	if err != nil {
		return nil, err
	}
	return &Partial{w: w}, nil
}

// Add aggregates rec's rows where the plan's filter is TRUE.
func (a *Partial) Add(rec arrow.RecordBatch) error { return a.w.addBatch(rec) }

// Merge adds other's groups into a's; other is not used afterwards. It
// fails only when the reserve refuses.
func (a *Partial) Merge(other *Partial) (err error) {
	defer catchRefusal(&err)
	a.w.merge(other.w)
	return nil
}

// Groups is the result, in no set order.
func (a *Partial) Groups() (_ []Group, err error) {
	defer catchRefusal(&err)
	return a.w.groups()
}

package vector

import "github.com/apache/arrow-go/v18/arrow"

// Partial is one goroutine's share of a grouped aggregation whose batches
// the caller makes itself (a join's joined rows, engine/vecjoinagg.go)
// rather than reads from a Source. Partials of one plan merge into one.
type Partial struct{ w *worker }

// NewPartial compiles p for one goroutine.
func NewPartial(p *Plan) (*Partial, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	w, err := newWorker(p)
	if err != nil {
		return nil, err
	}
	return &Partial{w: w}, nil
}

// Add aggregates rec's rows where the plan's filter is TRUE.
func (a *Partial) Add(rec arrow.RecordBatch) error { return a.w.add(rec) }

// Merge adds other's groups into a's; other is not used afterwards.
func (a *Partial) Merge(other *Partial) { a.w.merge(other.w) }

// Groups is the result, in no set order.
func (a *Partial) Groups() ([]Group, error) { return a.w.groups() }

package pushdown

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/metrics"
	"github.com/apache/iceberg-go/table"
)

// Plan is a table's file-scan tasks at one snapshot, planned once per row
// filter however often the table is scanned: a nested-loop join scans its
// inner table once per outer row, and planning reads the manifest list and
// manifests. One statement may scan a table under several filters (a
// self-join, a subquery), hence one entry per filter.
type Plan struct {
	// Caches keep plans between statements; nil keeps none.
	Caches *Caches
	// Manifests, when set, plans the scans it can from decoded manifests
	// kept across statements (keptplan.go).
	Manifests ManifestSource

	mu       sync.Mutex
	byFilter map[string]*Planned
}

// For returns the planning of the scans with the given row filter (nil for
// none). The scans given to its Tasks must carry that filter and its
// Reporter.
func (p *Plan) For(filter iceberg.BooleanExpression) *Planned {
	key := FilterString(filter)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byFilter == nil {
		p.byFilter = map[string]*Planned{}
	}
	pl, ok := p.byFilter[key]
	if !ok {
		pl = &Planned{Filter: filter, plans: p.Caches.planCache(), source: p.Manifests}
		p.byFilter[key] = pl
	}
	return pl
}

// Each calls fn with the planning of each row filter scanned so far.
func (p *Plan) Each(fn func(*Planned)) {
	p.mu.Lock()
	all := make([]*Planned, 0, len(p.byFilter))
	for _, pl := range p.byFilter {
		all = append(all, pl)
	}
	p.mu.Unlock()
	for _, pl := range all {
		fn(pl)
	}
}

// FilterString prints a row filter, "true" for none.
func FilterString(filter iceberg.BooleanExpression) string {
	if filter == nil {
		return "true"
	}
	return filter.String()
}

// Planned is one filter's planned tasks and what planning and reading them
// cost, for EXPLAIN.
type Planned struct {
	Filter iceberg.BooleanExpression
	source ManifestSource

	plans *planCache // nil: none kept

	once   sync.Once
	tasks  []table.FileScanTask
	err    error
	report atomic.Pointer[metrics.ScanReport]

	logOnce sync.Once
	log     *readLog

	native NativeStats // what native decoding read (native.go)

	rows atomic.Int64 // rows its reads handed up (Rows)

	planned atomic.Bool // Tasks ran
}

var _ metrics.Reporter = (*Planned)(nil)

// Tasks plans scan on first use and returns the same tasks afterwards.
func (p *Planned) Tasks(ctx context.Context, scan *table.Scan) ([]table.FileScanTask, error) {
	p.once.Do(func() {
		defer p.planned.Store(true)
		key, keep := keyOf(scan, FilterString(p.Filter))
		if keep {
			if c, ok := p.plans.get(key); ok { // plancache.go
				p.tasks = c.tasks
				p.report.Store(c.report)
				return
			}
		}
		tasks, report, ok, err := p.keptTasks(ctx, scan)
		if ok {
			p.report.Store(report)
		} else if err == nil {
			tasks, err = scan.PlanFiles(ctx)
		}
		p.tasks, p.err = tasks, err
		if p.err != nil {
			p.err = fmt.Errorf("plan scan with filter %s: %w", FilterString(p.Filter), p.err)
			return
		}
		if keep {
			p.plans.put(&cachedPlan{key: key, tasks: p.tasks, report: p.report.Load()})
		}
	})
	return p.tasks, p.err
}

// Report implements metrics.Reporter: iceberg-go reports what planning
// scanned and skipped.
func (p *Planned) Report(_ context.Context, r metrics.MetricsReport) {
	if sr, ok := r.(metrics.ScanReport); ok {
		p.report.Store(&sr)
	}
}

// Close implements metrics.Reporter.
func (p *Planned) Close() error { return nil }

// Pruning is what planning a scan kept and skipped.
type Pruning struct {
	ManifestsTotal, ManifestsScanned, ManifestsSkipped int64
	FilesTotal, FilesPlanned                           int64
	BytesPlanned                                       int64
}

// Pruning summarises the planning, given the number of data files the
// snapshot holds (from its summary). It is valid after Tasks.
func (p *Planned) Pruning(totalFiles int64) Pruning {
	var out Pruning
	if r := p.report.Load(); r != nil {
		m := r.Metrics
		out.ManifestsTotal = counter(m.TotalDataManifests) + counter(m.TotalDeleteManifests)
		out.ManifestsScanned = counter(m.ScannedDataManifests) + counter(m.ScannedDeleteManifests)
		out.ManifestsSkipped = counter(m.SkippedDataManifests) + counter(m.SkippedDeleteManifests)
	}
	files := map[string]bool{}
	for _, t := range p.tasks {
		if !files[t.File.FilePath()] {
			files[t.File.FilePath()] = true
			out.BytesPlanned += t.File.FileSizeBytes()
		}
	}
	out.FilesPlanned = int64(len(files))
	out.FilesTotal = max(totalFiles, out.FilesPlanned)
	return out
}

func counter(c *metrics.CounterResult) int64 {
	if c == nil {
		return 0
	}
	return c.Value
}

// Rows counts the rows that reads of p's tasks hand up, for Read.Rows:
// after delete files and the read filter are applied.
func (p *Planned) Rows() *atomic.Int64 { return &p.rows }

// Tally is what one scan's planning kept and skipped and what its reads
// cost, for per-statement metrics.
type Tally struct {
	FilesPlanned, FilesPruned, FilesRead int64
	BytesPlanned, BytesRead              int64
	RowsRead                             int64 // after deletes and the read filter
}

// Add adds o to t.
func (t *Tally) Add(o Tally) {
	t.FilesPlanned += o.FilesPlanned
	t.FilesPruned += o.FilesPruned
	t.FilesRead += o.FilesRead
	t.BytesPlanned += o.BytesPlanned
	t.BytesRead += o.BytesRead
	t.RowsRead += o.RowsRead
}

// Tally sums p given the number of data files the snapshot holds. A scan
// never planned counts nothing. Unlike Reads it opens no file.
func (p *Planned) Tally(totalFiles int64) Tally {
	if !p.planned.Load() {
		return Tally{}
	}
	pr := p.Pruning(totalFiles)
	t := Tally{FilesPlanned: pr.FilesPlanned, FilesPruned: pr.FilesTotal - pr.FilesPlanned, BytesPlanned: pr.BytesPlanned,
		RowsRead: p.rows.Load()}
	if p.log != nil {
		p.log.mu.Lock()
		for _, fl := range p.log.files {
			t.FilesRead++
			t.BytesRead += fl.bytes
		}
		p.log.mu.Unlock()
	}
	return t
}

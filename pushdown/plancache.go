package pushdown

import (
	"container/list"
	"sync"

	"github.com/apache/iceberg-go/metrics"
	"github.com/apache/iceberg-go/table"
)

// Planning a scan reads the snapshot's manifest list and every manifest it
// keeps, and iceberg-go parses each manifest's Avro (schema included) anew
// on every plan: a statement re-planned what the one before had planned,
// and in the sqllogictest corpus (select5: hundreds of joins over the same
// small tables) that parsing was a quarter of the CPU.
//
// A snapshot's planned tasks for one row filter never change: the manifest
// list a snapshot names, and the manifests and delete files it lists, are
// immutable files under names no other snapshot uses (a UUID in each). So
// plans are kept by the engine (Caches), keyed by the manifest list (whose path names
// the table's location and a UUID), the schema the filter binds to and the
// filter, and any statement of any session planning the same scan
// takes them. A failed plan is not kept, and a commit that failed wrote a
// manifest list no committed snapshot names, so nothing can ask for it.
//
// The cache holds at most planCacheBytes of plans by their estimated size
// (plancachesize.go: a task's data file with its column statistics is
// 2.7 KB on a 3-column table, 17.6 KB on a 50-column one), least recently
// used plans leaving first; a plan larger than a quarter of that is not
// kept. A bound on tasks alone let the cache grow to half a GB of narrow
// tables' tasks, or 3.5 GB of wide ones'. 64 MiB keeps ~20,000 narrow or
// ~3,300 wide tasks: far more than repeated statements over the same
// tables plan, and small beside the few hundred MB a scan's batches take
// (memlimit.go).
const planCacheBytes = 64 << 20

// planKey names one plan: the scan's snapshot (by its manifest list) and
// schema, and the row filter.
type planKey struct {
	manifestList string
	schemaID     int
	filter       string
}

type cachedPlan struct {
	key    planKey
	tasks  []table.FileScanTask
	report *metrics.ScanReport
	bytes  int64 // estimated heap held, set by put
}

type planCache struct {
	mu     sync.Mutex
	limit  int64 // bytes
	size   int64 // estimated bytes held
	order  *list.List
	byKey  map[planKey]*list.Element
	hits   int64
	misses int64
}

func newPlanCache(limit int64) *planCache {
	return &planCache{limit: limit, order: list.New(), byKey: map[planKey]*list.Element{}}
}

// keyOf is the cache key of scan planned with filter; ok is false when the
// scan has no snapshot to plan (nothing worth keeping).
func keyOf(scan *table.Scan, filter string) (planKey, bool) {
	snap := scan.Snapshot()
	if snap == nil || snap.ManifestList == "" {
		return planKey{}, false
	}
	schema, err := scan.Projection()
	if err != nil {
		return planKey{}, false
	}
	return planKey{
		manifestList: snap.ManifestList,
		schemaID:     schema.ID,
		filter:       filter,
	}, true
}

// get returns the kept plan for key. The tasks are shared: callers copy a
// task before changing it, as every caller does (tasks are values).
func (c *planCache) get(key planKey) (*cachedPlan, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		c.misses++
		return nil, false
	}
	c.hits++
	c.order.MoveToFront(el)
	return el.Value.(*cachedPlan), true
}

func (c *planCache) put(p *cachedPlan) {
	if c == nil {
		return
	}
	p.bytes = estimatePlanBytes(p)
	if p.bytes > c.limit/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[p.key]; ok {
		return
	}
	c.byKey[p.key] = c.order.PushFront(p)
	c.size += p.bytes
	for c.size > c.limit {
		last := c.order.Back()
		old := last.Value.(*cachedPlan)
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.size -= old.bytes
	}
}

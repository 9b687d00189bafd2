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
// plans are kept process-wide, keyed by the manifest list (whose path names
// the table's location and a UUID), the schema the filter binds to and the
// filter, and any statement of any session planning the same scan
// takes them. A failed plan is not kept, and a commit that failed wrote a
// manifest list no committed snapshot names, so nothing can ask for it.
//
// The cache holds at most planCacheTasks tasks (each a data file's entry
// with its column statistics, a few hundred bytes to a few KB), least
// recently used plans leaving first; a plan larger than a tenth of that is
// not kept.
const planCacheTasks = 200_000

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
}

type planCache struct {
	mu     sync.Mutex
	limit  int
	size   int // tasks held
	order  *list.List
	byKey  map[planKey]*list.Element
	hits   int64
	misses int64
}

var plans = newPlanCache(planCacheTasks)

func newPlanCache(limit int) *planCache {
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
	n := max(len(p.tasks), 1)
	if n > c.limit/10 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[p.key]; ok {
		return
	}
	c.byKey[p.key] = c.order.PushFront(p)
	c.size += n
	for c.size > c.limit {
		last := c.order.Back()
		old := last.Value.(*cachedPlan)
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.size -= max(len(old.tasks), 1)
	}
}

// PlanCacheStats reports the process-wide plan cache's hits and misses, for
// tests and tracing.
func PlanCacheStats() (hits, misses int64) {
	plans.mu.Lock()
	defer plans.mu.Unlock()
	return plans.hits, plans.misses
}

package pushdown

import (
	"fmt"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// testPlan is a plan of files tasks over data files with statistics on cols
// columns, under key name.
func testPlan(t *testing.T, name string, files, cols int) *cachedPlan {
	t.Helper()
	tasks := make([]table.FileScanTask, files)
	for i := range tasks {
		counts := map[int]int64{}
		for c := range cols {
			counts[c+1] = 100
		}
		b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData,
			fmt.Sprintf("file:///w/%s/data/%05d.parquet", name, i), iceberg.ParquetFile, nil, nil, nil, 100, 4096)
		if err != nil {
			t.Fatal(err)
		}
		tasks[i] = table.FileScanTask{File: b.ValueCounts(counts).NullValueCounts(counts).Build(), Length: 4096}
	}
	return &cachedPlan{key: planKey{manifestList: "file:///w/" + name + "/snap.avro", filter: "true"}, tasks: tasks}
}

// held is the keys c holds, most recently used first, after checking that
// c's total is the sum of its plans' sizes.
func held(t *testing.T, c *planCache) []string {
	t.Helper()
	var keys []string
	var sum int64
	for el := c.order.Front(); el != nil; el = el.Next() {
		p := el.Value.(*cachedPlan)
		keys = append(keys, p.key.manifestList)
		sum += p.bytes
	}
	if sum != c.size || len(c.byKey) != len(keys) {
		t.Fatalf("cache counts %d bytes in %d keys, its plans %d bytes in %d", c.size, len(c.byKey), sum, len(keys))
	}
	return keys
}

func TestPlanCacheBoundedByBytes(t *testing.T) {
	one := estimatePlanBytes(testPlan(t, "p00", 10, 20))
	c := newPlanCache(5*one + one/2) // room for five plans
	var order []string
	for i := range 12 {
		p := testPlan(t, fmt.Sprintf("p%02d", i), 10, 20)
		c.put(p)
		if p.bytes != one {
			t.Fatalf("plan %d estimated at %d bytes, the first at %d", i, p.bytes, one)
		}
		if c.size > c.limit {
			t.Fatalf("after %d plans the cache holds %d bytes, over its bound %d", i+1, c.size, c.limit)
		}
		order = append([]string{p.key.manifestList}, order...)
	}
	got := held(t, c)
	if fmt.Sprint(got) != fmt.Sprint(order[:5]) {
		t.Errorf("cache holds %v, want the five latest %v", got, order[:5])
	}
}

func TestPlanCacheEvictsLeastRecentlyUsed(t *testing.T) {
	plans := make([]*cachedPlan, 5)
	for i := range plans {
		plans[i] = testPlan(t, fmt.Sprint("p", i), 5, 3)
	}
	one := estimatePlanBytes(plans[0])
	c := newPlanCache(4*one + one/2)
	for _, p := range plans[:4] {
		c.put(p)
	}
	// p0 is used, so p1 is the least recently used when p4 comes.
	got, ok := c.get(plans[0].key)
	if !ok {
		t.Fatal("p0 not kept")
	}
	if got != plans[0] || &got.tasks[0] != &plans[0].tasks[0] || got.tasks[4].File != plans[0].tasks[4].File {
		t.Error("a hit did not return the tasks put")
	}
	c.put(plans[4])
	want := []string{plans[4].key.manifestList, plans[0].key.manifestList, plans[3].key.manifestList, plans[2].key.manifestList}
	if keys := held(t, c); fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Errorf("cache holds %v, want %v", keys, want)
	}
	if _, ok := c.get(plans[1].key); ok {
		t.Error("p1, least recently used, still kept")
	}
}

func TestPlanCacheSkipsLargePlans(t *testing.T) {
	small := testPlan(t, "small", 1, 3)
	large := testPlan(t, "large", 40, 50)
	c := newPlanCache(4 * estimatePlanBytes(testPlan(t, "x", 10, 50)))
	c.put(small)
	c.put(large)
	if keys := held(t, c); fmt.Sprint(keys) != fmt.Sprint([]string{small.key.manifestList}) {
		t.Errorf("cache holds %v, want only the small plan: the large one is over a quarter of the bound", keys)
	}
}

package pushdown

import (
	"fmt"
	"testing"
)

// TestManifestCacheBoundedByBytes checks that the kept manifests stay
// within the cache's bound, the least recently used leaving first, and that
// one manifest too large for it is not kept at all.
func TestManifestCacheBoundedByBytes(t *testing.T) {
	c := NewManifestCache(1000)
	for i := range 10 {
		c.put(&keptManifest{key: fmt.Sprint(i), bytes: 200})
		if i == 2 {
			c.get("0") // 0 is now used more recently than 1 and 2
		}
		if c.size > c.limit {
			t.Fatalf("after %d manifests the cache holds %d bytes, over its bound %d", i+1, c.size, c.limit)
		}
	}
	for _, k := range []string{"0", "1", "2", "3", "4"} {
		if _, ok := c.byKey[k]; ok {
			t.Errorf("manifest %s is kept after five newer ones", k)
		}
	}
	c.put(&keptManifest{key: "big", bytes: 300}) // over a quarter of the cache
	if _, ok := c.byKey["big"]; ok {
		t.Error("a manifest larger than a quarter of the cache was kept")
	}
	var sum int64
	for el := c.order.Front(); el != nil; el = el.Next() {
		sum += el.Value.(*keptManifest).bytes
	}
	if sum != c.size || len(c.byKey) != c.order.Len() {
		t.Errorf("the cache counts %d bytes in %d keys; its list holds %d bytes in %d", c.size, len(c.byKey), sum, c.order.Len())
	}
}

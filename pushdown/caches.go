package pushdown

// Caches are what reading tables keeps between statements: scan plans
// (plancache.go), parsed Parquet footers (footers.go) and small data files
// decoded (filecache.go). An engine owns its Caches, so two engines in one
// process (a test, a program embedding two warehouses) neither share
// entries nor count each other's hits, and closing an engine lets its
// caches go. A nil *Caches keeps nothing.
type Caches struct {
	plans   *planCache
	footers *footerCache
	files   *fileCache // decoded small data files (filecache.go)
}

// NewCaches makes empty caches of the default bounds.
func NewCaches() *Caches {
	return &Caches{plans: newPlanCache(planCacheBytes), footers: newFooterCache(footerCacheFiles), files: newFileCache(decodedBytes)}
}

// CacheStats is what Caches hold and served.
type CacheStats struct {
	PlanHits, PlanMisses int64
	Plans                int // plans kept
	Footers              int // footers kept
	// Decoded files: reads served from memory and decoded, files kept and
	// the bytes they hold.
	DecodedHits, DecodedMisses int64
	DecodedFiles               int
	DecodedBytes               int64
}

// Stats reports the caches' contents and plan hits, for tests and tracing.
func (c *Caches) Stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	var s CacheStats
	c.plans.mu.Lock()
	s.PlanHits, s.PlanMisses, s.Plans = c.plans.hits, c.plans.misses, len(c.plans.byKey)
	c.plans.mu.Unlock()
	c.footers.mu.Lock()
	s.Footers = len(c.footers.metas)
	c.footers.mu.Unlock()
	c.files.mu.Lock()
	s.DecodedHits, s.DecodedMisses, s.DecodedFiles, s.DecodedBytes = c.files.hits, c.files.misses, len(c.files.byKey), c.files.size
	c.files.mu.Unlock()
	return s
}

func (c *Caches) planCache() *planCache {
	if c == nil {
		return nil
	}
	return c.plans
}

func (c *Caches) footerCache() *footerCache {
	if c == nil {
		return nil
	}
	return c.footers
}

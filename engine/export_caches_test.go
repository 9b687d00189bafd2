package engine

import "github.com/icesql/icesql/pushdown"

// CacheStats is what e's plan and footer caches hold and served.
func CacheStats(e *Engine) pushdown.CacheStats { return e.caches.Stats() }

package proxy

// SetLegacyPendingMax lowers the bound on the 2024-11-05 HTTP+SSE requests
// waiting for their answer (legacyPendingMax), for the tests of its
// eviction.
func SetLegacyPendingMax(p *Proxy, n int) { p.legacy.max = n }

package proxy

// SetLegacyPendingMax lowers the bound on the 2024-11-05 HTTP+SSE requests
// waiting for their answer (legacyPendingMax), for the tests of its
// eviction.
func SetLegacyPendingMax(p *Proxy, n int) { p.legacy.max = n }

// SetLegacyClassifying sets the hook called before an answer on a
// 2024-11-05 HTTP+SSE stream is judged, for the tests that it is judged
// outside the pairing's lock.
func SetLegacyClassifying(p *Proxy, f func()) { p.legacy.classifying = f }

//go:build !race

package proxy_test

// raceEnabled: the race detector is on (its frames are larger).
const raceEnabled = false

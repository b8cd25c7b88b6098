//go:build race

package recorder

// raceEnabled: the race detector is on, and sync.Pool then drops a share
// of what is put into it on purpose, so a test cannot count on a reuse.
const raceEnabled = true

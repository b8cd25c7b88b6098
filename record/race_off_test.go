//go:build !race

package record

// raceEnabled: see race_on_test.go.
const raceEnabled = false

//go:build !race

package recorder

// raceEnabled: see race_on_test.go.
const raceEnabled = false

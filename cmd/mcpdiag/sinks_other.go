//go:build !unix

package main

// handleSinkSignals has nothing to do where writes to a closed pipe do not
// raise a signal.
func handleSinkSignals() {}

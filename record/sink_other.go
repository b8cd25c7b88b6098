//go:build !unix

package record

// CatchSinkSignals has nothing to do where writes to a closed pipe do not
// raise a signal.
func CatchSinkSignals() {}

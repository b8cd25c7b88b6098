package classify

import "testing"

// GoldenCapture is a golden case as the external tests see it.
type GoldenCapture struct {
	Name string
	// Raw is the capture (status line, headers, body).
	Raw []byte
	// Exchange returns the request facts of the case.
	Exchange func() *Exchange
	// Classifier is the classifier the case asks for.
	Classifier *Classifier
}

// GoldenCaptures returns the golden cases that have a capture.
func GoldenCaptures(t *testing.T) []GoldenCapture {
	var out []GoldenCapture
	for _, gc := range loadGolden(t) {
		if gc.exchange["network"] != "" {
			continue
		}
		out = append(out, GoldenCapture{Name: gc.name, Raw: gc.response,
			Exchange: func() *Exchange { return exchangeFor(t, gc) }, Classifier: classifierFor(t, gc)})
	}
	return out
}

// GeneralPath returns a classifier that never takes the fast path, for the
// external tests that hold the two paths equal.
func GeneralPath() *Classifier { return &Classifier{noFastPath: true} }

package record

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeErrorsQuoteNoValue: the error Decode (and so the Reader, report's
// "skipped malformed line", ui's note, matrix --from-records) gives for a
// line whose field holds a value of the wrong form names the field's trouble,
// never the value: a record file from another producer, or a damaged one,
// may hold a credential there. Before, strconv's and time's errors quoted it
// ("strconv.ParseFloat: parsing \"\\\"Bearer …\\\"\"", "parsing time
// \"password=…\""), and report printed it on stderr (outsider19).
func TestDecodeErrorsQuoteNoValue(t *testing.T) {
	t.Parallel()
	const secret = "hunter2PassW0rdQ9"
	for _, line := range []string{
		`{"v":2,"kind":"exchange","id":"a","timings":{"totalMs":"Bearer ` + secret + `"}}`,
		`{"v":2,"kind":"exchange","id":"a","timings":{"headersMs":"password=` + secret + `"}}`,
		`{"v":2,"kind":"exchange","id":"a","time":"password=` + secret + `"}`,
		`{"v":2,"kind":"exchange","id":"a","time":"` + secret + `"}`,
		`{"v":2,"kind":"exchange","id":"a","sseArrivals":[["` + secret + `", 1]]}`,
		`{"v":2,"kind":"exchange","id":"a","sseArrivals":[[1, "` + secret + `"]]}`,
		`{"v":2,"kind":"exchange","id":"a","timings":{"totalMs":1e999` + secret + `}}`,
	} {
		_, err := Decode([]byte(line))
		if err == nil {
			t.Errorf("Decode(%s): no error", line)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:8]) {
			t.Errorf("Decode(%s): error %q quotes the value", line, err)
		}
		rd := NewReader(strings.NewReader(line + "\n"))
		_, rerr := rd.Next()
		var le *LineError
		if !errors.As(rerr, &le) || strings.Contains(rerr.Error(), secret[:8]) {
			t.Errorf("Reader on %s: %v, want a LineError without the value", line, rerr)
		}
	}
	// A number into an int field: encoding/json's type error names the
	// number (review19: "cannot unmarshal number 8675309.5").
	for _, line := range []string{
		`{"v":2,"kind":"exchange","id":"a","status":8675309.5}`,
		`{"v":2,"kind":"exchange","id":"a","status":867530986753098675309}`,
		`{"v":2,"kind":"exchange","id":"a","postCount":8675309.25}`,
	} {
		_, err := Decode([]byte(line))
		if err == nil || strings.Contains(err.Error(), "8675309") || !strings.Contains(err.Error(), "number") {
			t.Errorf("Decode(%s): %v, want an error that names a number but not its value", line, err)
		}
	}
	// What said where the trouble was is kept: the field and the types.
	_, err := Decode([]byte(`{"v":2,"kind":"exchange","status":"` + secret + `"}`))
	if err == nil || !strings.Contains(err.Error(), "Record.status") || strings.Contains(err.Error(), secret[:8]) {
		t.Errorf("a string status: %v, want the field named and no value", err)
	}
}

package matrix

import (
	"strings"
	"testing"
)

// TestOutputCap: what matrix keeps of a client's stdout or stderr stops at
// MaxOutput bytes, marked as cut; every write still succeeds in full, so
// that a chatty client is never blocked or failed by the cap.
func TestOutputCap(t *testing.T) {
	var c capped
	chunk := strings.Repeat("a", 1000)
	written := 0
	for range 100 {
		n, err := c.Write([]byte(chunk))
		if err != nil || n != len(chunk) {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(chunk))
		}
		written += n
	}
	got := c.String()
	kept, marker, ok := strings.Cut(got, "\n[output cut at 64 KiB]")
	if !ok || marker != "" || len(kept) != MaxOutput || kept != strings.Repeat("a", MaxOutput) {
		t.Errorf("kept %d bytes (cut marked: %v) of %d written; want the first %d, marked", len(kept), ok, written, MaxOutput)
	}
	var small capped
	small.Write([]byte("hello"))
	if small.String() != "hello" {
		t.Errorf("under the cap: %q", small.String())
	}
}

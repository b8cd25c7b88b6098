package serve_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/serve"
)

// get sends a GET and returns the status (the body read and dropped).
func get(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestEndpointCap: serve keeps serve.MaxEndpoints /s/ endpoints; the next
// new one gets 503 with a line that says how to drop them (an existing one
// is still served), and after POST /admin/reset?dropEndpoints=1 a new one
// is served again.
func TestEndpointCap(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	ep := func(i int) string { return fmt.Sprintf("%s/s/baseline/mcp?match.tool=never-%d", base, i) }
	for i := range serve.MaxEndpoints {
		if code := get(t, ep(i)); code == http.StatusServiceUnavailable {
			t.Fatalf("endpoint %d of %d: 503", i+1, serve.MaxEndpoints)
		}
	}
	resp, err := http.Get(ep(serve.MaxEndpoints))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "dropEndpoints=1") {
		t.Fatalf("endpoint %d: %d %q, want 503 naming the reset", serve.MaxEndpoints+1, resp.StatusCode, body)
	}
	if code := get(t, ep(0)); code == http.StatusServiceUnavailable {
		t.Errorf("an existing endpoint got 503 at the cap")
	}
	if code := get(t, base+"/mcp"); code == http.StatusServiceUnavailable {
		t.Errorf("the main endpoint got 503 at the cap")
	}
	r, err := http.Post(base+"/admin/reset?dropEndpoints=1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode/100 != 2 {
		t.Fatalf("reset: %d", r.StatusCode)
	}
	if code := get(t, ep(serve.MaxEndpoints)); code == http.StatusServiceUnavailable {
		t.Errorf("after dropEndpoints=1 a new endpoint still gets 503")
	}
}

// TestLogLimit: the in-memory log keeps the last LogLimit lines; GET
// /admin/log returns those, the newest last, and counts the dropped ones
// in Mcpdiag-Log-Dropped.
func TestLogLimit(t *testing.T) {
	const limit, requests = 5, 12
	_, base := start(t, serve.Options{Seed: 1, LogLimit: limit})
	for i := range requests {
		get(t, fmt.Sprintf("%s/mcp?n=%d", base, i))
	}
	resp, err := http.Get(base + "/admin/log")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if len(lines) != limit {
		t.Fatalf("%d log lines, want the last %d:\n%s", len(lines), limit, body)
	}
	for i, l := range lines {
		if want := fmt.Sprintf(`n=%d"`, requests-limit+i); !strings.Contains(l, want) {
			t.Errorf("line %d is not request %s: %.200s", i, want, l)
		}
	}
	if got := resp.Header.Get("Mcpdiag-Log-Dropped"); got != fmt.Sprint(requests-limit) {
		t.Errorf("Mcpdiag-Log-Dropped %q, want %d", got, requests-limit)
	}
}

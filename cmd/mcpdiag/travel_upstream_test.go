package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// travelUpstream is the real upstream on 127.0.0.1 of the tests that send
// secrets through the HTTP proxy (TestExemptTailsNeverRecorded,
// TestRedact20SecretsNeverRecorded): it keeps every request body and the
// value of one request header, so that a test can show each secret
// travelled (a test that sent none proves nothing), and answers a JSON-RPC
// request through answer with its id and params.name; anything else gets
// 400. It is closed when the test ends.
type travelUpstream struct {
	URL string // the server's base URL

	mu   sync.Mutex
	sent []byte
}

func newTravelUpstream(t *testing.T, header string, answer func(w http.ResponseWriter, id json.RawMessage, tool string)) *travelUpstream {
	t.Helper()
	u := &travelUpstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.sent = append(u.sent, b...)
		u.sent = append(u.sent, r.Header.Get(header)...)
		u.mu.Unlock()
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &req); err != nil || len(req.ID) == 0 {
			http.Error(w, "want a JSON-RPC request", http.StatusBadRequest)
			return
		}
		answer(w, req.ID, req.Params.Name)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

// travelled returns what the upstream received followed by got (what the
// client received).
func (u *travelUpstream) travelled(got []byte) []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append(append([]byte{}, u.sent...), got...)
}

// postMCP POSTs a JSON-RPC body to url as a 2025-11-25 client does, with
// the extra headers, and returns the response body.
func postMCP(t *testing.T, url, body string, headers map[string]string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

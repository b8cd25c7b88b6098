package proxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestCutBodyKeepsNoPartOfASecret: the proxy cuts a body it records at the
// record limit before the redactor sees it. A credential the cut ends
// inside (a database URL cut before its "@", a JWT cut in its payload)
// must leave no fragment in the record: for each of the secret's cut
// points, in the request and in the response, the record is searched for
// the secret's first bytes.
func TestCutBodyKeepsNoPartOfASecret(t *testing.T) {
	const limit = 2000
	secrets := []struct{ lead, secret, needle string }{
		// needle: what no record may hold (the start of the secret
		// part, longer than any mask's hex).
		{"see postgres://admin:", "Wq7pZ3xVb9LmKd2R@db.internal:5432/app", "Wq7pZ"},
		{"token ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib2IiLCJyb2xlIjoiYWRtaW4ifQ.c2lnbmF0dXJlc2lnbmF0dXJl", "eyJhbG"},
	}
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ID     int `json:"id"`
			Params struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		json.Unmarshal(b, &req)
		w.Header().Set("Content-Type", "application/json")
		text, _ := json.Marshal(req.Params.Arguments.Text)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%s}],"isError":true}}`, req.ID, text)
	}))
	base, _, sink, _ := startProxy(t, up, proxy.Options{Bodies: proxy.BodiesAll, BodyLimit: limit})
	hc := &http.Client{}
	id, want := 0, 0
	for _, s := range secrets {
		for k := 1; k < len(s.secret); k++ {
			id++
			// The text starts at a fixed offset in both bodies; pad puts
			// the secret's k-th byte at the cut in the response (and at
			// another point in the request).
			head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"`, id)
			pad := limit - len(head) - len(s.lead) - k
			text := strings.Repeat("a", pad) + s.lead + s.secret + " and more words after it"
			args, _ := json.Marshal(map[string]string{"text": text})
			if _, _, _, err := post(t, hc, base, callBody(id, "echo", string(args)), nil); err != nil {
				t.Fatal(err)
			}
			want++
		}
	}
	waitRecords(t, sink, want)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	leaks := 0
	for _, l := range sink.lines {
		for _, s := range secrets {
			if strings.Contains(string(l), s.needle) {
				leaks++
				if leaks <= 3 {
					t.Errorf("a record holds part of %q: ...%s", s.secret, tail(string(l), s.needle))
				}
			}
		}
	}
	if leaks > 0 {
		t.Errorf("%d records hold part of a secret", leaks)
	}
	// The cut is marked: every response body ends in the mark.
	marked := 0
	for _, l := range sink.lines {
		r, err := record.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		if r.ResponseBody != nil && r.ResponseBody.Truncated && strings.HasSuffix(r.ResponseBody.Text, record.Redacted) {
			marked++
		}
	}
	if marked != want {
		t.Errorf("%d of %d cut response bodies end in %s", marked, want, record.Redacted)
	}
}

// tail returns the part of s around needle.
func tail(s, needle string) string {
	i := strings.Index(s, needle)
	return s[max(0, i-40):min(len(s), i+60)]
}

// unmarked returns a recorded body's text without the mark of a token the
// cut left unfinished (record.Redacted at the end of a truncated body):
// the start of the body it was cut from.
func unmarked(b *record.Body) string {
	if b.Truncated {
		return strings.TrimSuffix(b.Text, record.Redacted)
	}
	return b.Text
}

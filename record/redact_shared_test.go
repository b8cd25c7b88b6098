package record

import (
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
)

// TestURLShortcutMatchesParse: URL's shortcut for text without "?", "#"
// or "@" gives what the url.Parse path gives, on URLs and on text that
// url.Parse refuses.
func TestURLShortcutMatchesParse(t *testing.T) {
	r := NewRedactorKey([]byte("url"))
	if err := r.AddSecret("sk-url-secret-0123"); err != nil {
		t.Fatal(err)
	}
	in := []string{
		"http://127.0.0.1:8080/mcp", "https://example.com/a/b.c/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
		"http://[::1]:80/x", "http://%zz/", "::not a url", "http://h/p%", "http://h/sk-url-secret-0123/x",
		"http://h/token=abc;key=def", "http://h/Bearer abc", "mailto:x", "/relative/path", "http://u:p@h/",
		"http://h/?code=1#state=2", "http://h/#frag", "http://h/?a=%7B%22token%22%3A%22x%22%7D",
	}
	rng := rand.New(rand.NewPCG(1, 13))
	for range 5000 {
		in = append(in, randomGateString(rng), "http://"+randomGateString(rng), "http://h/"+randomGateString(rng))
	}
	for _, s := range in {
		if got, want := r.URL(s), r.urlParsed(s); got != want {
			t.Fatalf("URL(%q) = %q, url.Parse's path gives %q", s, got, want)
		}
	}
}

// TestHeadersSharedMatchesHeaders: the encoder's headersShared gives the
// same headers as Headers, returns the map itself when nothing changed,
// and never changes the caller's map or slices.
func TestHeadersSharedMatchesHeaders(t *testing.T) {
	r := NewRedactorKey([]byte("headers"))
	values := []string{"application/json", "Bearer abcdefghijkl", "a=b; c=d", "sid-0123456789", "http://h/?token=x",
		"1024", "Thu, 03 Dec 2026 14:34:00 GMT", "token=abc", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", ""}
	names := []string{"Content-Type", "Authorization", "Cookie", "Mcp-Session-Id", "Location", "Content-Length",
		"Date", "X-Note", "X-Api-Key", "Accept", "Www-Authenticate"}
	rng := rand.New(rand.NewPCG(2, 13))
	for range 3000 {
		h := http.Header{}
		for range rng.IntN(6) {
			n := names[rng.IntN(len(names))]
			for range 1 + rng.IntN(2) {
				h[n] = append(h[n], values[rng.IntN(len(values))])
			}
		}
		if rng.IntN(10) == 0 {
			h = nil
		}
		orig := h.Clone()
		got, want := r.headersShared(h), r.Headers(h)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("headersShared(%v) = %v, Headers gives %v", h, got, want)
		}
		if !reflect.DeepEqual(h, orig) {
			t.Fatalf("headersShared changed its input: %v, was %v", h, orig)
		}
		same := reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(h).UnsafePointer()
		if changed := !reflect.DeepEqual(h, want); same == changed && h != nil {
			t.Fatalf("headersShared(%v): returned its input %v, a value changed %v", h, same, changed)
		}
		for name, vs := range got {
			if !reflect.DeepEqual(vs, h[name]) && len(vs) > 0 && len(h[name]) > 0 && &vs[0] == &h[name][0] {
				t.Fatalf("header %s changed but shares the input's slice", name)
			}
		}
	}
}

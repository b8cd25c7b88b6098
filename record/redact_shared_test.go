package record

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
	"time"
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

// TestEncodeHeadersAsSanitized: Encode, which redacts the headers as it
// writes them (appendHeaderFields) and reads their secrets from the same
// sorted fields, writes the line encoding/json writes for the record
// redacted whole by sanitize (headersShared, withHeaderSecrets), on random
// headers with credentials, sessions, URLs, cookies and values a header
// secret reappears in.
func TestEncodeHeadersAsSanitized(t *testing.T) {
	r := NewRedactorKey([]byte("headers"))
	values := []string{"application/json", "Bearer abcdefghijkl", "a=b; c=d-0123456789", "sid-0123456789", "http://h/?token=x",
		"1024", "Thu, 03 Dec 2026 14:34:00 GMT", "token=abc", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "", "quote\" and \\ \x01",
		"key-abcdefghij", "see abcdefghijkl", "bad\xffutf8"}
	names := []string{"Content-Type", "Authorization", "Cookie", "Mcp-Session-Id", "Location", "Content-Length",
		"Date", "X-Note", "X-Api-Key", "Accept", "Www-Authenticate", "x-lower", "Set-Cookie", "A\"quote"}
	e := Encoder{Redactor: r, Now: func() time.Time { return time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC) }}
	rng := rand.New(rand.NewPCG(3, 13))
	for range 3000 {
		var hs [2]http.Header
		for k := range hs {
			if rng.IntN(8) == 0 {
				continue // nil
			}
			h := http.Header{}
			for range rng.IntN(7) {
				n := names[rng.IntN(len(names))]
				switch rng.IntN(10) {
				case 0:
					h[n] = nil
				case 1:
					h[n] = []string{}
				default:
					for range 1 + rng.IntN(2) {
						h[n] = append(h[n], values[rng.IntN(len(values))])
					}
				}
			}
			hs[k] = h
		}
		rec := &Record{Kind: KindExchange, ID: "01TEST", Reason: values[rng.IntN(len(values))], Note: values[rng.IntN(len(values))],
			RequestHeaders: hs[0], ResponseHeaders: hs[1]}
		orig := [2]http.Header{hs[0].Clone(), hs[1].Clone()}
		line, err := e.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(orig[0], rec.RequestHeaders) || !reflect.DeepEqual(orig[1], rec.ResponseHeaders) {
			t.Fatalf("Encode changed the record's headers: %v %v, were %v %v", rec.RequestHeaders, rec.ResponseHeaders, orig[0], orig[1])
		}
		c := e.sanitize(r.withHeaderSecrets(hs[0], hs[1]), rec)
		c.V, c.Time, c.RetryOrigin, c.HTTPStatuses = SchemaVersion, e.Now(), OriginNone, []int{}
		want, err := encodeLine(&c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(line, want) {
			t.Fatalf("headers %v / %v:\nEncode   %s\nsanitize %s", hs[0], hs[1], line, want)
		}
	}
}

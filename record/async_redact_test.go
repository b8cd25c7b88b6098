package record

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestAsyncLineHasNoCredential: a credential in any field a caller
// controls is absent from the line Async writes, whichever way the encoder
// now takes (headers read once and redacted before the line is written,
// clean words looked up in a bucket set): a registered secret, and
// credentials known only by their shape (a JWT, "Bearer …", a credential
// query parameter, a credential header), each placed in the tool name, the
// method, a header value, the URL query, the id, the error message, the
// reason, a header name's value and the outcome.
func TestAsyncLineHasNoCredential(t *testing.T) {
	const (
		secret, jwt, bearer = canarySecret, canaryJWT, canaryBearer
		qval                = "qUeRy-CANARY-0123"
		hval                = "hEaDeR-CANARY-0123"
	)
	red := canaryRedactor(t)
	fields := map[string]func(r *Record, v string){
		"tool":         func(r *Record, v string) { r.Tool = v },
		"method":       func(r *Record, v string) { r.Method = v },
		"httpMethod":   func(r *Record, v string) { r.HTTPMethod = v },
		"header value": func(r *Record, v string) { r.RequestHeaders["X-Note"] = []string{v} },
		"response header value": func(r *Record, v string) {
			r.ResponseHeaders["Content-Type"] = []string{"application/json", v}
		},
		"url query":    func(r *Record, v string) { r.URL = "http://127.0.0.1:1/mcp?x=" + v },
		"id":           func(r *Record, v string) { r.JSONRPC.ID = wire.StringID(v) },
		"record id":    func(r *Record, v string) { r.ID = v },
		"errorMessage": func(r *Record, v string) { r.ErrorMessage = v },
		"reason":       func(r *Record, v string) { r.Reason = v },
		"outcome":      func(r *Record, v string) { r.Outcome = classify.Outcome(v) },
		"client":       func(r *Record, v string) { r.Client = v },
		"contentType":  func(r *Record, v string) { r.ContentType = v },
	}
	// Each credential as a field would carry it, and the bytes that must
	// not be in the line.
	creds := []struct{ value, secret string }{
		{secret, secret},
		{"token " + jwt, jwt},
		{"Bearer " + bearer, bearer},
		{"see ?access_token=" + qval + "&a=1", qval},
		{"X-Api-Key: " + hval, hval},
	}
	for name, set := range fields {
		for _, c := range creds {
			sink := &keepingSink{}
			a := NewAsync(sink, AsyncOptions{Encoder: Encoder{Redactor: red}, Linger: -1})
			rec := &Record{Kind: KindExchange, Method: "tools/call", HTTPMethod: "POST", Outcome: "TOOL_SUCCESS", Layer: "application",
				RequestHeaders:  http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + bearer}},
				ResponseHeaders: http.Header{"Content-Type": {"application/json"}}}
			set(rec, c.value)
			if err := a.Write(rec); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if len(sink.copies) != 1 {
				t.Fatalf("%s: %d lines", name, len(sink.copies))
			}
			if line := sink.copies[0]; bytes.Contains(line, []byte(c.secret)) {
				t.Errorf("%s holding %q: the line has the credential: %s", name, c.value, line)
			}
		}
	}
}

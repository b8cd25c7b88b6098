package record

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestIDNotUTF8Redacted: the id-not-utf8 warning gives an id's bytes in
// hex, so it must not give those of an id the redactor changes: a secret
// in a string id that is not UTF-8 would otherwise be in the record line,
// hex-encoded, next to the redacted id.
func TestIDNotUTF8Redacted(t *testing.T) {
	for _, c := range []struct {
		name, secret, id string
		add              bool // registered with AddSecret
	}{
		{"bearer", "q7Wk2Lx9Pz4Rt8Vb", "Bearer q7Wk2Lx9Pz4Rt8Vb", false},
		{"registered", "hunter2-swordfish", "id-hunter2-swordfish", true},
	} {
		for _, which := range []string{"request", "response"} {
			t.Run(c.name+"/"+which, func(t *testing.T) {
				idNotUTF8Redacted(t, c.secret, c.id, c.add, which)
			})
		}
	}
}

func idNotUTF8Redacted(t *testing.T, secret, idText string, add bool, which string) {
	red := NewRedactor()
	if add {
		if err := red.AddSecret(secret); err != nil {
			t.Fatal(err)
		}
	}
	e := Encoder{Redactor: red}
	if clean := red.Scrub(idText); strings.Contains(clean, secret) {
		t.Fatalf("the redactor leaves %q as it is; the test needs an id it scrubs", idText)
	}
	{
		rec := &Record{Kind: KindExchange, Method: "tools/call"}
		id := wire.IDFromRaw([]byte("\"" + idText + "\xff\""))
		if which == "request" {
			rec.JSONRPC.ID = id
		} else {
			rec.JSONRPC.ID, rec.JSONRPC.ResponseID = wire.StringID("1"), id
		}
		line, err := e.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, leak := range []string{secret, hex.EncodeToString([]byte(secret))} {
			if strings.Contains(string(line), leak) {
				t.Errorf("%s id: the record line holds the secret (%q): %s", which, leak[:12], line)
			}
		}
		if !strings.Contains(string(line), IDNotUTF8) {
			t.Errorf("%s id: no %s warning: %s", which, IDNotUTF8, line)
		}
	}
}

package conformance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/client"
)

func TestSteps(t *testing.T) {
	tools := []client.Tool{
		{Name: "add_numbers", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		{Name: "json_schema_echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"schema":{"type":"object"}},"required":["schema"]}`)},
	}
	sc, err := ParseContext(`{"name":"x","toolCalls":[{"name":"t1","arguments":{"region":"us","verbose":null}},{"name":"t2"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	render := func(steps []Step) string {
		var parts []string
		for _, s := range steps {
			parts = append(parts, s.Tool+" "+string(s.Args))
		}
		return strings.Join(parts, " | ")
	}
	for _, tt := range []struct {
		scenario string
		sc       Context
		want     string
	}{
		{"tools_call", Context{}, `add_numbers {"a":5,"b":3}`},
		{"json-schema-ref-no-deref", Context{}, ``},
		{"json-schema-2020-12-preservation", Context{}, `json_schema_echo {"schema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}`},
		{"http-custom-headers", sc, `t1 {"region":"us","verbose":null} | t2 `},
		{"anything-else", Context{}, `add_numbers {"a":1,"b":1} | json_schema_echo {"schema":{}}`},
	} {
		if got := render(Steps(tt.scenario, tt.sc, tools)); got != tt.want {
			t.Errorf("%s: steps %q, want %q", tt.scenario, got, tt.want)
		}
	}
}

func TestParseContext(t *testing.T) {
	if c, err := ParseContext(""); err != nil || c.Name != "" {
		t.Errorf("empty: %+v %v", c, err)
	}
	c, err := ParseContext(`{"name":"auth/x","client_id":"id-1","issuer":"http://127.0.0.1:9/"}`)
	if err != nil || c.ClientID != "id-1" || c.Issuer != "http://127.0.0.1:9/" {
		t.Errorf("credentials: %+v %v", c, err)
	}
	if _, err := ParseContext(`[not json`); err == nil || !strings.Contains(err.Error(), EnvContext) {
		t.Errorf("bad JSON: %v, want an error naming %s", err, EnvContext)
	}
	if _, err := (Context{PrivateKeyPEM: "not a key"}).AuthOptions(nil); err == nil || !strings.Contains(err.Error(), "private_key_pem") {
		t.Errorf("a bad key: %v", err)
	}
	o, err := Context{ClientSecret: "s3cret-value"}.AuthOptions(nil)
	if err != nil || o.ClientMetadataURL != ClientMetadataURL || o.ClientSecret != "s3cret-value" || o.Authorize != client.AuthorizeFetch {
		t.Errorf("auth options %+v %v", o, err)
	}
}

package probe

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// fillStrings sets every string reachable from v (struct fields, slices of
// one element, pointers) to secret, and returns how many it set.
func fillStrings(v reflect.Value, secret string) int {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(secret)
			return 1
		}
	case reflect.Struct:
		n := 0
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				n += fillStrings(v.Field(i), secret)
			}
		}
		return n
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 || v.Type().Elem() == reflect.TypeOf(&record.Record{}) || v.Type().Elem() == reflect.TypeOf(Probe{}) {
			return 0 // raw bytes; Records and Probes are written by no format
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return fillStrings(v.Index(0), secret)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		return fillStrings(v.Elem(), secret)
	}
	return 0
}

// TestReportRedactCoversEveryString: every string a format of the report
// writes, now and in fields added later, holding a credential (a JSON
// member as a server's answer quoted in evidence has it) is masked by
// Redact, and no format (text, --json, --junit) carries it.
func TestReportRedactCoversEveryString(t *testing.T) {
	const key = "XprobeRedact7f6e5d4c"
	secret := `{"password":"` + key + `"}`
	rep := &Report{}
	n := fillStrings(reflect.ValueOf(rep).Elem(), secret)
	if n < 15 {
		t.Fatalf("only %d strings filled", n)
	}
	rep.URL = "http://127.0.0.1/mcp?v=1&api_key=" + key
	rep.Command = []string{"server", "--api-key", key}
	rep.Redact(record.NewRedactor())
	var text, js, junit bytes.Buffer
	for name, err := range map[string]error{"text": rep.WriteText(&text), "json": rep.WriteJSON(&js), "junit": rep.WriteJUnit(&junit)} {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	all, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"report as JSON": all, "text": text.Bytes(), "--json": js.Bytes(), "--junit": junit.Bytes()} {
		if i := bytes.Index(b, []byte(key)); i >= 0 {
			t.Errorf("%s keeps the key: …%s…", name, b[max(0, i-80):i+len(key)])
		}
	}
	if !strings.Contains(junit.String(), "[redacted") {
		t.Errorf("the JUnit file holds no mask: the test proves nothing\n%s", junit.String())
	}
}

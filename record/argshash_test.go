package record

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

func TestArgsHashCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"key order", `{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{"whitespace", `{"a":1,"b":[1,2]}`, "{ \"a\" : 1 ,\n\t\"b\" : [ 1 , 2 ] }", true},
		{"nested key order", `{"x":{"q":[{"b":1,"a":2}],"p":null}}`, `{"x":{"p":null,"q":[{"a":2,"b":1}]}}`, true},
		{"string escapes", `{"s":"\u0061\/b"}`, `{"s":"a/b"}`, true},
		{"absent and null", ``, `null`, true},
		{"array order matters", `[1,2]`, `[2,1]`, false},
		{"numbers as written", `{"n":1}`, `{"n":1.0}`, false},
		{"exponent as written", `{"n":1e3}`, `{"n":1000}`, false},
		{"string vs number", `{"n":"1"}`, `{"n":1}`, false},
		{"different value", `{"a":1}`, `{"a":2}`, false},
		{"empty object vs null", `{}`, `null`, false},
		{"duplicate keys keep order", `{"a":1,"a":2}`, `{"a":2,"a":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ha := ArgsHash("tools/call", "echo", json.RawMessage(tt.a))
			hb := ArgsHash("tools/call", "echo", json.RawMessage(tt.b))
			if (ha == hb) != tt.equal {
				t.Errorf("ArgsHash(%s) == ArgsHash(%s) is %v, want %v", tt.a, tt.b, ha == hb, tt.equal)
			}
		})
	}
}

func TestArgsHashFraming(t *testing.T) {
	t.Parallel()
	h := ArgsHash("tools/call", "echo", json.RawMessage(`{"a":1}`))
	if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Fatalf("ArgsHash = %q", h)
	}
	for _, other := range []string{
		ArgsHash("tools/call", "echo2", json.RawMessage(`{"a":1}`)),
		ArgsHash("prompts/get", "echo", json.RawMessage(`{"a":1}`)),
		ArgsHash("tools/call", "", json.RawMessage(`{"a":1}`)),
		ArgsHash("tools/call", "echo", json.RawMessage(`{"a":1`)), // not JSON
	} {
		if other == h {
			t.Errorf("hash collision with %s", other)
		}
	}
	// Invalid JSON still hashes, deterministically.
	if ArgsHash("m", "t", json.RawMessage(`{`)) != ArgsHash("m", "t", json.RawMessage(`{`)) {
		t.Error("invalid args hash is not stable")
	}
}

func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	got, err := CanonicalJSON([]byte(` { "b" : [ 1.50 , "<&>" ], "a" : { "d" : true, "c" : null } } `))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"c":null,"d":true},"b":[1.50,"<&>"]}`; string(got) != want {
		t.Errorf("CanonicalJSON = %s, want %s", got, want)
	}
	if _, err := CanonicalJSON([]byte(`1 2`)); err == nil {
		t.Error("two values accepted")
	}
}

func TestSetRequest(t *testing.T) {
	t.Parallel()
	var a, b Record
	a.SetRequest([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":1,"y":"z"},"_meta":{"progressToken":1}}}`))
	b.SetRequest([]byte(`{"method":"tools/call","params":{"_meta":{"progressToken":2},"arguments":{"y":"z","x":1},"name":"echo"},"id":8,"jsonrpc":"2.0"}`))
	if a.Method != "tools/call" || a.Tool != "echo" || a.JSONRPC.ID.String() != "7" || a.RequestBytes == 0 {
		t.Errorf("SetRequest: %+v", a)
	}
	if a.ArgsHash != b.ArgsHash {
		t.Error("the same call with other ids, _meta and key order hashes differently")
	}
	if want := ArgsHash("tools/call", "echo", json.RawMessage(`{"x":1,"y":"z"}`)); a.ArgsHash != want {
		t.Errorf("SetRequest hash %s, ArgsHash %s", a.ArgsHash, want)
	}
	// Other methods hash params without _meta.
	var c, d Record
	c.SetRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a","_meta":{"traceparent":"x"}}}`))
	d.SetRequest([]byte(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a"}}`))
	if c.ArgsHash != d.ArgsHash || c.Tool != "" {
		t.Errorf("resources/read: %s vs %s", c.ArgsHash, d.ArgsHash)
	}
	var e Record
	e.SetRequest([]byte("not json"))
	if e.RequestBytes != 8 || e.ArgsHash != "" {
		t.Errorf("SetRequest(not json) = %+v", e)
	}
}

// TestArgsHashPooledRoom: the hash reuses its room (the canonical form's
// buffer, the members being sorted) from call to call, so that a recorded
// tools/call costs one allocation (the hash's string; four before), and what
// one hash leaves in the room changes no later hash, also concurrently.
func TestArgsHashPooledRoom(t *testing.T) {
	args := []byte(`{"z":{"b":[{"y":1,"x":2}],"a":"\u00e9"},"query":"mcp","text":"` + strings.Repeat("x", 900) + `"}`)
	want := ArgsHash("tools/call", "search", args)
	plain := []byte(`{"z":{"b":[{"y":1,"x":2}],"a":"b"},"query":"mcp","text":"` + strings.Repeat("x", 900) + `"}`)
	if n := testing.AllocsPerRun(100, func() { argsHash("tools/call", "search", plain, false, true) }); n > 1 && !raceEnabled {
		t.Errorf("argsHash allocates %v times per call, want 1", n)
	}
	others := [][]byte{[]byte(`{"b":1,"a":{"d":2,"c":3}}`), []byte(`[{"q":1,"p":2}]`), []byte(`not json`), nil}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				other := others[(g+i)%len(others)]
				fresh := ArgsHash("tools/call", "x", other)
				if got := ArgsHash("tools/call", "search", args); got != want {
					t.Errorf("hash after other hashes = %s, want %s", got, want)
					return
				}
				if again := ArgsHash("tools/call", "x", other); again != fresh {
					t.Errorf("hash of %q = %s, then %s", other, fresh, again)
					return
				}
			}
		}()
	}
	wg.Wait()
}

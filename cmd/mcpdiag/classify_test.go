package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestClassifyCommand(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" +
		`{"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","content":[],"isError":true}}`
	success := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}]}}`
	inputRequired := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"mode":"form","message":"?","requestedSchema":{"type":"object","properties":{}}}}}}}`
	html502 := "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n\r\n<html><body>Bad gateway</body></html>"
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantOut  []string // substrings of stdout
		wantErr  string   // substring of the one-line stderr
	}{
		{"json output", []string{"classify", "--id", `"a"`}, ok, 0, []string{`"outcome": "TOOL_ERROR"`, `"layer": "application"`, `"isError": true`}, ""},
		{"text output", []string{"classify", "--id", `"a"`, "--text"}, ok, 0, []string{"TOOL_ERROR (application layer)", "do:"}, ""},
		{"id type matters", []string{"classify", "--id", "1"}, ok, 0, []string{`"outcome": "INVALID_ENVELOPE"`}, ""},
		{"sample file", []string{"classify", "--id", "1", "../../testdata/sample-response.txt"}, "", 0, []string{`"outcome": "STREAM_INCOMPLETE"`, `"notifications": 2`}, ""},
		{"bad id", []string{"classify", "--id", "abc"}, ok, 2, nil, "--id"},
		// An empty --id (a script's unset variable) is no id: bad input,
		// not a silently unchecked id (outsider18: it exited 0 with
		// id-not-checked; '--id=' alike).
		{"empty id", []string{"classify", "--id", ""}, ok, 2, nil, "--id: empty id"},
		{"empty id, one word", []string{"classify", "--id="}, ok, 2, nil, "--id: empty id"},
		// An empty --method is bad input too (outsider22: it exited 0 and
		// printed "method": "tools/call", a method the user did not give:
		// the classifier reads an empty method as its default).
		{"empty method", []string{"classify", "--id", `"a"`, "--method", ""}, ok, 2, nil, "--method: empty method"},
		{"empty method, one word", []string{"classify", "--id", `"a"`, "--method="}, ok, 2, nil, "--method: empty method"},
		{"another method echoed", []string{"classify", "--id", `"a"`, "--method", "resources/read"}, ok, 0, []string{`"method": "resources/read"`}, ""},
		{"bad protocol", []string{"classify", "--protocol", "2024-01-01"}, ok, 2, nil, "--protocol"},
		{"not HTTP", []string{"classify"}, "{\"jsonrpc\":\"2.0\"}", 2, nil, "not a raw HTTP response"},
		{"empty input", []string{"classify"}, "", 2, nil, "empty"},
		{"missing file", []string{"classify", "/nonexistent/x"}, "", 2, nil, "cannot open"},
		{"unknown flag", []string{"classify", "--nope"}, ok, 2, nil, "unknown flag"},
		{"event too large", []string{"classify", "--max-event-size", "10"}, "HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\ndata: 0123456789abcdef\n\n", 3, []string{`"outcome": "NOT_CLASSIFIED"`}, "not classified"},
		// Exit 0 whatever the verdict, unless --fail-on names it
		// (docs/decisions.md "classify's exit status"): the verdict is
		// still printed whole on stdout.
		{"fail-on failure, a tool error", []string{"classify", "--id", `"a"`, "--fail-on", "failure"}, ok, 1, []string{`"outcome": "TOOL_ERROR"`}, "stdin: TOOL_ERROR (application layer) is in --fail-on failure"},
		{"fail-on failure, a success", []string{"classify", "--id", "1", "--fail-on", "failure"}, success, 0, []string{`"outcome": "TOOL_SUCCESS"`}, ""},
		{"fail-on failure, input required", []string{"classify", "--id", "1", "--fail-on", "failure"}, inputRequired, 0, []string{`"outcome": "INPUT_REQUIRED"`}, ""},
		{"fail-on failure, HTML 502", []string{"classify", "--id", "1", "--fail-on", "failure"}, html502, 1, []string{`"outcome": "HTTP_ERROR"`}, "HTTP_ERROR (transport layer) is in --fail-on failure"},
		{"fail-on a name, case ignored", []string{"classify", "--id", `"a"`, "--fail-on", "http_error,tool_error"}, ok, 1, []string{`"outcome": "TOOL_ERROR"`}, "is in --fail-on http_error,tool_error"},
		{"fail-on another outcome", []string{"classify", "--id", `"a"`, "--fail-on", "JSONRPC_ERROR"}, ok, 0, []string{`"outcome": "TOOL_ERROR"`}, ""},
		{"fail-on an unknown name", []string{"classify", "--fail-on", "NOPE"}, ok, 2, nil, "--fail-on: unknown outcome"},
		{"fail-on and not classified", []string{"classify", "--max-event-size", "10", "--fail-on", "failure"}, "HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\ndata: 0123456789abcdef\n\n", 3, []string{`"outcome": "NOT_CLASSIFIED"`}, "not classified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &out, &errb)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.wantCode, errb.String())
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			if tt.wantErr != "" {
				e := errb.String()
				if !strings.Contains(e, tt.wantErr) || strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "mcpdiag: ") {
					t.Errorf("stderr %q: want one line starting with \"mcpdiag: \" containing %q", e, tt.wantErr)
				}
			}
			if tt.wantCode == 0 && strings.HasPrefix(out.String(), "{") {
				var v map[string]any
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Fatalf("stdout is not one JSON object: %v", err)
				}
				for _, k := range []string{"layer", "outcome", "status", "contentType", "warnings"} {
					if _, ok := v[k]; !ok {
						t.Errorf("output lacks %q", k)
					}
				}
			}
		})
	}
}

// TestBinaryExitCodes builds the real binary and runs it as a process: the
// exit status and the one-line error are what a shell sees.
func TestBinaryExitCodes(t *testing.T) {
	bin := testBinary(t)
	cmd := exec.Command(bin, "classify", "--id", "1", "../../testdata/sample-response.txt")
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte("STREAM_INCOMPLETE")) {
		t.Fatalf("classify sample: %v\n%s", err, out)
	}
	cmd = exec.Command(bin, "classify")
	cmd.Stdin = strings.NewReader("garbage\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("garbage input: err %v, want exit 2", err)
	}
	if strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("stderr is not one line: %q", stderr.String())
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
}

// TestClassifyKeepsIDAfterTerminal: `mcpdiag classify --id 1` on a stream
// whose response for id 1 is followed by more events reports id 1, a
// number (issue 10, defect 1: it reported 7 after a response for id 777,
// and failed with exit 2 after a notification whose first member is
// "method").
func TestClassifyKeepsIDAfterTerminal(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
	result := `data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}` + "\n\n"
	for name, after := range map[string]string{
		"then a response for id 777":            `data: {"jsonrpc":"2.0","id":777,"result":{}}` + "\n\n",
		"then a notification, method first":     `data: {"method":"notifications/message","jsonrpc":"2.0","params":{"level":"info","data":"x"}}` + "\n\n",
		"then a comment and a request for id 5": ": keep-alive\n\n" + `data: {"method":"ping","id":5,"jsonrpc":"2.0"}` + "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"classify", "--id", "1"}, strings.NewReader(head+result+after), &out, &errb); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errb.String())
			}
			var v struct {
				Outcome string `json:"outcome"`
				JSONRPC struct {
					ID json.RawMessage `json:"id"`
				} `json:"jsonrpc"`
			}
			if err := json.Unmarshal(out.Bytes(), &v); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, out.Bytes())
			}
			if string(v.JSONRPC.ID) != "1" || v.Outcome != "TOOL_SUCCESS" {
				t.Fatalf("outcome %s, jsonrpc.id %s; want TOOL_SUCCESS and 1 (a number)", v.Outcome, v.JSONRPC.ID)
			}
		})
	}
}

// TestClassifyNotClassified: a complete event over --max-event-size is not
// classified, and the output says so, with the size and the limit; it never
// says the stream was cut, and never suggests a retry (issue 10, defect 4:
// it was a usage error, and the proxy recorded STREAM_INCOMPLETE
// "classifier stopped").
func TestClassifyNotClassified(t *testing.T) {
	event := "data: " + `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 5000) + `"}]}}` + "\n\n"
	sse := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + event
	json1 := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + strings.TrimSuffix(strings.TrimPrefix(event, "data: "), "\n\n")
	for _, tc := range []struct {
		name, in, cause string
		size            int
	}{
		{"sse event", sse, "event-too-large", len(event)},
		{"json body", json1, "body-too-large", len(event) - len("data: \n\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run([]string{"classify", "--id", "1", "--max-event-size", "1024"}, strings.NewReader(tc.in), &out, &errb)
			if code != 3 {
				t.Fatalf("exit %d, want 3 (not classified); stderr %q", code, errb.String())
			}
			if e := errb.String(); strings.Count(e, "\n") != 1 || !strings.Contains(e, "not classified") || !strings.Contains(e, "--max-event-size") {
				t.Errorf("stderr %q: want one line saying it was not classified and which flag to raise", e)
			}
			var v struct {
				Outcome       string `json:"outcome"`
				Layer         string `json:"layer"`
				Reason        string `json:"reason"`
				NotClassified struct {
					Cause string `json:"cause"`
					Size  int    `json:"size"`
					Limit int    `json:"limit"`
				} `json:"notClassified"`
			}
			if err := json.Unmarshal(out.Bytes(), &v); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, out.Bytes())
			}
			nc := v.NotClassified
			if v.Outcome != "NOT_CLASSIFIED" || v.Layer != "none" || nc.Cause != tc.cause || nc.Size != tc.size || nc.Limit != 1024 {
				t.Fatalf("got %s/%s %+v, want NOT_CLASSIFIED/none cause %s size %d limit 1024", v.Outcome, v.Layer, nc, tc.cause, tc.size)
			}
			for _, bad := range []string{"cut", "incomplete", "broke", "retry", "STREAM_INCOMPLETE"} {
				if strings.Contains(strings.ToLower(v.Reason), strings.ToLower(bad)) {
					t.Errorf("reason %q says %q", v.Reason, bad)
				}
			}
			out.Reset()
			errb.Reset()
			run([]string{"classify", "--id", "1", "--max-event-size", "1024", "--text"}, strings.NewReader(tc.in), &out, &errb)
			text := out.String()
			if !strings.HasPrefix(text, "NOT_CLASSIFIED") || !strings.Contains(text, "not classified") || strings.Contains(strings.ToLower(text), "retry") ||
				strings.Contains(text, "never arrived") {
				t.Errorf("--text output:\n%s", text)
			}
		})
	}
}

// TestClassifyHeaderTooLarge: a header block over --max-header-size is one
// clear line and exit 2 (issue 11, hole 7: a 200 MB header line was read
// whole).
func TestClassifyHeaderTooLarge(t *testing.T) {
	in := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 3<<20) + "\r\nContent-Type: application/json\r\n\r\n{}"
	for _, args := range [][]string{{"classify"}, {"classify", "--max-header-size", "4096"}} {
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(in), &out, &errb)
		e := errb.String()
		if code != 2 || out.Len() != 0 || strings.Count(e, "\n") != 1 || !strings.Contains(e, "header") || !strings.Contains(e, "--max-header-size") {
			t.Fatalf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2 and one line naming --max-header-size", args, code, out.Len(), e)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"classify", "--max-header-size", "8388608"}, strings.NewReader(in), &out, &errb); code != 0 {
		t.Fatalf("with the cap raised: exit %d, %s", code, errb.String())
	}
}

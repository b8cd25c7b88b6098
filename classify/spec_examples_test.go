package classify_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// specRoot holds the official MCP JSON Schemas and examples, vendored in the
// repository (testdata/spec/SOURCES names their repository and commit), as
// seen from this package's directory.
const specRoot = "../testdata/spec"

// minSpecExamples is how many example files the selected directories held
// when this test was written (4 CallToolResult, 2 InputRequiredResult,
// 1 CallToolResultResponse, 10 error files). Fewer means the folder was
// moved or pruned, and the test would prove less than it claims.
const minSpecExamples = 17

// specStatus is the HTTP status that 2026-07-28 Streamable HTTP assigns to a
// JSON-RPC error code ("MUST"); codes without one are sent with 200 here.
var specStatus = map[int64]int{
	-32020: http.StatusBadRequest, // HeaderMismatch
	-32021: http.StatusBadRequest, // MissingRequiredClientCapability
	-32022: http.StatusBadRequest, // UnsupportedProtocolVersion
	-32601: http.StatusNotFound,   // MethodNotFound
}

// specPath joins elem under specRoot and fails the test with a clear message
// when that path does not exist.
func specPath(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{specRoot}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		abs, _ := filepath.Abs(p)
		t.Fatalf("the vendored MCP spec files are missing: %v\n"+
			"these tests read %s (resolved: %s), copied into the repository from the commit named in testdata/spec/SOURCES", err, p, abs)
	}
	return p
}

// exampleKind says which schema type an example directory holds.
type exampleKind int

const (
	kindCallToolResult exampleKind = iota
	kindInputRequired
	kindCallToolResultResponse
	kindError
)

// kindOfExampleDir selects the example directories this test covers.
func kindOfExampleDir(name string) (exampleKind, bool) {
	switch {
	case name == "CallToolResult":
		return kindCallToolResult, true
	case name == "InputRequiredResult":
		return kindInputRequired, true
	case name == "CallToolResultResponse":
		return kindCallToolResultResponse, true
	case strings.HasSuffix(name, "Error"):
		return kindError, true
	}
	return 0, false
}

// specExample is one example file and the wire response built from it.
type specExample struct {
	name string // "Dir/file.json"
	kind exampleKind
	// body is the full JSON-RPC response; id the id it carries.
	body []byte
	id   wire.ID
	// result or errObj is the member the expectation is read from.
	result, errObj json.RawMessage
}

// loadSpecExamples reads every JSON file of the selected example directories
// of the 2026-07-28 spec and wraps each as a JSON-RPC response.
func loadSpecExamples(t *testing.T) []specExample {
	t.Helper()
	root := specPath(t, "2026-07-28", "examples")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []specExample
	seen := map[string]int{}
	for _, d := range dirs {
		kind, ok := kindOfExampleDir(d.Name())
		if !ok || !d.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(root, d.Name(), f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			ex, err := wrapSpecExample(kind, raw)
			if err != nil {
				t.Fatalf("%s/%s: %v", d.Name(), f.Name(), err)
			}
			ex.name = d.Name() + "/" + f.Name()
			out = append(out, ex)
			seen[d.Name()]++
		}
	}
	for _, dir := range []string{
		"CallToolResult", "InputRequiredResult", "CallToolResultResponse",
		"ParseError", "InvalidParamsError", "MethodNotFoundError", "InternalError",
		"HeaderMismatchError", "MissingRequiredClientCapabilityError", "UnsupportedProtocolVersionError",
	} {
		if seen[dir] == 0 {
			t.Errorf("no example files in %s/%s", root, dir)
		}
	}
	if len(out) < minSpecExamples {
		t.Fatalf("found %d example files under %s, want at least %d: the test would pass on too little", len(out), root, minSpecExamples)
	}
	return out
}

// wrapSpecExample builds the wire response for one example: a bare result
// or error object is wrapped with id 1; a file that is already a response
// (it has a jsonrpc member) is used as it is, with its own id.
func wrapSpecExample(kind exampleKind, raw []byte) (specExample, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return specExample{}, fmt.Errorf("not a JSON object: %w", err)
	}
	ex := specExample{kind: kind}
	_, isResponse := obj["jsonrpc"]
	switch {
	case kind == kindCallToolResultResponse || isResponse:
		ex.body = raw
		idRaw, ok := obj["id"]
		if !ok {
			return ex, fmt.Errorf("a full response without an id")
		}
		ex.id = wire.IDFromRaw(bytes.TrimSpace(idRaw))
		ex.result, ex.errObj = obj["result"], obj["error"]
	case kind == kindError:
		ex.body = []byte(`{"jsonrpc":"2.0","id":1,"error":` + string(raw) + `}`)
		ex.id, ex.errObj = wire.IntID(1), raw
	default:
		ex.body = []byte(`{"jsonrpc":"2.0","id":1,"result":` + string(raw) + `}`)
		ex.id, ex.result = wire.IntID(1), raw
	}
	if (kind == kindError) != (ex.errObj != nil) || (ex.result == nil) == (ex.errObj == nil) {
		return ex, fmt.Errorf("a %v example must hold exactly one of result and error", kind)
	}
	return ex, nil
}

// sseEvent frames body as one text/event-stream event, one data line per
// line of the body (the reader joins them with "\n", which JSON allows).
func specSSEEvent(body []byte) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	return b.Bytes()
}

// servedResponse is what the example server writes at one path.
type servedResponse struct {
	status      int
	contentType string
	body        []byte
}

// exampleCase is one example served one way.
type exampleCase struct {
	name string
	ex   specExample
	resp servedResponse
}

func TestSpecExamples(t *testing.T) {
	t.Parallel()
	examples := loadSpecExamples(t)
	var cases []exampleCase
	for _, ex := range examples {
		cases = append(cases,
			exampleCase{ex.name + "/json", ex, servedResponse{200, "application/json", ex.body}},
			exampleCase{ex.name + "/sse", ex, servedResponse{200, "text/event-stream", specSSEEvent(ex.body)}},
		)
		if ex.kind == kindError {
			if code := exampleErrorCode(t, ex.errObj); specStatus[code] != 0 {
				status := specStatus[code]
				cases = append(cases, exampleCase{fmt.Sprintf("%s/http-%d", ex.name, status), ex,
					servedResponse{status, "application/json", ex.body}})
			}
		}
	}
	routes := map[string]servedResponse{}
	for i, c := range cases {
		routes[fmt.Sprintf("/example/%d", i)] = c.resp
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", resp.contentType)
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.body)
	}))
	defer srv.Close()

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fetchAndClassify(t, fmt.Sprintf("%s/example/%d", srv.URL, i), c.ex.id)
			if got, want := r.Status, c.resp.status; got != want {
				t.Fatalf("status %d, want %d", got, want)
			}
			if c.resp.contentType == "text/event-stream" {
				if r.SSE() == nil || !r.SSE().Terminal || r.SSE().Events != 1 || r.SSE().TerminalEvent != 1 {
					t.Errorf("SSE details %+v, want one event carrying the response", r.SSE())
				}
			}
			switch c.ex.kind {
			case kindError:
				checkErrorExample(t, r, c.ex, c.resp.status)
			default:
				checkResultExample(t, r, c.ex)
			}
		})
	}
}

// fetchAndClassify GETs url and classifies the real response as the answer to
// a 2026-07-28 tools/call with request id id.
func fetchAndClassify(t *testing.T, url string, id wire.ID) *classify.Result {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r, err := classify.Classify(&classify.Exchange{
		Method:          "tools/call",
		ID:              id,
		ProtocolVersion: classify.Protocol2026,
		Status:          resp.StatusCode,
		Header:          resp.Header,
		Body:            resp.Body,
	})
	if err != nil {
		t.Fatalf("Classify: %v", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	return r
}

// errorCode reads the code of a JSON-RPC error object, failing the test when
// it has no integer code.
func exampleErrorCode(t *testing.T, errObj json.RawMessage) int64 {
	t.Helper()
	var e struct {
		Code *int64 `json:"code"`
	}
	if err := json.Unmarshal(errObj, &e); err != nil || e.Code == nil {
		t.Fatalf("error object %s has no integer code (%v)", errObj, err)
	}
	return *e.Code
}

// checkErrorExample asserts that an error example classified as the error it
// is: JSONRPC_ERROR with its code, message and data under HTTP 200 (plus the
// status-mismatch warning where the spec assigns another status), and
// HTTP_ERROR carrying the same JSON-RPC error under the spec's status.
func checkErrorExample(t *testing.T, r *classify.Result, ex specExample, status int) {
	t.Helper()
	var e struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(ex.errObj, &e); err != nil {
		t.Fatal(err)
	}
	wantOutcome, wantWarnings := classify.JSONRPCError, []string{}
	if status != http.StatusOK {
		wantOutcome = classify.HTTPError
	} else if specStatus[e.Code] != 0 {
		wantWarnings = []string{classify.WarnStatusMismatch}
	}
	if r.Outcome != wantOutcome || r.Layer() != wantOutcome.Layer() {
		t.Fatalf("got %s/%s (%s), want %s/%s", r.Layer(), r.Outcome, r.Reason, wantOutcome.Layer(), wantOutcome)
	}
	d := r.JSONRPC()
	if d == nil || d.Error == nil || d.Error.Code == nil {
		t.Fatalf("no JSON-RPC error details in %+v", r)
	}
	if *d.Error.Code != e.Code || d.Error.Message != e.Message {
		t.Errorf("JSON-RPC error %d %q, want %d %q", *d.Error.Code, d.Error.Message, e.Code, e.Message)
	}
	if !jsonEqual(d.Error.Data, e.Data) {
		t.Errorf("JSON-RPC error data %s, want %s", d.Error.Data, e.Data)
	}
	if !d.ID.Equal(ex.id) {
		t.Errorf("response id %s, want %s", d.ID, ex.id)
	}
	checkWarningCodes(t, r, wantWarnings)
}

// checkResultExample asserts that a result example classified as its
// resultType says: TOOL_SUCCESS or TOOL_ERROR by isError for "complete",
// INPUT_REQUIRED with the file's input requests for "input_required".
func checkResultExample(t *testing.T, r *classify.Result, ex specExample) {
	t.Helper()
	var res struct {
		ResultType    *string `json:"resultType"`
		IsError       *bool   `json:"isError"`
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode *string `json:"mode"`
			} `json:"params"`
		} `json:"inputRequests"`
		RequestState *string `json:"requestState"`
	}
	if err := json.Unmarshal(ex.result, &res); err != nil {
		t.Fatal(err)
	}
	if res.ResultType == nil {
		t.Fatalf("the example has no resultType; every 2026-07-28 example should carry one")
	}
	if r.JSONRPC() == nil || !r.JSONRPC().ID.Equal(ex.id) {
		t.Errorf("JSON-RPC details %+v, want id %s", r.JSONRPC(), ex.id)
	}
	if r.ResultType() != *res.ResultType {
		t.Errorf("resultType %q, want %q", r.ResultType(), *res.ResultType)
	}
	checkWarningCodes(t, r, []string{})
	switch *res.ResultType {
	case "complete":
		want := classify.ToolSuccess
		if res.IsError != nil && *res.IsError {
			want = classify.ToolError
		}
		if r.Outcome != want || r.Layer() != want.Layer() {
			t.Fatalf("got %s/%s (%s), want %s/%s", r.Layer(), r.Outcome, r.Reason, want.Layer(), want)
		}
		if !reflect.DeepEqual(isErrorOf(r), res.IsError) {
			t.Errorf("isError %v, want %v", boolPtrString(isErrorOf(r)), boolPtrString(res.IsError))
		}
	case "input_required":
		if ex.kind == kindCallToolResult {
			t.Fatalf("a CallToolResult example with resultType input_required")
		}
		if r.Outcome != classify.InputRequired || r.Layer() != classify.LayerInteraction {
			t.Fatalf("got %s/%s (%s), want interaction/INPUT_REQUIRED", r.Layer(), r.Outcome, r.Reason)
		}
		want := []classify.InputRequest{}
		for key, req := range res.InputRequests {
			ir := classify.InputRequest{Key: key, Method: req.Method}
			if req.Method == "elicitation/create" {
				ir.Mode = "form" // the spec's default when mode is omitted
				if req.Params.Mode != nil {
					ir.Mode = *req.Params.Mode
				}
			}
			want = append(want, ir)
		}
		got := slices.Clone(r.Input().Requests)
		byKey := func(a, b classify.InputRequest) int { return strings.Compare(a.Key, b.Key) }
		slices.SortFunc(got, byKey)
		slices.SortFunc(want, byKey)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("input requests %+v, want %+v", got, want)
		}
		if r.Input().HasRequestState != (res.RequestState != nil) {
			t.Errorf("hasRequestState %v, want %v", r.Input().HasRequestState, res.RequestState != nil)
		}
	default:
		t.Fatalf("resultType %q: this test does not know what the spec says it means; extend it", *res.ResultType)
	}
}

// checkWarnings asserts that r carries exactly the warning codes want, in any
// order.
func checkWarningCodes(t *testing.T, r *classify.Result, want []string) {
	t.Helper()
	got := []string{}
	for _, w := range r.Warnings() {
		got = append(got, w.Code)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("warnings %v, want %v: %+v", got, want, r.Warnings())
	}
}

// jsonEqual reports whether two JSON texts hold the same value; two absent
// (empty) texts are equal.
func jsonEqual(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// ptrString renders an optional bool for messages.
// isErrorOf returns r.IsError as a pointer, nil when absent.
func isErrorOf(r *classify.Result) *bool {
	if v, ok := r.IsError(); ok {
		return &v
	}
	return nil
}

func boolPtrString(b *bool) string {
	if b == nil {
		return "absent"
	}
	return fmt.Sprint(*b)
}

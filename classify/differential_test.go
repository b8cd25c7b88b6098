package classify_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The differential tests compare the classifier's verdict on a tools/call
// result with the official JSON Schema's. A corpus is grown from the spec's
// examples and the seeds in testdata/differential by deterministic mutations;
// every document is classified and validated, and the verdicts must agree
// except where a row of a known-disagreement table explains the difference.
//
// A row is one of three things. A normalization rewrites the document into
// what the classifier actually checks (for instance it drops content blocks
// of unknown type, which the classifier only warns about); the schema's
// verdict on the rewritten document is then what the classifier must say.
// A rejection names documents the classifier refuses although the schema
// accepts them. The format row validates with "format" as an annotation only.
// Rows must each explain at least one disagreement on their own, so the table
// cannot keep a row that no longer matters.

// knownDisagreement is an intended difference between the classifier and the
// schema, with the reason it is intended.
type knownDisagreement struct {
	name   string
	reason string
	// protocols lists the protocol revisions the row applies to.
	protocols []string
	// normalize rewrites doc (a decoded copy it may change) into what the
	// classifier checks, reporting whether anything changed.
	normalize func(doc any) (any, bool)
	// rejects reports documents that the classifier refuses although the
	// schema accepts them.
	rejects func(doc any) bool
	// formats marks the row under which "format" is not asserted.
	formats bool
	// warning is the warning code the classifier must give when the row
	// applied and the classifier accepted the result.
	warning string
}

// appliesTo reports whether the row is in force for protocol.
func (k knownDisagreement) appliesTo(protocol string) bool {
	return slices.Contains(k.protocols, protocol)
}

// bothProtocols are the revisions a row can apply to.
var bothProtocols = []string{classify.Protocol2026, classify.Protocol2025}

// Rows shared by the CallToolResult and InputRequiredResult tables.
var (
	rowFormats = knownDisagreement{
		name: "format uri/byte not checked",
		reason: "the schema marks uri fields \"format\": \"uri\" and base64 fields \"format\": \"byte\"; JSON " +
			"Schema 2020-12 treats format as an annotation unless a validator opts in, and a block with an odd " +
			"URI or bad base64 can still be shown or passed on, so the classifier checks only that they are " +
			"strings (this test opts in, registering \"byte\" as standard base64, to show the difference)",
		protocols: bothProtocols,
		formats:   true,
	}
	rowServerInfo = knownDisagreement{
		name: "_meta serverInfo not validated",
		reason: "ResultMetaObject types _meta[\"io.modelcontextprotocol/serverInfo\"] as an Implementation, but the " +
			"spec says it is self-reported, for display, logging and debugging, and that clients SHOULD NOT change " +
			"their behaviour on it; the classifier does not fail a tool's result on it",
		protocols: []string{classify.Protocol2026},
		normalize: dropServerInfo,
	}
	rowFloat64 = knownDisagreement{
		name: "numbers read as IEEE-754 doubles",
		reason: "the validator compares JSON numbers exactly; the classifier, like JSON clients in JavaScript and " +
			"Go, reads them as float64, so 1e400 is out of range (not an integer size, not a priority) and -1e-400 " +
			"is -0 (a priority in [0, 1])",
		protocols: bothProtocols,
		normalize: numbersAsFloat64,
	}
)

// callToolResultRows are the intended disagreements between the classifier
// and #/$defs/CallToolResult.
var callToolResultRows = []knownDisagreement{
	{
		name: "absent resultType read as complete",
		reason: "2026-07-28 CallToolResult requires resultType, but basic §ResultType says clients MUST treat an " +
			"absent resultType as \"complete\" (servers on earlier revisions do not send it); the classifier " +
			"accepts the result and warns",
		protocols: []string{classify.Protocol2026},
		normalize: addResultTypeComplete,
		warning:   classify.WarnMissingResultType,
	},
	{
		name: "unknown content block type only warned",
		reason: "ContentBlock is an anyOf of five types, so the schema rejects any other; the classifier accepts " +
			"the result and warns, so that a block type added by a later revision or an extension does not turn " +
			"a finished tool call into a protocol failure",
		protocols: bothProtocols,
		normalize: dropUnknownBlocks,
		warning:   classify.WarnUnknownContentBlock,
	},
	rowFormats,
	rowServerInfo,
	rowFloat64,
	{
		name: "resultType read on 2025-11-25 exchanges",
		reason: "the 2025-11-25 CallToolResult has no resultType member, so any value validates; the classifier " +
			"applies the 2026-07-28 ResultType rule on every exchange (a server may answer in the newer shape), " +
			"and a resultType that is not a string cannot be read as \"complete\"",
		protocols: []string{classify.Protocol2025},
		rejects: func(doc any) bool {
			rt, ok := jsonMember(doc, "resultType")
			_, isString := rt.(string)
			return ok && !isString
		},
	},
}

// inputRequiredRows are the intended disagreements between the classifier and
// #/$defs/InputRequiredResult.
var inputRequiredRows = []knownDisagreement{
	{
		name: "neither inputRequests nor requestState",
		reason: "the schema requires only resultType, but the spec (and the schema's own description) says servers " +
			"MUST include at least one of inputRequests and requestState; without either the client has nothing " +
			"to do, so the classifier rejects it",
		protocols: []string{classify.Protocol2026},
		rejects: func(doc any) bool {
			_, hasRequests := jsonMember(doc, "inputRequests")
			_, hasState := jsonMember(doc, "requestState")
			return !hasRequests && !hasState
		},
	},
	{
		name: "input request params checked only as far as routing needs",
		reason: "the classifier names each input request (key, method, elicitation mode) and checks what that " +
			"needs: a known method, params an object, an elicitation's string message, a sampling request's " +
			"messages array; the rest of ElicitRequestParams and CreateMessageRequestParams (requestedSchema, " +
			"mode values, url, maxTokens, the messages themselves) is the answering client's business",
		protocols: []string{classify.Protocol2026},
		normalize: canonicalInputParams,
	},
	rowServerInfo,
}

// schemaOracle validates documents against one $defs entry of an official
// schema, with "format" asserted (strict) and as an annotation (lenient).
type schemaOracle struct {
	strict, lenient *jsonschema.Schema
}

// loadOracle compiles #/$defs/def of the schema.json of a protocol revision.
func loadOracle(t *testing.T, protocol, def string) schemaOracle {
	t.Helper()
	path := specPath(t, protocol, "schema.json")
	return schemaOracle{strict: compileDef(t, path, def, true), lenient: compileDef(t, path, def, false)}
}

// compileDef compiles one definition of the schema file at path.
func compileDef(t *testing.T, path, def string, formats bool) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	if formats {
		c.AssertFormat()
		c.RegisterFormat(&jsonschema.Format{Name: "byte", Validate: validateBase64})
	}
	url := "file:///" + filepath.ToSlash(filepath.Base(filepath.Dir(path))) + "/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url + "#/$defs/" + def)
	if err != nil {
		t.Fatalf("compiling %s#/$defs/%s: %v", path, def, err)
	}
	return sch
}

// validateBase64 is the OpenAPI "byte" format: standard base64 (RFC 4648).
func validateBase64(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return err
}

// schemaValid validates doc.
func schemaValid(sch *jsonschema.Schema, doc any) bool {
	return sch.Validate(doc) == nil
}

// schemaError returns the validator's message for doc, "" when it is valid.
func schemaError(sch *jsonschema.Schema, doc any) string {
	if err := sch.Validate(doc); err != nil {
		return err.Error()
	}
	return ""
}

// expectation is what the table says the classifier must answer for one
// document, with the evidence.
type expectation struct {
	valid      bool
	rawValid   bool  // the schema's verdict with formats asserted
	normalized any   // the document after the rows' normalizations
	applied    []int // rows that changed the document or rejected it
}

// expectVerdict applies the rows in force for protocol to doc and returns the
// verdict the classifier must give.
func expectVerdict(o schemaOracle, rows []knownDisagreement, protocol string, doc any) expectation {
	e := expectation{normalized: cloneJSON(doc)}
	e.rawValid = schemaValid(o.strict, doc)
	rejected, normalized := false, false
	for i, row := range rows {
		if !row.appliesTo(protocol) {
			continue
		}
		if row.normalize != nil {
			if n, changed := row.normalize(e.normalized); changed {
				e.normalized, normalized = n, true
				e.applied = append(e.applied, i)
			}
		}
		if row.rejects != nil && row.rejects(doc) {
			rejected = true
			e.applied = append(e.applied, i)
		}
	}
	strict := e.rawValid
	if normalized {
		strict = schemaValid(o.strict, e.normalized)
	}
	e.valid = !rejected && strict
	for i, row := range rows {
		// Dropping format assertion only loosens: validate again only on
		// failure.
		if row.formats && row.appliesTo(protocol) && !strict && schemaValid(o.lenient, e.normalized) {
			e.applied = append(e.applied, i)
			e.valid = !rejected
		}
	}
	return e
}

// differential runs one document through the classifier and the oracle and
// keeps the tally.
type differential struct {
	t        *testing.T
	oracle   map[string]schemaOracle // by protocol
	rows     []knownDisagreement
	validOut classify.Outcome // the outcome that means "valid"
	// check, when set, asserts more about an accepted result.
	check func(doc any, r *classify.Result) string

	cases, valid, invalid, failures int
	sole                            map[int]int // disagreements explained by one row alone
	explained                       int
	groups                          map[string]*disagreementGroup
	order                           []string
}

// run checks one document under protocol.
func (d *differential) run(protocol string, c corpusCase) {
	d.t.Helper()
	doc, body, origin := c.doc, c.body, c.origin
	r := classifyResult(d.t, body, protocol)
	var got bool
	switch {
	case r.Outcome == classify.InvalidToolResult:
	case r.Outcome == d.validOut || d.validOut == classify.ToolSuccess && r.Outcome == classify.ToolError:
		got = true
	default:
		d.fail("%s under %s: unexpected outcome %s (%s)\n  result: %s", origin, protocol, r.Outcome, r.Reason, body)
		return
	}
	d.cases++
	if got {
		d.valid++
	} else {
		d.invalid++
	}
	e := expectVerdict(d.oracle[protocol], d.rows, protocol, doc)
	if got != e.valid {
		schemaErr := schemaError(d.oracle[protocol].strict, doc)
		norm, _ := json.Marshal(e.normalized)
		d.disagree(disagreementKey(got, r.Reason, origin), fmt.Sprintf(
			"%s under %s: classifier says %s, table says %s\n  classifier: %s: %s\n  schema (formats asserted): %s %s\n  rows applied: %s\n  result:     %s\n  normalized: %s",
			origin, protocol, verdictName(got), verdictName(e.valid), r.Outcome, r.Reason,
			verdictName(e.rawValid), schemaErr, d.rowNames(e.applied), body, norm))
		return
	}
	if got {
		for _, i := range e.applied {
			if w := d.rows[i].warning; w != "" && !r.HasWarning(w) {
				d.fail("%s under %s: row %q applied but warning %s is missing: %+v\n  result: %s", origin, protocol, d.rows[i].name, w, r.Warnings(), body)
			}
		}
		if d.check != nil {
			if msg := d.check(doc, r); msg != "" {
				d.fail("%s under %s: %s\n  result: %s", origin, protocol, msg, body)
			}
		}
	}
	if got != e.rawValid {
		d.explained++
		if len(e.applied) == 1 {
			d.sole[e.applied[0]]++
		}
	}
}

// fail reports a failure, keeping the output readable when many fail.
func (d *differential) fail(format string, args ...any) {
	d.t.Helper()
	d.failures++
	if d.failures <= 25 {
		d.t.Errorf(format, args...)
	}
}

// disagree records an unexplained disagreement under key; finish reports one
// example (the shortest) per key, so that one bug is one message.
func (d *differential) disagree(key, msg string) {
	d.failures++
	g, ok := d.groups[key]
	if !ok {
		g = &disagreementGroup{}
		d.groups[key] = g
		d.order = append(d.order, key)
	}
	g.count++
	if g.example == "" || len(msg) < len(g.example) {
		g.example = msg
	}
}

// disagreementGroup is one kind of unexplained disagreement.
type disagreementGroup struct {
	count   int
	example string
}

// disagreementKey groups disagreements by the classifier's verdict and
// reason and the last mutation that made the document, with array indexes
// blurred, so that one bug is reported once.
func disagreementKey(got bool, reason, origin string) string {
	last := origin[strings.LastIndex(origin, " ; ")+3:]
	return verdictName(got) + "|" + blurIndexes.ReplaceAllString(reason, "#") + "|" + blurIndexes.ReplaceAllString(last, "#")
}

// blurIndexes matches what varies between instances of one disagreement.
var blurIndexes = regexp.MustCompile(`\[\d+\]|/\d+|\d+ input request`)

// finish asserts the corpus was big enough and every row was needed, and
// logs the tally.
func (d *differential) finish(minCases int) {
	d.t.Helper()
	slices.SortStableFunc(d.order, func(a, b string) int { return d.groups[b].count - d.groups[a].count })
	for i, key := range d.order {
		if i == 15 {
			d.t.Errorf("... and %d more kinds of unexplained disagreement", len(d.order)-i)
			break
		}
		g := d.groups[key]
		d.t.Errorf("unexplained disagreement (%d case(s) like this one): %s", g.count, g.example)
	}
	if d.failures > 25 {
		d.t.Errorf("%d failures in all", d.failures)
	}
	d.t.Logf("%d cases: classifier valid %d, invalid %d; %d disagreements with the schema, all explained by the table", d.cases, d.valid, d.invalid, d.explained)
	for i, row := range d.rows {
		d.t.Logf("  row %-55q explains %4d disagreement(s) alone", row.name, d.sole[i])
		if d.sole[i] == 0 && d.failures == 0 {
			d.t.Errorf("row %q explains no disagreement on its own: remove it, or add a seed that shows it", row.name)
		}
	}
	if d.cases < minCases || d.valid < minCases/10 || d.invalid < minCases/10 {
		d.t.Errorf("only %d cases (%d valid, %d invalid); want at least %d with both verdicts well represented", d.cases, d.valid, d.invalid, minCases)
	}
}

// rowNames renders the names of the rows at idx for messages.
func (d *differential) rowNames(idx []int) string {
	if len(idx) == 0 {
		return "none"
	}
	var names []string
	for _, i := range idx {
		names = append(names, strconv.Quote(d.rows[i].name))
	}
	return strings.Join(names, ", ")
}

// verdictName renders a verdict for messages.
func verdictName(valid bool) string {
	if valid {
		return "valid"
	}
	return "invalid"
}

// classifyResult classifies result as the result of a tools/call with id 1,
// answered HTTP 200 application/json.
func classifyResult(t *testing.T, result []byte, protocol string) *classify.Result {
	t.Helper()
	body := make([]byte, 0, len(result)+40)
	body = append(body, `{"jsonrpc":"2.0","id":1,"result":`...)
	body = append(append(body, result...), '}')
	r, err := classify.Classify(&classify.Exchange{
		Method:          "tools/call",
		ID:              wire.IntID(1),
		ProtocolVersion: protocol,
		Status:          http.StatusOK,
		Header:          http.Header{"Content-Type": {"application/json"}},
		BodyBytes:       body,
	})
	if err != nil {
		t.Fatalf("Classify: %v", err)
	}
	return r
}

// maxDiffDocs bounds each corpus so that the test stays fast under -race
// (each CallToolResult document is checked under both protocols).
const maxDiffDocs = 2500

// TestDifferentialCallToolResult compares the classifier with
// #/$defs/CallToolResult of both revisions, through callToolResultRows.
func TestDifferentialCallToolResult(t *testing.T) {
	t.Parallel()
	start := time.Now()
	seeds := loadSeeds(t, "CallToolResult", "calltoolresult")
	for _, ex := range loadSpecExamples(t) {
		if ex.kind == kindCallToolResultResponse {
			seeds = append(seeds, seedDoc{"spec:" + ex.name, decodeJSON(t, ex.result)})
		}
	}
	corpus := buildCorpus(seeds, callToolResultContexts, maxDiffDocs, 1)
	d := &differential{
		t:        t,
		oracle:   map[string]schemaOracle{},
		rows:     callToolResultRows,
		validOut: classify.ToolSuccess,
		sole:     map[int]int{},
		groups:   map[string]*disagreementGroup{},
		check:    checkIsError,
	}
	for _, p := range bothProtocols {
		d.oracle[p] = loadOracle(t, p, "CallToolResult")
	}
	excluded := 0
	for _, c := range corpus {
		if rt, ok := jsonMember(c.doc, "resultType"); ok {
			if s, isString := rt.(string); isString && s != "complete" {
				excluded++ // TestResultTypeOtherThanComplete and the input differential
				continue
			}
		}
		for _, p := range bothProtocols {
			d.run(p, c)
		}
	}
	t.Logf("%d documents with a resultType other than \"complete\" left to the resultType tests; %s", excluded, time.Since(start))
	d.finish(4000)
}

// checkIsError asserts that an accepted CallToolResult reports isError as the
// document holds it.
func checkIsError(doc any, r *classify.Result) string {
	v, has := jsonMember(doc, "isError")
	wantErr := has && v == true
	if (r.Outcome == classify.ToolError) != wantErr {
		return fmt.Sprintf("outcome %s but isError is %v", r.Outcome, v)
	}
	if isErr, ok := r.IsError(); has != ok || ok && isErr != wantErr {
		return fmt.Sprintf("Result.IsError %s, document isError %v (present %v)", boolPtrString(isErrorOf(r)), v, has)
	}
	return ""
}

// TestDifferentialInputRequiredResult compares the classifier with
// #/$defs/InputRequiredResult of 2026-07-28, through inputRequiredRows.
func TestDifferentialInputRequiredResult(t *testing.T) {
	t.Parallel()
	start := time.Now()
	seeds := loadSeeds(t, "InputRequiredResult", "inputrequired")
	corpus := buildCorpus(seeds, inputRequiredContexts, maxDiffDocs/2, 2)
	d := &differential{
		t:        t,
		oracle:   map[string]schemaOracle{classify.Protocol2026: loadOracle(t, classify.Protocol2026, "InputRequiredResult")},
		rows:     inputRequiredRows,
		validOut: classify.InputRequired,
		sole:     map[int]int{},
		groups:   map[string]*disagreementGroup{},
		check:    checkInputDetails,
	}
	excluded := 0
	for _, c := range corpus {
		if rt, _ := jsonMember(c.doc, "resultType"); rt != "input_required" {
			excluded++
			continue
		}
		d.run(classify.Protocol2026, c)
	}
	t.Logf("%d documents whose resultType is no longer input_required skipped; %s", excluded, time.Since(start))
	d.finish(800)
}

// checkInputDetails asserts that an accepted InputRequiredResult reports the
// document's input request keys and methods and whether it has requestState.
func checkInputDetails(doc any, r *classify.Result) string {
	if r.Input() == nil {
		return "INPUT_REQUIRED without input details"
	}
	want := map[string]string{}
	if reqs, ok := jsonMember(doc, "inputRequests"); ok {
		for k, v := range reqs.(map[string]any) {
			want[k] = v.(map[string]any)["method"].(string)
		}
	}
	got := map[string]string{}
	for _, ir := range r.Input().Requests {
		got[ir.Key] = ir.Method
	}
	if !maps.Equal(got, want) {
		return fmt.Sprintf("input requests %v, want %v", got, want)
	}
	if _, has := jsonMember(doc, "requestState"); has != r.Input().HasRequestState {
		return fmt.Sprintf("hasRequestState %v, want %v", r.Input().HasRequestState, has)
	}
	return ""
}

// TestResultTypeOtherThanComplete checks the documented meaning of resultType
// values other than "complete", which the CallToolResult differential leaves
// out: input_required is an interaction (only for tools/call, prompts/get and
// resources/read), task needs the tasks extension on a tools/call, and any
// other value MUST be considered invalid.
func TestResultTypeOtherThanComplete(t *testing.T) {
	t.Parallel()
	const content = `"content":[{"type":"text","text":"x"}]`
	tests := []struct {
		name       string
		method     string
		protocol   string
		extensions []string
		result     string
		want       classify.Outcome
		warnings   []string
	}{
		{name: "input_required with a roots request", result: `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`, want: classify.InputRequired},
		{name: "input_required with requestState only", result: `{"resultType":"input_required","requestState":"s"}`, want: classify.InputRequired},
		{name: "input_required with content is still not complete", result: `{"resultType":"input_required","requestState":"s",` + content + `}`, want: classify.InputRequired},
		{name: "input_required with neither requests nor state", result: `{"resultType":"input_required"}`, want: classify.InvalidToolResult},
		{name: "input_required asking for an unknown method", result: `{"resultType":"input_required","inputRequests":{"k":{"method":"tools/call"}}}`, want: classify.InvalidToolResult},
		{name: "input_required on prompts/get", method: "prompts/get", result: `{"resultType":"input_required","requestState":"s"}`, want: classify.InputRequired},
		{name: "input_required on resources/read", method: "resources/read", result: `{"resultType":"input_required","requestState":"s"}`, want: classify.InputRequired},
		{name: "input_required on tools/list is invalid", method: "tools/list", result: `{"resultType":"input_required","requestState":"s"}`, want: classify.InvalidResult},
		{name: "input_required on 2025-11-25 is read with a warning", protocol: classify.Protocol2025, result: `{"resultType":"input_required","requestState":"s"}`,
			want: classify.InputRequired, warnings: []string{classify.WarnInputRequired2025}},
		{name: "task with the tasks extension", extensions: []string{classify.TasksExtension}, result: `{"resultType":"task","taskId":"t1","status":"working"}`, want: classify.TaskCreated},
		{name: "task with the extension but no taskId", extensions: []string{classify.TasksExtension}, result: `{"resultType":"task","status":"working"}`, want: classify.InvalidToolResult},
		{name: "task without the tasks extension", result: `{"resultType":"task","taskId":"t1","status":"working"}`, want: classify.InvalidToolResult},
		{name: "task without the extension even with valid content", result: `{"resultType":"task",` + content + `}`, want: classify.InvalidToolResult},
		{name: "task on prompts/get", method: "prompts/get", extensions: []string{classify.TasksExtension}, result: `{"resultType":"task","taskId":"t1","status":"working"}`, want: classify.InvalidResult},
		{name: "unknown resultType partial", result: `{"resultType":"partial",` + content + `}`, want: classify.InvalidToolResult},
		{name: "resultType is case-sensitive", result: `{"resultType":"Complete",` + content + `}`, want: classify.InvalidToolResult},
		{name: "empty resultType", result: `{"resultType":"",` + content + `}`, want: classify.InvalidToolResult},
		{name: "outcome name as resultType", result: `{"resultType":"INPUT_REQUIRED","requestState":"s"}`, want: classify.InvalidToolResult},
		{name: "unknown resultType on 2025-11-25", protocol: classify.Protocol2025, result: `{"resultType":"partial",` + content + `}`, want: classify.InvalidToolResult},
		{name: "unknown resultType on tools/list", method: "tools/list", result: `{"resultType":"partial","tools":[]}`, want: classify.InvalidResult},
		{name: "complete on tools/list", method: "tools/list", result: `{"resultType":"complete","tools":[]}`, want: classify.ResultSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, protocol := tt.method, tt.protocol
			if method == "" {
				method = "tools/call"
			}
			if protocol == "" {
				protocol = classify.Protocol2026
			}
			r, err := classify.Classify(&classify.Exchange{
				Method:          method,
				ID:              wire.IntID(1),
				ProtocolVersion: protocol,
				Extensions:      tt.extensions,
				Status:          http.StatusOK,
				Header:          http.Header{"Content-Type": {"application/json"}},
				BodyBytes:       []byte(`{"jsonrpc":"2.0","id":1,"result":` + tt.result + `}`),
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != tt.want {
				t.Fatalf("got %s (%s), want %s", r.Outcome, r.Reason, tt.want)
			}
			for _, w := range tt.warnings {
				if !r.HasWarning(w) {
					t.Errorf("warning %s missing: %+v", w, r.Warnings())
				}
			}
		})
	}
}

// --- the corpus ---

// seedDoc is a starting document and where it came from.
type seedDoc struct {
	origin string
	doc    any
}

// loadSeeds returns the spec examples of one type plus the hand-written seeds
// in testdata/differential/dir.
func loadSeeds(t *testing.T, exampleDir, dir string) []seedDoc {
	t.Helper()
	var seeds []seedDoc
	for _, root := range []string{specPath(t, "2026-07-28", "examples", exampleDir), filepath.Join("testdata", "differential", dir)} {
		files, err := filepath.Glob(filepath.Join(root, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no seed files in %s", root)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, seedDoc{filepath.ToSlash(f), decodeJSON(t, raw)})
		}
	}
	return seeds
}

// decodeJSON decodes raw keeping numbers as json.Number, the form the schema
// validator compares exactly.
func decodeJSON(t testing.TB, raw []byte) any {
	t.Helper()
	v, err := decodeNumbers(raw)
	if err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// decodeNumbers decodes one JSON value with numbers as json.Number.
func decodeNumbers(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// corpusCase is one generated document, decoded and as JSON text.
type corpusCase struct {
	origin string
	doc    any
	body   []byte
}

// pathStep is one element of a path: an object key (string) or an array index
// (int).
type pathStep = any

// docMutation changes the value at a path: drops it, or sets it (adding the
// member when the parent object lacks it).
type docMutation struct {
	path []pathStep
	drop bool
	val  any
}

// String describes the mutation for a case's origin.
func (m docMutation) String() string {
	var b strings.Builder
	for _, s := range m.path {
		fmt.Fprintf(&b, "/%v", s)
	}
	if m.drop {
		return "drop " + b.String()
	}
	v, _ := json.Marshal(m.val)
	return fmt.Sprintf("set %s=%s", b.String(), v)
}

// apply returns a mutated copy of doc, or false when the path is gone.
func (m docMutation) apply(doc any) (any, bool) {
	doc = cloneJSON(doc)
	parent := doc
	for _, s := range m.path[:len(m.path)-1] {
		var ok bool
		if parent, ok = jsonChild(parent, s); !ok {
			return nil, false
		}
	}
	last := m.path[len(m.path)-1]
	switch p := parent.(type) {
	case map[string]any:
		key, ok := last.(string)
		if !ok {
			return nil, false
		}
		if m.drop {
			if _, has := p[key]; !has {
				return nil, false
			}
			delete(p, key)
		} else {
			p[key] = cloneJSON(m.val)
		}
	case []any:
		i, ok := last.(int)
		if !ok || i >= len(p) {
			return nil, false
		}
		if m.drop {
			// Arrays are shared with their parent: rebuild and re-link.
			return docMutation{path: m.path[:len(m.path)-1], val: slices.Delete(slices.Clone(p), i, i+1)}.apply(doc)
		}
		p[i] = cloneJSON(m.val)
	default:
		return nil, false
	}
	return doc, true
}

// child returns the member or element s of v.
func jsonChild(v any, s pathStep) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		k, ok := s.(string)
		if !ok {
			return nil, false
		}
		c, has := x[k]
		return c, has
	case []any:
		i, ok := s.(int)
		if !ok || i >= len(x) {
			return nil, false
		}
		return x[i], true
	}
	return nil, false
}

// member returns the member key of doc when doc is an object.
func jsonMember(doc any, key string) (any, bool) {
	return jsonChild(doc, key)
}

// cloneJSON deep-copies a decoded JSON value.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = cloneJSON(e)
		}
		return a
	}
	return v
}

// mutationContexts gives, per context, the values a mutation may set and the
// members it may add. A value's context is its member name, "name[]" for an
// element of an array member, and "name{}" for a member of a map-like object
// (inputRequests, _meta).
type mutationContexts struct {
	values map[string][]string // JSON texts
	adds   map[string][]string // context of an object -> member names to add
}

// genericValues are set everywhere: one of each JSON type.
var genericValues = []string{`null`, `true`, `0`, `1.5`, `""`, `"x"`, `[]`, `{}`, `[1]`, `{"a":1}`}

// contentValues are shared by both corpora (content blocks, _meta, numbers).
var contentValues = map[string][]string{
	"type":                               {`"text"`, `"image"`, `"audio"`, `"resource_link"`, `"resource"`, `"video"`, `"TEXT"`, `"tool_use"`},
	"text":                               {`"hello"`, `5`},
	"data":                               {`"aGVsbG8="`, `"!!not base64!!"`, `""`},
	"blob":                               {`"aGVsbG8="`, `"!!not base64!!"`},
	"mimeType":                           {`"image/png"`, `5`},
	"uri":                                {`"https://example.com/a"`, `"file:///tmp/a"`, `"not a uri"`, `"relative/path"`},
	"name":                               {`"a.txt"`, `7`},
	"title":                              {`"Title"`, `7`},
	"description":                        {`"About"`, `false`},
	"size":                               {`0`, `1024`, `1e3`, `2.0`, `1.5`, `-3`, `1e400`, `"12"`},
	"icons":                              {`[{"src":"https://example.com/i.png"}]`, `[{}]`, `[{"src":5}]`, `[{"src":"https://example.com/i.png","theme":"blue"}]`, `[{"src":"https://example.com/i.png","sizes":"48x48"}]`, `[{"src":"not a uri"}]`, `{"src":"https://example.com/i.png"}`, `["https://example.com/i.png"]`},
	"icons[]":                            {`{"src":"https://example.com/i.png","theme":"light"}`, `{"src":"https://example.com/i.png","mimeType":5}`, `{"src":"https://example.com/i.png","sizes":[48]}`},
	"src":                                {`"https://example.com/i.png"`, `"data:image/png;base64,aGVsbG8="`, `"not a uri"`, `5`},
	"theme":                              {`"dark"`, `"light"`, `"blue"`, `5`},
	"sizes":                              {`["48x48","any"]`, `"48x48"`, `[48]`},
	"sizes[]":                            {`"96x96"`, `96`},
	"annotations":                        {`{"audience":["user"],"priority":0.5}`, `{"audience":["bot"]}`, `{"audience":"user"}`, `{"priority":2}`, `{"lastModified":5}`, `[]`},
	"audience":                           {`["assistant","user"]`, `["bot"]`, `"user"`, `[]`, `[5]`},
	"audience[]":                         {`"user"`, `"assistant"`, `"system"`, `5`},
	"priority":                           {`0`, `1`, `0.5`, `1e0`, `-0.1`, `1.1`, `"1"`, `1e400`, `-1e-400`, `1e-400`},
	"lastModified":                       {`"2025-01-12T15:00:58Z"`, `"yesterday"`, `5`},
	"resource":                           {`{"uri":"file:///a","text":"t"}`, `{"uri":"file:///a","blob":"aGVsbG8="}`, `{"uri":"file:///a"}`, `{"text":"t"}`, `{"uri":"file:///a","text":5}`, `{"uri":"file:///a","text":5,"blob":"aGVsbG8="}`, `{"uri":"file:///a","text":"t","_meta":5}`, `{"uri":"file:///a","blob":"aGVsbG8=","mimeType":5}`},
	"_meta":                              {`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`, `{"io.modelcontextprotocol/serverInfo":{"name":"s"}}`, `{"io.modelcontextprotocol/serverInfo":5}`, `{"com.example/k":[1]}`},
	"_meta{}":                            {`{"name":"s","version":"1"}`, `"x"`},
	"io.modelcontextprotocol/serverInfo": {`{"name":"s","version":"1"}`, `{"name":"s"}`, `{"name":"s","version":"1","websiteUrl":"not a uri"}`, `{"name":"s","version":"1","icons":[{}]}`},
	"version":                            {`"1.0"`, `1`},
	"websiteUrl":                         {`"https://example.com"`, `"not a uri"`},
	"resultType":                         {`"complete"`, `5`, `"input_required"`, `"task"`, `"Complete"`},
}

// callToolResultContexts drive the CallToolResult corpus.
var callToolResultContexts = mutationContexts{
	values: withValues(contentValues, map[string][]string{
		"content":           {`"not-an-array"`, `[{"type":"text"}]`, `[{"type":"video","url":"https://example.com/v"}]`, `[{"type":"text","text":"a"},{"type":"widget"}]`, `[{"text":"no type"}]`},
		"content[]":         {`{"type":"text","text":"t"}`, `{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}`, `{"type":"audio","data":"aGVsbG8="}`, `{"type":"resource_link","uri":"https://example.com/a","name":"a","size":1.5}`, `{"type":"resource","resource":{"uri":"file:///a","blob":"aGVsbG8="}}`, `{"type":"video","url":"https://example.com/v"}`, `{"type":"text","text":"t","title":5}`, `{"type":5}`},
		"isError":           {`true`, `false`, `"true"`, `1`},
		"structuredContent": {`[1,2]`, `"s"`, `42`, `{"temperature":22.5}`},
	}),
	adds: map[string][]string{
		"":                                   {"content", "isError", "structuredContent", "_meta", "resultType"},
		"content[]":                          {"annotations", "_meta", "title", "description", "size", "icons", "mimeType", "name", "uri", "text", "data", "resource", "type"},
		"resource":                           {"uri", "text", "blob", "mimeType", "_meta"},
		"annotations":                        {"audience", "priority", "lastModified"},
		"icons[]":                            {"src", "mimeType", "sizes", "theme"},
		"_meta":                              {"io.modelcontextprotocol/serverInfo", "com.example/k"},
		"io.modelcontextprotocol/serverInfo": {"name", "version", "title", "websiteUrl", "icons"},
	},
}

// inputRequiredContexts drive the InputRequiredResult corpus.
var inputRequiredContexts = mutationContexts{
	values: withValues(contentValues, map[string][]string{
		"resultType":        {`"input_required"`, `"complete"`},
		"inputRequests":     {`{}`, `{"r":{"method":"roots/list","params":{}}}`, `{"e":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}}`},
		"inputRequests{}":   {`{"method":"roots/list"}`, `{"method":"roots/list","params":5}`, `{"method":"elicitation/create"}`, `{"method":"elicitation/create","params":{"message":5,"requestedSchema":{"type":"object","properties":{}}}}`, `{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}`, `{"method":"sampling/createMessage","params":{"messages":{}}}`, `{"method":"tools/call","params":{}}`, `{"params":{}}`, `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
		"requestState":      {`"state"`, `""`, `5`, `{"s":1}`},
		"method":            {`"elicitation/create"`, `"sampling/createMessage"`, `"roots/list"`, `"tools/call"`, `"ping"`, `5`},
		"params":            {`{"message":"m","requestedSchema":{"type":"object","properties":{}}}`, `{"mode":"url","message":"m","url":"https://example.com"}`, `{"messages":[],"maxTokens":1}`, `5`, `[]`},
		"message":           {`"Please"`, `5`, `null`},
		"mode":              {`"form"`, `"url"`, `"voice"`, `5`},
		"url":               {`"https://example.com/x"`, `"not a uri"`, `5`},
		"requestedSchema":   {`{"type":"object","properties":{}}`, `{"type":"array"}`, `"schema"`},
		"messages":          {`[]`, `"hi"`, `{}`, `[{"role":"user","content":{"type":"text","text":"q"}}]`, `[{"role":"robot"}]`},
		"maxTokens":         {`100`, `"100"`, `1.5`},
		"structuredContent": {`{}`},
	}),
	adds: map[string][]string{
		"":                                   {"inputRequests", "requestState", "_meta", "resultType", "content"},
		"inputRequests":                      {"added"},
		"inputRequests{}":                    {"method", "params", "jsonrpc"},
		"params":                             {"message", "mode", "url", "requestedSchema", "messages", "maxTokens", "_meta"},
		"_meta":                              {"io.modelcontextprotocol/serverInfo", "com.example/k"},
		"io.modelcontextprotocol/serverInfo": {"name", "version", "websiteUrl"},
	},
}

// withValues merges extra into base (extra wins).
func withValues(base, extra map[string][]string) map[string][]string {
	m := maps.Clone(base)
	maps.Copy(m, extra)
	return m
}

// contextOf names the context of the value at path p (see mutationContexts).
func contextOf(p []pathStep) string {
	if len(p) == 0 {
		return ""
	}
	parentKey := ""
	if len(p) >= 2 {
		parentKey, _ = p[len(p)-2].(string)
	}
	switch last := p[len(p)-1].(type) {
	case int:
		return parentKey + "[]"
	case string:
		if parentKey == "inputRequests" || parentKey == "_meta" && !strings.HasPrefix(last, "io.modelcontextprotocol/") {
			return parentKey + "{}"
		}
		return last
	}
	return ""
}

// firstOrder lists every single mutation of doc: drop each member or
// element, set it to each generic value and each value of its context, and
// add each member its context lists.
func firstOrder(doc any, ctx mutationContexts) []docMutation {
	var out []docMutation
	var walk func(v any, p []pathStep)
	walk = func(v any, p []pathStep) {
		if len(p) > 0 {
			c := contextOf(p)
			out = append(out, docMutation{path: p, drop: true})
			for _, text := range append(slices.Clone(genericValues), ctx.values[c]...) {
				out = append(out, docMutation{path: p, val: mustDecode(text)})
			}
		}
		if len(p) >= 6 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if len(p) > 0 && p[len(p)-1] == "structuredContent" {
				return // any JSON is allowed inside; its shape is not the classifier's business
			}
			for _, name := range ctx.adds[contextOf(p)] {
				if _, has := x[name]; has {
					continue
				}
				np := append(slices.Clone(p), name)
				for _, text := range ctx.values[contextOf(np)] {
					out = append(out, docMutation{path: np, val: mustDecode(text)})
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], append(slices.Clone(p), k))
			}
		case []any:
			for i, e := range x {
				walk(e, append(slices.Clone(p), i))
			}
		}
	}
	walk(doc, nil)
	return out
}

// tableValues caches the decoded table values; docMutation.apply clones them.
var tableValues sync.Map // JSON text -> any

// mustDecode decodes a JSON text from the tables above.
func mustDecode(text string) any {
	if v, ok := tableValues.Load(text); ok {
		return v
	}
	v, err := decodeNumbers([]byte(text))
	if err != nil {
		panic(fmt.Sprintf("bad table value %s: %v", text, err))
	}
	tableValues.Store(text, v)
	return v
}

// buildCorpus returns at most max distinct documents: the seeds, then
// single mutations of each (up to two thirds of max, drawn evenly across seeds
// and, within a seed, in a shuffled order), then compositions of two or three
// mutations. The randomness is math/rand/v2 with a fixed seed, so the corpus
// is the same on every run.
func buildCorpus(seeds []seedDoc, ctx mutationContexts, max int, seed uint64) []corpusCase {
	rng := rand.New(rand.NewPCG(seed, 0x6d6370646961))
	seen := map[string]bool{}
	var out []corpusCase
	add := func(origin string, doc any) {
		b, err := json.Marshal(doc)
		if err != nil || seen[string(b)] {
			return
		}
		seen[string(b)] = true
		out = append(out, corpusCase{origin, doc, b})
	}
	muts := make([][]docMutation, len(seeds))
	for i, s := range seeds {
		add(s.origin, s.doc)
		muts[i] = firstOrder(s.doc, ctx)
		rng.Shuffle(len(muts[i]), func(a, b int) { muts[i][a], muts[i][b] = muts[i][b], muts[i][a] })
	}
	for j, more := 0, true; more && len(out) < max*2/3; j++ {
		more = false
		for i, s := range seeds {
			if j >= len(muts[i]) || len(out) >= max*2/3 {
				continue
			}
			more = true
			if doc, ok := muts[i][j].apply(s.doc); ok {
				add(s.origin+" ; "+muts[i][j].String(), doc)
			}
		}
	}
	for n := 0; n < 4*max && len(out) < max; n++ {
		i := rng.IntN(len(seeds))
		doc, origin := seeds[i].doc, seeds[i].origin
		for k := 0; k < 2+rng.IntN(2); k++ {
			// A mutation whose path an earlier one removed is skipped.
			m := muts[i][rng.IntN(len(muts[i]))]
			if next, ok := m.apply(doc); ok {
				doc, origin = next, origin+" ; "+m.String()
			}
		}
		add(origin, doc)
	}
	return out
}

// --- normalizations of the known disagreements ---

// addResultTypeComplete sets resultType "complete" when it is absent.
func addResultTypeComplete(doc any) (any, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return doc, false
	}
	if _, has := m["resultType"]; has {
		return doc, false
	}
	m["resultType"] = "complete"
	return m, true
}

// knownBlockTypes are the ContentBlock types of both revisions.
var knownBlockTypes = []string{"text", "image", "audio", "resource_link", "resource"}

// dropUnknownBlocks removes content blocks whose type is a string naming no
// known block type.
func dropUnknownBlocks(doc any) (any, bool) {
	content, ok := jsonMember(doc, "content")
	blocks, isArray := content.([]any)
	if !ok || !isArray {
		return doc, false
	}
	kept := blocks[:0:0]
	for _, b := range blocks {
		typ, _ := jsonMember(b, "type")
		if s, isString := typ.(string); isString && !slices.Contains(knownBlockTypes, s) {
			continue
		}
		kept = append(kept, b)
	}
	if len(kept) == len(blocks) {
		return doc, false
	}
	doc.(map[string]any)["content"] = kept
	return doc, true
}

// dropServerInfo removes _meta["io.modelcontextprotocol/serverInfo"].
func dropServerInfo(doc any) (any, bool) {
	meta, _ := jsonMember(doc, "_meta")
	m, ok := meta.(map[string]any)
	if !ok {
		return doc, false
	}
	if _, has := m["io.modelcontextprotocol/serverInfo"]; !has {
		return doc, false
	}
	delete(m, "io.modelcontextprotocol/serverInfo")
	return doc, true
}

// numbersAsFloat64 replaces every number by the float64 a JSON client reads;
// a number beyond float64's range becomes a string, which no number-typed
// field accepts.
func numbersAsFloat64(doc any) (any, bool) {
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil {
				changed = true
				return "non-finite number " + string(x)
			}
			exact, ok := new(big.Rat).SetString(string(x))
			if ok && exact.Cmp(new(big.Rat).SetFloat64(f)) != 0 {
				changed = true
				return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
			}
		}
		return v
	}
	return walk(doc), changed
}

// canonicalInputParams replaces what the classifier does not inspect in the
// params of each input request with valid values, keeping what it does
// inspect (an elicitation's message, whether sampling messages is an array,
// whether params is an object).
func canonicalInputParams(doc any) (any, bool) {
	reqs, _ := jsonMember(doc, "inputRequests")
	m, ok := reqs.(map[string]any)
	if !ok {
		return doc, false
	}
	changed := false
	for _, key := range slices.Sorted(maps.Keys(m)) {
		entry, isObj := m[key].(map[string]any)
		if !isObj {
			continue
		}
		params, isParams := entry["params"].(map[string]any)
		if !isParams {
			continue
		}
		var canon map[string]any
		switch entry["method"] {
		case "elicitation/create":
			canon = map[string]any{"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
			if msg, has := params["message"]; has {
				canon["message"] = msg
			}
		case "sampling/createMessage":
			canon = map[string]any{"maxTokens": json.Number("1")}
			if msgs, has := params["messages"]; has {
				if _, isArray := msgs.([]any); isArray {
					msgs = []any{}
				}
				canon["messages"] = msgs
			}
		case "roots/list":
			canon = map[string]any{}
		default:
			continue
		}
		if !reflect.DeepEqual(canon, params) {
			entry["params"] = canon
			changed = true
		}
	}
	return doc, changed
}

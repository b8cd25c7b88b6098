package classify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// checkInputReadBack reports where the ways of reading r's input requests
// disagree with want: Input, and NumInputRequests, InputRequest and
// HasRequestState (which read the packing in place).
func checkInputReadBack(r *Result, want *InputDetails) string {
	got := r.Input()
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("Input() = %#v, want %#v", got, want)
	}
	if again := r.Input(); !reflect.DeepEqual(again, got) {
		return fmt.Sprintf("Input() read again = %#v, first %#v", again, got)
	}
	state, ok := r.HasRequestState()
	if ok != (want != nil) || want != nil && state != want.HasRequestState {
		return fmt.Sprintf("HasRequestState() = %v, %v; want %v", state, ok, want)
	}
	n := 0
	if want != nil {
		n = len(want.Requests)
	}
	if got := r.NumInputRequests(); got != n {
		return fmt.Sprintf("NumInputRequests() = %d, want %d", got, n)
	}
	for i := range n {
		if q := r.InputRequest(i); q != want.Requests[i] {
			return fmt.Sprintf("InputRequest(%d) = %#v, want %#v", i, q, want.Requests[i])
		}
	}
	return ""
}

// TestSetInputReadsBack: what SetInput is given reads back equal through
// every accessor, nil and empty requests apart, with keys, methods and modes
// of any length and content (uvarint lengths of one, two and three bytes),
// and not changed by a later change of the argument.
func TestSetInputReadsBack(t *testing.T) {
	long := strings.Repeat("k", 200)
	longer := strings.Repeat("é", 9000)
	for _, d := range []*InputDetails{
		{},
		{HasRequestState: true},
		{Requests: []InputRequest{}},
		{Requests: []InputRequest{{}}},
		{Requests: []InputRequest{{Key: "approval", Method: "elicitation/create", Mode: "form"}}, HasRequestState: true},
		{Requests: []InputRequest{{Key: "u", Method: "elicitation/create", Mode: "url"}, {Key: "s", Method: "sampling/createMessage"}}},
		{Requests: []InputRequest{{Key: "a", Method: "roots/list"}, {Key: "a", Method: "roots/list"}, {Key: "", Method: "tools/call", Mode: "x"}}},
		{Requests: []InputRequest{{Key: long, Method: long, Mode: long}, {Key: longer, Method: "elicitation/create", Mode: longer}}},
		{Requests: []InputRequest{{Key: "año\x00\"\\", Method: "elicitation/create", Mode: "Form"}, {Key: "日本", Method: "ROOTS/LIST", Mode: "form "}}},
	} {
		want := clone(d)
		var r Result
		r.SetInput(d)
		if d.Requests != nil && len(d.Requests) > 0 {
			d.Requests[0].Key += "changed"
		}
		d.HasRequestState = !d.HasRequestState
		if msg := checkInputReadBack(&r, want); msg != "" {
			t.Errorf("SetInput(%.80v): %s", want, msg)
		}
	}
	var r Result
	r.SetInput(&InputDetails{HasRequestState: true})
	r.SetInput(nil)
	if msg := checkInputReadBack(&r, nil); msg != "" {
		t.Errorf("SetInput(nil) after details: %s", msg)
	}
}

// clone returns a deep copy of d.
func clone(d *InputDetails) *InputDetails {
	c := *d
	if d.Requests != nil {
		c.Requests = append([]InputRequest{}, d.Requests...)
	}
	return &c
}

// inputKeys are spellings of input request keys: escapes of every kind,
// non-ASCII as it is and escaped, a lone surrogate, and a key longer than
// a one-byte length. Keys that decode to the same string repeat one key.
var inputKeys = []string{
	`"approval"`, `"a"`, `"\u0061"`, `""`, `"año"`, `"a\u00f1o"`, `"日本"`, `"\ud83d\ude00"`, `"😀"`,
	`"line\nbreak"`, `"quote\"d"`, `"back\\slash"`, `"sl\/ash"`, `"\ud800"`, `"tab\t"`,
	`"` + strings.Repeat("long", 40) + `"`,
}

// randomInputBody returns a tools/call response whose result is an
// input_required result with random input requests: up to 12 (the fast
// path reads up to 4), keys from inputKeys (duplicates included), members
// in random order, the three methods with the params each needs, modes
// absent, usual, other and escaped, and requestState or not (at least one
// of the two, as the spec requires).
func randomInputBody(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"`)
	n := rng.IntN(13)
	state := n == 0 || rng.IntN(2) == 0
	withRequests := n > 0 || rng.IntN(2) == 0
	if withRequests {
		b.WriteString(`,"inputRequests":{`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(inputKeys[rng.IntN(len(inputKeys))])
			b.WriteString(":")
			var members []string
			switch rng.IntN(3) {
			case 0:
				members = append(members, `"method":"elicitation/create"`)
				params := []string{`"message":"m` + fmt.Sprint(i) + `"`}
				switch rng.IntN(6) {
				case 1:
					params = append(params, `"mode":"form"`)
				case 2:
					params = append(params, `"mode":"url"`, `"url":"https://example.com/x"`)
				case 3:
					params = append(params, `"mode":"f\u006frm"`)
				case 4:
					params = append(params, `"mode":"custom-`+fmt.Sprint(i)+`"`)
				case 5:
					params = append(params, `"mode":""`)
				}
				rng.Shuffle(len(params), func(i, j int) { params[i], params[j] = params[j], params[i] })
				members = append(members, `"params":{`+strings.Join(params, ",")+`}`)
			case 1:
				members = append(members, `"method":"sampling/createMessage"`, `"params":{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":5}`)
			default:
				members = append(members, `"method":"roots/list"`)
				if rng.IntN(2) == 0 {
					members = append(members, `"params":{}`)
				}
			}
			rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
			b.WriteString("{" + strings.Join(members, ",") + "}")
		}
		b.WriteString("}")
	}
	if state {
		b.WriteString(`,"requestState":"s` + fmt.Sprint(rng.IntN(100)) + `"`)
	}
	b.WriteString("}}")
	return b.String()
}

// inputRequestsByEncodingJSON decodes body's result.inputRequests with
// encoding/json, in document order and with repeated keys each kept (a map
// would keep one), as InputDetails: the oracle for the classifier's.
func inputRequestsByEncodingJSON(body []byte) (*InputDetails, error) {
	var doc struct {
		Result struct {
			InputRequests json.RawMessage  `json:"inputRequests"`
			RequestState  *json.RawMessage `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the body: %w", err)
	}
	d := &InputDetails{Requests: []InputRequest{}, HasRequestState: doc.Result.RequestState != nil}
	if doc.Result.InputRequests == nil {
		return d, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc.Result.InputRequests))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("inputRequests: %v %v", tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("a key: %w", err)
		}
		var req struct {
			Method string `json:"method"`
			Params struct {
				Mode *string `json:"mode"`
			} `json:"params"`
		}
		if err := dec.Decode(&req); err != nil {
			return nil, fmt.Errorf("a request: %w", err)
		}
		q := InputRequest{Key: tok.(string), Method: req.Method}
		if req.Method == "elicitation/create" {
			q.Mode = "form"
			if req.Params.Mode != nil {
				q.Mode = *req.Params.Mode
			}
		}
		d.Requests = append(d.Requests, q)
	}
	return d, nil
}

// TestInputRequestsMatchEncodingJSON: for random input_required bodies, the
// input requests read back from the verdict (every accessor; Classify on
// the fast and the general path, ClassifyInto into a Result reused across
// the bodies, and the body as an SSE event) equal those encoding/json
// decodes from the same body. The bodies are checked to reach both paths,
// and requests of one, two and more, so that no part of the packing goes
// untested.
func TestInputRequestsMatchEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2026))
	fast, slow := &Classifier{}, &Classifier{noFastPath: true}
	var into Result
	seen := map[string]int{}
	for i := range 3000 {
		body := []byte(randomInputBody(rng))
		want, err := inputRequestsByEncodingJSON(body)
		if err != nil {
			t.Fatalf("body %d %s: %v", i, body, err)
		}
		ex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: body, ID: wire.IntID(1)}
		var f fastFacts
		tookFast := fast.fastScan(ex, body, false, "tools/call", Protocol2026, &f) && f.kind == fastInput
		seen[fmt.Sprintf("fast=%v", tookFast)]++
		seen[fmt.Sprintf("requests=%d", min(len(want.Requests), 3))]++
		events := append(append([]byte("data: "), body...), "\n\n"...)
		for _, tc := range []struct {
			name     string
			classify func() (*Result, error)
		}{
			{"Classify", func() (*Result, error) { return fast.Classify(ex) }},
			{"general path", func() (*Result, error) { return slow.Classify(ex) }},
			{"ClassifyInto", func() (*Result, error) { return &into, fast.ClassifyInto(ex, &into) }},
			{"event", func() (*Result, error) {
				return fast.Classify(&Exchange{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, BodyBytes: events, ID: wire.IntID(1)})
			}},
		} {
			r, err := tc.classify()
			if err != nil || r.Outcome != InputRequired {
				t.Fatalf("%s of %s: %s (%s), %v", tc.name, body, r.Outcome, r.Reason, err)
			}
			if msg := checkInputReadBack(r, want); msg != "" {
				t.Fatalf("%s of %s: %s", tc.name, body, msg)
			}
		}
	}
	for _, k := range []string{"fast=true", "fast=false", "requests=0", "requests=1", "requests=2", "requests=3"} {
		if seen[k] < 50 {
			t.Errorf("only %d bodies with %s: %v", seen[k], k, seen)
		}
	}
}

// TestInputConcurrentReaders: readers of one verdict's input requests on
// many goroutines at once see the same values (go test -race: reading
// writes nothing).
func TestInputConcurrentReaders(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b\u00f1":{"method":"elicitation/create","params":{"message":"m","mode":"x"}}},"requestState":"s"}}`
	ex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(body), ID: wire.IntID(1)}
	r, err := (&Classifier{}).Classify(ex)
	if err != nil {
		t.Fatal(err)
	}
	want, err := inputRequestsByEncodingJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if msg := checkInputReadBack(r, want); msg != "" {
					errs <- msg
					return
				}
				if _, err := json.Marshal(r); err != nil {
					errs <- err.Error()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

// FuzzInputRequests: input requests made of any strings, encoded by
// encoding/json into a body, read back from the verdict equal to what
// encoding/json decodes from it (and when SetInput is given them, equal
// to them).
func FuzzInputRequests(f *testing.F) {
	f.Add("approval", "k2", "k3", "form", uint8(0), true)
	f.Add("a", "a", "", "url", uint8(0x1b), false)
	f.Add("año", "\xed\xa0\x80", "\x00", "", uint8(0x26), true)
	f.Add(strings.Repeat("x", 130), "<&>", "\u2028", "custom", uint8(0xff), false)
	f.Fuzz(func(t *testing.T, k1, k2, k3, mode string, shape uint8, state bool) {
		methods := []string{"elicitation/create", "sampling/createMessage", "roots/list"}
		n := int(shape>>6) % 4
		var reqs []string
		for i, k := range []string{k1, k2, k3}[:n] {
			m := methods[int(shape>>(2*i))&3%3]
			key, err := json.Marshal(k)
			if err != nil {
				t.Fatal(err)
			}
			req := `{"method":"` + m + `"}`
			switch m {
			case "elicitation/create":
				md, _ := json.Marshal(mode)
				req = `{"method":"` + m + `","params":{"message":"m","mode":` + string(md) + `}}`
			case "sampling/createMessage":
				req = `{"method":"` + m + `","params":{"messages":[]}}`
			}
			reqs = append(reqs, string(key)+":"+req)
		}
		body := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{` + strings.Join(reqs, ",") + `}`
		if state {
			body += `,"requestState":"s"`
		}
		body += "}}"
		want, err := inputRequestsByEncodingJSON([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		ex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(body), ID: wire.IntID(1)}
		for _, c := range []*Classifier{{}, {noFastPath: true}} {
			r, err := c.Classify(ex)
			if err != nil || r.Outcome != InputRequired {
				t.Fatalf("%s: %s (%s), %v", body, r.Outcome, r.Reason, err)
			}
			if msg := checkInputReadBack(r, want); msg != "" {
				t.Fatalf("%s: %s", body, msg)
			}
		}
		d := &InputDetails{HasRequestState: state, Requests: []InputRequest{{Key: k1, Method: k2, Mode: mode}, {Key: k3, Method: methods[int(shape)%3]}}}
		var r Result
		r.SetInput(d)
		if msg := checkInputReadBack(&r, clone(d)); msg != "" {
			t.Fatalf("SetInput: %s", msg)
		}
	})
}

package classify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpdiag/mcpdiag/wire"
)

// The properties of issue 10 that make whole classes of wrong verdicts
// impossible, checked on every golden case here and on every fuzz input in
// FuzzClassify and FuzzFastPath:
//
//   - echo: every field that echoes the request or the response (method,
//     protocol, status, content type, the response id with its JSON type)
//     equals it;
//   - appending valid events after the terminal response changes nothing
//     but warnings and counters;
//   - chunking is invisible: one read, 1-byte reads and seeded random
//     chunks give the identical verdict.

// seededReader returns at most a random 1..max bytes per Read, from a
// seeded source, so that a failure replays.
type seededReader struct {
	r   io.Reader
	rng *rand.Rand
	max int
}

func (s *seededReader) Read(p []byte) (int, error) {
	n := 1 + s.rng.IntN(s.max)
	if len(p) > n {
		p = p[:n]
	}
	return s.r.Read(p)
}

// chunkings are the ways the same bytes arrive.
func chunkings(seed uint64) []struct {
	name string
	wrap func(io.Reader) io.Reader
} {
	return []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"one read", func(r io.Reader) io.Reader { return r }},
		{"1-byte reads", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
		{"random chunks", func(r io.Reader) io.Reader { return &seededReader{r: r, rng: rand.New(rand.NewPCG(seed, 7)), max: 61} }},
	}
}

// verdict is the comparable form of a result: the JSON a user sees, the
// kept response, and the error.
func verdict(r *Result, err error) string {
	b, merr := json.Marshal(r)
	if merr != nil {
		return "marshal: " + merr.Error()
	}
	e := ""
	if err != nil {
		e = err.Error()
	}
	return fmt.Sprintf("%s response=%q err=%q", b, r.Response(), e)
}

// afterTerminal are valid events to append after a terminal response:
// responses for other ids (and a late one for the same id), notifications,
// requests and comments, with members in any order ("method" first too).
var afterTerminal = []string{
	`data: {"jsonrpc":"2.0","id":777,"result":{}}` + "\n\n",
	`data: {"method":"notifications/message","jsonrpc":"2.0","params":{"level":"info","data":"after"}}` + "\n\n",
	": keep-alive\n\n",
	`data: {"method":"ping","id":"srv-1","jsonrpc":"2.0"}` + "\n\n",
	`data: {"error":{"code":-32603,"message":"late"},"id":1,"jsonrpc":"2.0"}` + "\n\n",
	"event: message\r\nid: 9\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":2}}\r\n\r\n",
	`data: {"result":{"content":[{"type":"text","text":"` + strings.Repeat("z", 300) + `"}]},"jsonrpc":"2.0","id":"x"}` + "\n\n",
	"data: not json at all\n\n",
}

// afterTerminalIDs are the ids of the responses among afterTerminal ("" for
// an event that is no response): a terminal response with one of them is
// answered a second time (second-response).
var afterTerminalIDs = []string{`777`, "", "", "", `1`, "", `"x"`, ""}

// withoutCounters is the verdict without the fields that appending events
// may change: warnings and the counters of events, comments and bytes.
func withoutCounters(r *Result) string {
	c := *r
	c.SetWarnings(nil)
	c.BodyBytes = 0
	if r.SSE() != nil {
		s := *r.SSE()
		s.Events, s.AfterTerminal, s.Comments, s.Skipped = 0, 0, 0, 0
		c.SetSSE(&s)
	}
	return verdict(&c, nil)
}

// checkEcho checks the fields of r that echo the exchange and the body:
// method, protocol, status and content type equal the exchange's, and the
// response id equals the id member of the message that decided (decoded
// independently with encoding/json), with its JSON type.
func checkEcho(t *testing.T, ex *Exchange, body []byte, r *Result) {
	t.Helper()
	wantMethod, wantProto := ex.Method, ex.ProtocolVersion
	if wantMethod == "" {
		wantMethod = "tools/call"
	}
	if wantProto == "" {
		wantProto = Protocol2026
	}
	if r.Method() != wantMethod || r.Protocol() != wantProto {
		t.Errorf("method %q protocol %q, want %q %q", r.Method(), r.Protocol(), wantMethod, wantProto)
	}
	if ex.Err == nil && r.Status != ex.Status {
		t.Errorf("status %d, want %d", r.Status, ex.Status)
	}
	if ct := ex.Header.Get("Content-Type"); ex.Err == nil && r.ContentType() != ct {
		t.Errorf("content type %q, want %q", r.ContentType(), ct)
	}
	if r.Layer() != r.Outcome.Layer() || r.Layer() == "" {
		t.Errorf("outcome %s in layer %q", r.Outcome, r.Layer())
	}
	checkWarningReaders(t, r)
	if r.JSONRPC() == nil {
		return
	}
	msg := bytes.TrimSpace(body)
	if r.SSE() != nil {
		msg = nil
		if r.SSE().TerminalEvent > 0 {
			msg = nthEvent(body, r.SSE().TerminalEvent)
		}
	}
	if msg == nil {
		return
	}
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &env) != nil {
		return
	}
	want := string(env.ID)
	if want == "" {
		want = "null"
	}
	got, _ := json.Marshal(r.JSONRPC().ID)
	if string(got) != want {
		t.Errorf("jsonrpc.id %s, want %s (the response's id, with its type)", got, want)
	}
	if r.JSONRPC().ID.IsString() != (len(env.ID) > 0 && env.ID[0] == '"') {
		t.Errorf("jsonrpc.id %s lost its JSON type (%s)", got, env.ID)
	}
}

// nthEvent returns the data of the n-th (1-based) dispatched event of body.
func nthEvent(body []byte, n int) []byte {
	rd := wire.NewSSEReader(bytes.NewReader(body), 1<<30)
	for i := 1; ; i++ {
		ev, err := rd.Next()
		var sk *wire.SkippedEventError
		if errors.As(err, &sk) {
			continue
		}
		if err != nil {
			return nil
		}
		if i == n {
			return bytes.Clone(ev.Data)
		}
	}
}

// splitCapture returns the body of a golden capture (after the first blank
// line), for the echo check.
func splitCapture(raw []byte) []byte {
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		return raw[i+4:]
	}
	if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
		return raw[i+2:]
	}
	return nil
}

// classifyCapture reads a golden capture through chunk and classifies it.
func classifyCapture(t *testing.T, gc goldenCase, raw []byte, chunk func(io.Reader) io.Reader) (*Exchange, []byte, string, *Result) {
	t.Helper()
	resp, err := wire.ReadRawResponse(chunk(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ex := exchangeFor(t, gc)
	ex.Status, ex.Header, ex.Body = resp.Status, resp.Header, chunk(bytes.NewReader(body))
	r, cerr := classifierFor(t, gc).Classify(ex)
	return ex, body, verdict(r, cerr) + fmt.Sprintf(" notes=%q", resp.Notes), r
}

// TestGoldenProperties checks the three properties on every golden case.
func TestGoldenProperties(t *testing.T) {
	for _, gc := range loadGolden(t) {
		if gc.exchange["network"] != "" {
			continue
		}
		t.Run(gc.name, func(t *testing.T) {
			if raw, err := wire.ReadRawResponse(bytes.NewReader(gc.response)); err == nil {
				if _, err := io.ReadAll(raw.Body); errors.As(err, new(*wire.ShortBodyError)) {
					t.Skip("the body is cut before its Content-Length: its bytes alone are not the response (TestGoldenFromCapture and TestGoldenOverSocket judge it)")
				}
			}
			var ref string
			for _, c := range chunkings(uint64(len(gc.name))) {
				ex, body, got, r := classifyCapture(t, gc, gc.response, c.wrap)
				checkEcho(t, ex, body, r)
				if ref == "" {
					ref = got
				} else if got != ref {
					t.Fatalf("%s gives another verdict:\n%s\nwant\n%s", c.name, got, ref)
				}
			}
			_, _, _, base := classifyCapture(t, gc, gc.response, chunkings(0)[0].wrap)
			if base.SSE() == nil || !base.SSE().Terminal || base.SSE().Unterminated || base.SSE().End != "eof" {
				return
			}
			for i := range afterTerminal {
				// The first i+1 events, each after a blank line in case the
				// stream ended inside a field line.
				extra := "\n" + strings.Join(afterTerminal[:i+1], "")
				for _, c := range chunkings(uint64(i)) {
					ex, body, _, r := classifyCapture(t, gc, append(bytes.Clone(gc.response), extra...), c.wrap)
					checkEcho(t, ex, body, r)
					if got, want := withoutCounters(r), withoutCounters(base); got != want {
						t.Fatalf("appending %d event(s) after the response (%s) changed the verdict:\n%s\nwant\n%s", i+1, c.name, got, want)
					}
					checkAddedWarnings(t, base, r, i+1)
				}
			}
		})
	}
}

// checkAddedWarnings: appending the first n afterTerminal events to the
// response classified as base only adds warnings to base's (which keep
// their order), and names a second response (second-response) exactly
// when one of them is a response with base's response id.
func checkAddedWarnings(t *testing.T, base, r *Result, n int) {
	t.Helper()
	bw := base.Warnings()
	var added []Warning
	k := 0
	for _, w := range r.Warnings() {
		if k < len(bw) && w == bw[k] {
			k++
			continue
		}
		added = append(added, w)
	}
	if k != len(bw) {
		t.Fatalf("appending %d event(s): warnings %+v lack the response's %+v", n, r.Warnings(), bw)
	}
	want := false
	if d := base.JSONRPC(); d != nil && !d.ID.IsNull() && !base.HasWarning(WarnSecondResponse) {
		for _, id := range afterTerminalIDs[:n] {
			want = want || id != "" && wire.IDFromRaw([]byte(id)).Equal(d.ID)
		}
	}
	if got := slices.ContainsFunc(added, func(w Warning) bool { return w.Code == WarnSecondResponse }); got != want {
		t.Fatalf("appending %d event(s) after the response with id %v: second-response named %v, want %v: %+v", n, base.JSONRPC(), got, want, added)
	}
	for _, w := range added {
		if w.Code != WarnMessageAfterTerminal && w.Code != WarnSecondResponse {
			t.Fatalf("appending %d event(s) added warning %+v", n, w)
		}
	}
}

// checkWarningReaders: NumWarnings and Warning read the warnings Warnings
// returns, in its order, and HasWarning finds each of their codes (a
// warning kept inside the Result, legacy18, and those in extra).
func checkWarningReaders(t *testing.T, r *Result) {
	t.Helper()
	w := r.Warnings()
	if r.NumWarnings() != len(w) {
		t.Fatalf("NumWarnings %d, Warnings %d: %+v", r.NumWarnings(), len(w), w)
	}
	for i := range w {
		if r.Warning(i) != w[i] || !r.HasWarning(w[i].Code) {
			t.Fatalf("warning %d: Warning %+v, Warnings %+v (HasWarning %v)", i, r.Warning(i), w[i], r.HasWarning(w[i].Code))
		}
	}
}

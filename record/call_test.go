package record

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

func TestCallPolicyRetry(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	call := NewCall(Record{Client: "c@1", Scenario: "transport.http_503_then_200"})
	ex1 := &Record{HTTPMethod: "POST", Time: t0, Status: 503, Outcome: classify.HTTPError, Layer: classify.LayerTransport,
		Method: "tools/call", Tool: "echo", ArgsHash: "sha256:a", JSONRPC: JSONRPC{ID: wire.IntID(1)},
		Timings: Timings{Total: Duration(10 * time.Millisecond)}, Decision: &Decision{Action: "retry", DelayMs: 200}}
	call.Add(ex1)
	ex2 := &Record{HTTPMethod: "POST", Time: t0.Add(300 * time.Millisecond), Status: 200, RetryOrigin: OriginPolicy,
		Outcome: classify.ToolSuccess, Layer: classify.LayerApplication, ResultType: "complete", Method: "tools/call",
		JSONRPC: JSONRPC{ID: wire.IntID(2)}, Timings: Timings{Total: Duration(20 * time.Millisecond)}}
	call.Add(ex2)
	if ex1.Kind != KindExchange || ex1.CallID != call.ID() || ex1.Seq != 1 || ex1.PostCount != 1 || fmt.Sprint(ex1.HTTPStatuses) != "[503]" ||
		ex1.Client != "c@1" || ex1.Scenario != "transport.http_503_then_200" {
		t.Errorf("ex1: %+v", ex1)
	}
	if ex2.Seq != 2 || ex2.PostCount != 2 || fmt.Sprint(ex2.HTTPStatuses) != "[503 200]" {
		t.Errorf("ex2: %+v", ex2)
	}
	s := call.Summary()
	if s.Kind != KindCall || s.ID != call.ID() || s.PostCount != 2 || fmt.Sprint(s.HTTPStatuses) != "[503 200]" ||
		s.Exchanges != 2 || s.RetryOrigin != OriginPolicy || s.PolicyRetries != 1 || s.Outcome != classify.ToolSuccess ||
		s.ResultType != "complete" || s.Tool != "echo" || s.ArgsHash != "sha256:a" || s.JSONRPC.ID.String() != "2" ||
		!s.Time.Equal(t0) || time.Duration(s.Timings.Total) != 320*time.Millisecond || s.Decision.Action != "retry" {
		t.Errorf("summary: %+v", s)
	}
	// The summary is a copy.
	s.HTTPStatuses[0] = 0
	if call.Summary().HTTPStatuses[0] != 503 {
		t.Error("Summary shares its slice")
	}
}

func TestCallOrigins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		attemptOf string
		origins   []RetryOrigin
		methods   []string
		want      RetryOrigin
		posts     int
	}{
		{"single", "", []RetryOrigin{""}, nil, OriginNone, 1},
		{"mrtr", "", []RetryOrigin{"", OriginMRTR, OriginMRTR}, nil, OriginMRTR, 3},
		{"policy beats mrtr", "", []RetryOrigin{"", OriginMRTR, OriginPolicy}, nil, OriginPolicy, 3},
		{"user beats all", "01PREVIOUS", []RetryOrigin{"", OriginPolicy}, nil, OriginUser, 2},
		{"get is not a post", "", []RetryOrigin{"", ""}, []string{"POST", "GET"}, OriginNone, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := NewCall(Record{AttemptOf: tt.attemptOf})
			var first *Record
			for i, o := range tt.origins {
				ex := &Record{RetryOrigin: o, Status: 200}
				if tt.methods != nil {
					ex.HTTPMethod = tt.methods[i]
				}
				call.Add(ex)
				if i == 0 {
					first = ex
				}
			}
			s := call.Summary()
			if s.RetryOrigin != tt.want || s.PostCount != tt.posts {
				t.Errorf("retryOrigin %q postCount %d, want %q %d", s.RetryOrigin, s.PostCount, tt.want, tt.posts)
			}
			if tt.attemptOf != "" && (first.RetryOrigin != OriginUser || s.AttemptOf != tt.attemptOf) {
				t.Errorf("first exchange of a repeated call has origin %q", first.RetryOrigin)
			}
		})
	}
}

// TestCallTerminalAndIdentity: with the call's method named up front, the
// summary's id and arguments hash are its first tools/call's (not
// initialize's), and the verdict is the exchange Terminal names, whatever
// comes after it (the 202 to an answer posted on 2025-11-25).
func TestCallTerminalAndIdentity(t *testing.T) {
	t.Parallel()
	call := NewCall(Record{Method: "tools/call"})
	exs := []*Record{
		{Method: "initialize", ArgsHash: "sha256:init", JSONRPC: JSONRPC{ID: wire.IntID(1)}, Status: 200, Outcome: classify.ResultSuccess, Session: "s1"},
		{Method: "tools/call", Tool: "approve", ArgsHash: "sha256:call", JSONRPC: JSONRPC{ID: wire.IntID(4)}, Status: 200,
			Outcome: classify.ToolError, Layer: classify.LayerApplication, ContentType: "text/event-stream", Decision: &Decision{Action: "surface-to-model"}},
		{Method: "elicitation/create", ClientAnswer: true, JSONRPC: JSONRPC{ID: wire.StringID("srv-1")}, Status: 202,
			Outcome: classify.ResultSuccess, Layer: classify.LayerApplication, RetryOrigin: OriginMRTR},
	}
	for i, ex := range exs {
		call.Add(ex)
		if i == 1 {
			call.Terminal(ex)
		}
	}
	s := call.Summary()
	if s.Method != "tools/call" || s.Tool != "approve" || s.ArgsHash != "sha256:call" || s.JSONRPC.ID.String() != "4" || s.Session != "s1" {
		t.Errorf("identity %s %s %s id %s session %s, want the tools/call's", s.Method, s.Tool, s.ArgsHash, s.JSONRPC.ID, s.Session)
	}
	if s.Outcome != classify.ToolError || s.Layer != classify.LayerApplication || s.Status != 200 || s.ContentType != "text/event-stream" || s.Decision.Action != "surface-to-model" {
		t.Errorf("verdict %s/%s %d %q %+v, want the terminal tools/call's", s.Outcome, s.Layer, s.Status, s.ContentType, s.Decision)
	}
	if s.PostCount != 3 || fmt.Sprint(s.HTTPStatuses) != "[200 200 202]" {
		t.Errorf("counters %d %v still count every exchange", s.PostCount, s.HTTPStatuses)
	}
}

// TestCallIDsAreOneAttempts: the call line's id and responseId are those of
// the attempt whose verdict it carries. With the first attempt's id beside
// the last attempt's responseId, a retry answered with a stale id read "id 2,
// responseId 2" (no mismatch) next to INVALID_ENVELOPE, and one answered
// id+1 read "id 2, responseId 5" of a request sent as 4.
func TestCallIDsAreOneAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		answered           wire.ID
		wantID, wantAnswer string
	}{
		{"stale answer", wire.IntID(2), "4", "2"},
		{"answer id+1", wire.IntID(5), "4", "5"},
		{"string id answered", wire.StringID("4"), "4", `"4"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := NewCall(Record{Client: "c@1", Method: "tools/call"})
			call.Add(&Record{HTTPMethod: "POST", Method: "initialize", JSONRPC: JSONRPC{ID: wire.IntID(1)}, Status: 200})
			call.Add(&Record{HTTPMethod: "POST", Method: "tools/call", Tool: "echo", Status: 200,
				JSONRPC: JSONRPC{ID: wire.IntID(2), ResponseID: wire.IntID(3)}, Outcome: classify.InvalidEnvelope,
				Decision: &Decision{Action: "retry"}})
			call.Add(&Record{HTTPMethod: "POST", Method: "tools/call", Tool: "echo", Status: 200, RetryOrigin: OriginPolicy,
				JSONRPC: JSONRPC{ID: wire.IntID(4), ResponseID: tc.answered}, Outcome: classify.InvalidEnvelope})
			s := call.Summary()
			if got := s.JSONRPC.ID.String(); got != tc.wantID || !s.JSONRPC.ID.IsNumber() {
				t.Errorf("summary id %s, want %s (the last attempt's, a number)", got, tc.wantID)
			}
			if got := s.JSONRPC.ResponseID.String(); got != tc.wantAnswer {
				t.Errorf("summary responseId %s, want %s", got, tc.wantAnswer)
			}
			if s.Tool != "echo" || s.Outcome != classify.InvalidEnvelope || s.PolicyRetries != 1 {
				t.Errorf("summary %s %s retries %d", s.Tool, s.Outcome, s.PolicyRetries)
			}
		})
	}
}

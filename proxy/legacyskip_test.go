package proxy_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestLegacySSEAnswerOverTheLimit: an answer on a 2024-11-05 HTTP+SSE
// stream larger than the classifier holds (MaxEventSize) is paired by the
// id its first bytes show: its request's record is NOT_CLASSIFIED, as over
// Streamable HTTP, with the answer seen and the limit it reached. One
// whose id is behind its result (as the TypeScript SDK writes it) cannot
// be paired: it is counted unread on the stream's record. Before, both
// were skipped unseen: the first request's record was REQUEST_ACCEPTED
// "stream-ended" (or "timeout" after 60 s) though its answer came.
func TestLegacySSEAnswerOverTheLimit(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{MaxEventSize: 64 << 10})
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, br, resp := legacySession(t, c, purl)
	postAll(t, c, endpoint, call(`1`, "big"), call(`2`, "bigtail"), call(`3`, "echo"))
	readAnswers(t, br, 3)
	waitFor(t, sink, "paired records", seenAnswers(2))
	resp.Body.Close()
	stop()
	posts, get := byID(t, sink)
	checkPost(t, posts, `1`, answerWant{outcome: classify.NotClassified, tool: "big", seen: true})
	checkPost(t, posts, `2`, answerWant{outcome: classify.RequestAccepted, tool: "bigtail", notSeen: record.AnswerStreamEnded})
	checkPost(t, posts, `3`, answerWant{outcome: classify.ToolSuccess, tool: "echo", seen: true})
	if r := posts[`1`]; r != nil {
		nc := r.NotClassified
		if nc == nil || nc.Cause != classify.CauseEventTooLarge || nc.Limit != 64<<10 || nc.Size <= 100<<10 || nc.Event != 2 {
			t.Errorf("id 1: notClassified %+v, want event-too-large, limit 65536, size > 100 KiB, event 2", nc)
		}
		if r.StreamAnswer.Bytes <= 100<<10 {
			t.Errorf("id 1: answer bytes %d", r.StreamAnswer.Bytes)
		}
		if !strings.Contains(r.Reason, "not classified: its answer, event 2 of the stream") {
			t.Errorf("id 1: reason %q", r.Reason)
		}
		// Errors mode: the answer's first bytes, truncated.
		if b := r.ResponseBody; b == nil || !b.Truncated || !strings.HasPrefix(b.Text, `{"jsonrpc":"2.0","id":1,"result":`) {
			t.Errorf("id 1: response body %+v", b)
		}
	}
	if want := (record.StreamAnswers{Responses: 2, Paired: 2, Unread: 1}); get == nil || get.StreamAnswers == nil || *get.StreamAnswers != want {
		t.Errorf("the GET stream's record: %+v, want answers %+v", get, want)
	}
}

// TestLegacySSEJudgedOutsideTheLock: an answer being judged holds up no
// other stream's pairing: while the first answer's classification is held
// back, a second stream's answer is paired and its record written. And a
// record whose wait runs out while its answer is being judged is written
// once, with the answer (the timeout leaves it to the judging). Before, the
// classifier ran under the lock every stream's pairing shares.
func TestLegacySSEJudgedOutsideTheLock(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	up := serve(t, srv)
	purl, p, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{LegacyAnswerWait: 100 * time.Millisecond})
	var mu sync.Mutex
	calls := 0
	blocked, release := make(chan struct{}), make(chan struct{})
	proxy.SetLegacyClassifying(p, func() {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			close(blocked)
			<-release
		}
	})
	c := &http.Client{Timeout: 30 * time.Second}
	endA, brA, respA := legacySession(t, c, purl)
	endB, brB, respB := legacySession(t, c, purl)
	// A's answer comes once its record is held; its judging is held back
	// past the wait.
	postAll(t, c, endA, call(`1`, "hold"))
	deadline := time.Now().Add(30 * time.Second)
	for p.Stats().Exchanges < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the POST's exchange did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(srv.release)
	readAnswers(t, brA, 1)
	<-blocked
	postAll(t, c, endB, call(`2`, "echo"))
	readAnswers(t, brB, 1)
	waitFor(t, sink, "the second stream's paired record", func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.Tool == "echo" && r.StreamAnswer != nil {
				return true
			}
		}
		return false
	})
	time.Sleep(200 * time.Millisecond) // past the first request's wait
	close(release)
	waitFor(t, sink, "the first stream's record", func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.Tool == "hold" {
				return true
			}
		}
		return false
	})
	respA.Body.Close()
	respB.Body.Close()
	stop()
	posts, _ := byID(t, sink)
	if len(posts) != 2 {
		t.Errorf("%d POST records, want 2", len(posts))
	}
	checkPost(t, posts, `1`, answerWant{outcome: classify.ToolSuccess, tool: "hold", seen: true})
	checkPost(t, posts, `2`, answerWant{outcome: classify.ToolSuccess, tool: "echo", seen: true})
}

// TestLegacySSESharedEndpoint: two open streams that name the same
// endpoint URL (no session id in it) share their pairing: a request POSTed
// to it is paired with its answer on either stream (here the older one,
// where the server sends every answer), and waits for one while either is
// open; when the newest ends, POSTs go on with the older. Before, only the
// newest stream's answers were looked at: the
// answer on the older stream was counted unpaired and the request written
// without it ("timeout" after 60 s, or "stream-ended").
func TestLegacySSESharedEndpoint(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	srv.shared = true
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, br1, resp1 := legacySession(t, c, purl)
	endpoint2, _, resp2 := legacySession(t, c, purl)
	if endpoint != endpoint2 {
		t.Fatalf("endpoints %s and %s, want one", endpoint, endpoint2)
	}
	postAll(t, c, endpoint, call(`1`, "echo"), call(`2`, "fail"))
	readAnswers(t, br1, 2)
	waitFor(t, sink, "paired records", func(recs []*record.Record) bool {
		n := 0
		for _, r := range recs {
			if r.StreamAnswer != nil {
				n++
			}
		}
		return n == 2
	})
	// The newest stream ends: a POST to the endpoint goes on with the
	// older one, still open.
	resp2.Body.Close()
	waitFor(t, sink, "the newest stream's record", func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.HTTPMethod == http.MethodGet {
				return true
			}
		}
		return false
	})
	postAll(t, c, endpoint, call(`3`, "echo"))
	readAnswers(t, br1, 1)
	waitFor(t, sink, "the third record", func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.JSONRPC.ID.String() == "3" {
				return true
			}
		}
		return false
	})
	resp1.Body.Close()
	stop()
	posts := map[string]*record.Record{}
	var answers []record.StreamAnswers
	for _, r := range sink.exchanges(t) {
		switch r.HTTPMethod {
		case http.MethodGet:
			if r.StreamAnswers != nil {
				answers = append(answers, *r.StreamAnswers)
			}
		case http.MethodPost:
			posts[r.JSONRPC.ID.String()] = r
		}
	}
	checkPost(t, posts, `1`, answerWant{outcome: classify.ToolSuccess, tool: "echo", seen: true})
	checkPost(t, posts, `2`, answerWant{outcome: classify.ToolError, tool: "fail", seen: true, isError: true})
	checkPost(t, posts, `3`, answerWant{outcome: classify.ToolSuccess, tool: "echo", seen: true})
	want := []record.StreamAnswers{{Responses: 3, Paired: 3}, {}}
	if len(answers) != 2 || !(answers[0] == want[0] && answers[1] == want[1] || answers[0] == want[1] && answers[1] == want[0]) {
		t.Errorf("the streams' answers %+v, want %+v", answers, want)
	}
}

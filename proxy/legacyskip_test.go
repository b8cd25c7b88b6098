package proxy_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
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
//
// Both answers must reach the proxy within its wait (LegacyAnswerWait),
// the first one's judging held past it. On a loaded machine an answer may
// come after a short wait (the first one did, in a fresh clone at load 30:
// its judging never started and the test waited for it until go test's
// limit): such an attempt says so, and the next one waits four times as
// long.
func TestLegacySSEJudgedOutsideTheLock(t *testing.T) {
	t.Parallel()
	for wait := 100 * time.Millisecond; !legacyJudgedOutsideTheLock(t, wait); wait *= 4 {
		if wait >= 6400*time.Millisecond {
			t.Fatalf("an answer came after the proxy's wait in every attempt (up to %v)", wait)
		}
		t.Logf("an answer came after the proxy's wait of %v; again with a longer one", wait)
	}
}

// legacyJudgedOutsideTheLock is one attempt of
// TestLegacySSEJudgedOutsideTheLock with the proxy's answer wait; false
// when an answer came after it (the attempt tells nothing).
func legacyJudgedOutsideTheLock(t *testing.T, wait time.Duration) bool {
	srv := newPairingServer()
	up := serve(t, srv)
	purl, p, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{LegacyAnswerWait: wait})
	defer stop()
	var mu sync.Mutex
	calls := 0
	blocked, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
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
	timedOut := func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.StreamAnswer != nil && r.StreamAnswer.NotSeen == record.AnswerTimeout {
				return true
			}
		}
		return false
	}
	c := &http.Client{Timeout: 30 * time.Second}
	endA, brA, respA := legacySession(t, c, purl)
	defer respA.Body.Close()
	endB, brB, respB := legacySession(t, c, purl)
	defer respB.Body.Close()
	// A's answer comes once its record is held; its judging is held back
	// past the wait.
	postAll(t, c, endA, call(`1`, "hold"))
	deadline := time.Now().Add(testwait.Bound)
	for p.Stats().Exchanges < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the POST's exchange did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(srv.release)
	readAnswers(t, brA, 1)
	for judging := false; !judging; {
		select {
		case <-blocked:
			judging = true
		case <-time.After(5 * time.Millisecond):
			if timedOut(sink.exchanges(t)) {
				return false
			}
			if time.Now().After(deadline.Add(30 * time.Second)) {
				t.Fatal("the first answer was neither judged nor its record written without it")
			}
		}
	}
	postAll(t, c, endB, call(`2`, "echo"))
	readAnswers(t, brB, 1)
	waitFor(t, sink, "the second stream's record", func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.Tool == "echo" && r.StreamAnswer != nil {
				return true
			}
		}
		return false
	})
	if timedOut(sink.exchanges(t)) {
		return false // the second answer came after the wait
	}
	time.Sleep(2 * wait) // past the first request's wait
	releaseOnce.Do(func() { close(release) })
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
	return true
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

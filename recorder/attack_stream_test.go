package recorder_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// streamPlan is one upstream response of the transparency attack: its
// status, Content-Type, bytes, how they are written (piece sizes, a flush
// after which pieces) and whether the upstream aborts it after cut bytes.
type streamPlan struct {
	id     string // the request's id, as JSON
	status int
	ctype  string
	body   []byte
	pieces []int
	flush  []bool
	pause  []bool // a short sleep after the piece
	cut    int    // -1: the response ends cleanly; else abort after cut bytes
	slow   bool   // the client reads slowly
	reads  int    // the client's read size
	leave  int    // -1: the client reads to the end; else it closes after leave bytes
}

// planStream draws a response: an event stream of notifications and a
// response (CR, LF or CRLF line ends, comments, ids, events of up to
// 100 KiB, sometimes a response for another id or no final blank line),
// a JSON body, or an HTTP error with an event-stream body.
func planStream(rnd *rand.Rand, n int) *streamPlan {
	p := &streamPlan{status: http.StatusOK, cut: -1, leave: -1}
	if rnd.IntN(2) == 0 {
		p.id = strconv.Itoa(n)
	} else {
		p.id = strconv.Quote("c-" + strconv.Itoa(n))
	}
	pad := func() string {
		switch rnd.IntN(6) {
		case 0:
			return strings.Repeat("x", rnd.IntN(100<<10))
		case 1:
			return strings.Repeat("y", rnd.IntN(5000))
		}
		return strings.Repeat("z", rnd.IntN(40))
	}
	result := func(id string) string {
		isErr := ""
		if rnd.IntN(4) == 0 {
			isErr = `,"isError":true`
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + pad() + `"}]` + isErr + `}}`
	}
	var b strings.Builder
	switch k := rnd.IntN(10); {
	case k < 2:
		p.ctype = "application/json"
		if rnd.IntN(3) == 0 {
			p.body = []byte(`{"jsonrpc":"2.0","id":` + p.id + `,"error":{"code":-32602,"message":"` + pad() + `"}}`)
		} else {
			p.body = []byte(result(p.id))
		}
	default:
		p.ctype = "text/event-stream"
		if k == 2 {
			p.status = []int{400, 500, 503}[rnd.IntN(3)]
		}
		eol := []string{"\n", "\r\n", "\r"}[rnd.IntN(3)]
		if rnd.IntN(8) == 0 {
			b.WriteString("\uFEFF")
		}
		for e := rnd.IntN(6); e > 0; e-- {
			if rnd.IntN(3) == 0 {
				b.WriteString(": keep-alive" + eol + eol)
			}
			if rnd.IntN(2) == 0 {
				b.WriteString("id: " + strconv.Itoa(e) + eol)
			}
			if rnd.IntN(3) == 0 {
				b.WriteString("event: message" + eol)
			}
			b.WriteString(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":` + strconv.Itoa(e) + `,"message":"` + pad() + `"}}` + eol + eol)
		}
		switch rnd.IntN(8) {
		case 0: // none
		case 1:
			b.WriteString("data: " + result("99999") + eol + eol) // another id
		case 2:
			b.WriteString("data: " + result(`"another-id-`+pad()+`"`) + eol + eol)
		case 3:
			b.WriteString(`data: {"jsonrpc":"2.0","id":` + p.id + `,"error":{"code":-32603,"message":"m` + pad() + `","data":{"d":"` + pad() + `"}}}` + eol + eol)
		default:
			b.WriteString("event: message" + eol + "data: " + result(p.id) + eol)
			if rnd.IntN(8) != 0 {
				b.WriteString(eol)
			}
		}
		if rnd.IntN(4) == 0 {
			b.WriteString(": after" + eol + eol + "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}" + eol + eol)
		}
		p.body = []byte(b.String())
	}
	maxPiece := []int{16, 2000, 70000, 1 << 20}[rnd.IntN(4)]
	flushP := []int{0, 50, 100}[rnd.IntN(3)]
	for rest := len(p.body); rest > 0; {
		n := min(rest, 1+rnd.IntN(maxPiece))
		p.pieces = append(p.pieces, n)
		p.flush = append(p.flush, rnd.IntN(100) < flushP)
		p.pause = append(p.pause, rnd.IntN(200) == 0)
		rest -= n
	}
	if rnd.IntN(8) == 0 && len(p.body) > 0 {
		p.cut = rnd.IntN(len(p.body) + 1)
	}
	if rnd.IntN(10) == 0 && len(p.body) > 0 {
		p.leave = rnd.IntN(len(p.body))
	}
	p.reads = []int{1, 7, 512, 4096, 64 << 10}[rnd.IntN(5)]
	p.slow = rnd.IntN(10) == 0 && len(p.body)/p.reads < 2000 // at most 2,000 slow reads
	return p
}

// attackUpstream answers each request with the plan its query names.
func attackUpstream(plans *sync.Map) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		v, ok := plans.Load(r.URL.Query().Get("case"))
		if !ok {
			http.Error(w, "no such case", http.StatusNotFound)
			return
		}
		p := v.(*streamPlan)
		w.Header().Set("Content-Type", p.ctype)
		w.WriteHeader(p.status)
		rest, sent := p.body, 0
		for i, n := range p.pieces {
			if p.cut >= 0 && sent+n > p.cut {
				n = p.cut - sent
			}
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			rest, sent = rest[n:], sent+n
			if p.flush[i] {
				w.(http.Flusher).Flush()
			}
			if p.pause[i] {
				time.Sleep(time.Millisecond)
			}
			if p.cut >= 0 && sent == p.cut {
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
		}
	})
}

// eventEnds returns the offsets just past each event with data in body, as
// one scan of all of it finds them.
func eventEnds(body []byte) []int64 {
	var sc wire.SSEScanner
	sc.Feed(body)
	sc.Close()
	var ends []int64
	for t := sc.Next(); t != nil; t = sc.Next() {
		if t.Kind == wire.SSEEnd && t.HasData {
			ends = append(ends, t.End)
		}
	}
	return ends
}

// TestStreamAttack: responses of every shape, chunking, flush pattern and
// cut through a real proxy on 127.0.0.1, in each body mode: the client
// receives exactly what the upstream sent (a prefix of it when the upstream
// aborts); each exchange has one record, whose id (with its JSON type),
// status, byte count, body excerpt and event arrivals are the exchange's;
// and the verdict of a clean response is the one the classifier gives the
// same bytes read whole (chunking and proxying change nothing). Some
// clients leave early. Recycled chunks are poisoned (capture_test.go's
// init), so a chunk recycled while the capture or the event reader still
// held it shows in a body excerpt or a verdict.
func TestStreamAttack(t *testing.T) {
	seed := uint64(20261203)
	if s := testingSeed(); s != 0 {
		seed = s
	}
	t.Logf("seed %d (MCPDIAG_ATTACK_SEED reruns it)", seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	cases := 120
	if testing.Short() {
		cases = 40
	}
	all := make([]*streamPlan, cases)
	var plans sync.Map
	for i := range all {
		all[i] = planStream(rnd, i)
		plans.Store(strconv.Itoa(i), all[i])
	}
	up := httptest.NewServer(attackUpstream(&plans))
	defer up.Close()
	for _, m := range []struct {
		mode     proxy.BodyMode
		limit    int
		maxEvent int   // the proxy's MaxEventSize, and the classifier's of the whole bytes
		memory   int64 // ClassifyMemory: verdicts are then not compared
	}{
		{proxy.BodiesFull, 0, 0, 0}, {proxy.BodiesErrors, 0, 0, 0}, {proxy.BodiesAll, 1000, 0, 0}, {proxy.BodiesNone, 0, 0, 0},
		{proxy.BodiesErrors, 0, 4096, 0}, {proxy.BodiesFull, 0, 0, 96 << 10},
	} {
		t.Run(fmt.Sprintf("%s-limit%d-event%d-memory%d", m.mode, m.limit, m.maxEvent, m.memory), func(t *testing.T) {
			attackProxy(t, up.URL, all, m.mode, m.limit, m.maxEvent, m.memory)
		})
	}
}

func attackProxy(t *testing.T, upstream string, all []*streamPlan, mode proxy.BodyMode, limit, maxEvent int, memory int64) {
	uu, _ := url.Parse(upstream + "/mcp")
	var got sink
	p, err := proxy.New(proxy.Options{Upstream: uu, Records: &got, Bodies: mode, BodyLimit: limit, MaxEventSize: maxEvent, ClassifyMemory: memory})
	if err != nil {
		t.Fatal(err)
	}
	pts := httptest.NewServer(p)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8}}
	defer c.CloseIdleConnections()
	for i, pl := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			body := `{"jsonrpc":"2.0","id":` + pl.id + `,"method":"tools/call","params":{"name":"attack","arguments":{}}}`
			req, _ := http.NewRequest(http.MethodPost, pts.URL+"/mcp?case="+strconv.Itoa(i), strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := c.Do(req)
			if err != nil {
				if pl.cut >= 0 {
					return
				}
				t.Errorf("case %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			var recv bytes.Buffer
			buf := make([]byte, pl.reads)
			var rerr error
			for pl.leave < 0 || recv.Len() < pl.leave {
				n, err := resp.Body.Read(buf)
				recv.Write(buf[:n])
				if err != nil {
					if err != io.EOF {
						rerr = err
					}
					break
				}
				if pl.slow {
					time.Sleep(100 * time.Microsecond)
				}
			}
			if pl.leave >= 0 {
				return // the body's Close drops the connection
			}
			want := pl.body
			if pl.cut >= 0 {
				want = pl.body[:pl.cut]
			}
			if resp.StatusCode != pl.status {
				t.Errorf("case %d: status %d, want %d", i, resp.StatusCode, pl.status)
			}
			if pl.cut < 0 && rerr != nil {
				t.Errorf("case %d (%d bytes, %d pieces, reads of %d, slow %v): the client's read failed: %v", i, len(pl.body), len(pl.pieces), pl.reads, pl.slow, rerr)
			}
			if pl.cut < 0 && !bytes.Equal(recv.Bytes(), want) || pl.cut >= 0 && !bytes.HasPrefix(want, recv.Bytes()) {
				t.Errorf("case %d: the client received %d bytes that differ from the upstream's %d (first difference at %d)", i, recv.Len(), len(want), firstDiff(recv.Bytes(), want))
			}
		}()
	}
	testwait.Wait(t, &wg, "the clients' streams through the proxy")
	pts.Close()
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	byCase := map[string][]*record.Record{}
	for _, r := range got.recs {
		if r.Kind != record.KindExchange {
			continue
		}
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatalf("record URL %q: %v", r.URL, err)
		}
		k := u.Query().Get("case")
		byCase[k] = append(byCase[k], r)
	}
	bodyLimit := limit
	if bodyLimit == 0 {
		bodyLimit = proxy.DefaultBodyLimit
		if mode == proxy.BodiesFull {
			bodyLimit = proxy.DefaultFullBodyLimit
		}
	}
	for i, pl := range all {
		rs := byCase[strconv.Itoa(i)]
		if len(rs) != 1 {
			t.Errorf("case %d: %d records, want 1", i, len(rs))
			continue
		}
		r := rs[0]
		if string(r.JSONRPC.ID.Raw()) != pl.id || r.Method != "tools/call" || r.Tool != "attack" {
			t.Errorf("case %d: record id %s method %q tool %q, want id %s tools/call attack", i, r.JSONRPC.ID.Raw(), r.Method, r.Tool, pl.id)
		}
		if r.ResponseBody != nil {
			// Whatever happened, an excerpt is the start of the body.
			// (A token the cut left unfinished is replaced by
			// record.Redacted.)
			if text := strings.TrimSuffix(r.ResponseBody.Text, record.Redacted); !strings.HasPrefix(string(pl.body), text) || len(text) > bodyLimit {
				t.Errorf("case %d: the record's response body (%d bytes) is not the start of the body (%d bytes), first difference at %d", i, len(r.ResponseBody.Text), len(pl.body), firstDiff([]byte(r.ResponseBody.Text), pl.body))
			}
		}
		if pl.cut >= 0 || pl.leave >= 0 {
			continue
		}
		if r.Status != pl.status || r.ResponseBytes != int64(len(pl.body)) {
			t.Errorf("case %d: record status %d bytes %d, want %d and %d", i, r.Status, r.ResponseBytes, pl.status, len(pl.body))
		}
		// The verdict of the same bytes, read whole.
		res, cerr := (&classify.Classifier{MaxEventSize: maxEvent}).Classify(&classify.Exchange{
			Method: "tools/call", ID: wire.IDFromRaw([]byte(pl.id)), ProtocolVersion: r.ProtocolVersion,
			Status: pl.status, Header: http.Header{"Content-Type": {pl.ctype}}, Body: bytes.NewReader(pl.body),
		})
		if cerr != nil {
			// Over the bound: the proxy forwards it and says so.
			if r.Outcome != classify.NotClassified {
				t.Errorf("case %d: proxied verdict %s where the whole bytes are not classified: %v", i, r.Outcome, cerr)
			}
			continue
		}
		var want record.Record
		want.JSONRPC.ID = wire.IDFromRaw([]byte(pl.id))
		want.SetResult(res)
		if memory > 0 {
			if r.Outcome != want.Outcome && r.Outcome != classify.NotClassified {
				t.Errorf("case %d: proxied verdict %s/%s %.300q, whole bytes: %s", i, r.Outcome, r.Layer, r.Reason, want.Outcome)
			}
			continue
		}
		if r.Outcome != want.Outcome || r.Layer != want.Layer || r.Reason != want.Reason || fmt.Sprint(r.SSE) != fmt.Sprint(want.SSE) {
			t.Errorf("case %d: proxied verdict %s/%s %.300q sse %+v\nwhole bytes: %s/%s %.300q sse %+v", i, r.Outcome, r.Layer, r.Reason, r.SSE, want.Outcome, want.Layer, want.Reason, want.SSE)
		}
		if facts(r) != facts(&want) {
			t.Errorf("case %d: proxied facts\n%s\nwhole bytes\n%s", i, facts(r), facts(&want))
		}
		wantBody := len(pl.body) > 0 && (mode == proxy.BodiesFull || mode == proxy.BodiesAll || mode == proxy.BodiesErrors && !want.Outcome.Success())
		switch {
		case wantBody && r.ResponseBody == nil:
			t.Errorf("case %d: no response body in the record (%s, %s)", i, mode, want.Outcome)
		case !wantBody && r.ResponseBody != nil:
			t.Errorf("case %d: a response body in the record (%s, %s)", i, mode, want.Outcome)
		case wantBody:
			n := min(len(pl.body), bodyLimit)
			short := len(r.ResponseBody.Text) < n-3 && !strings.HasSuffix(r.ResponseBody.Text, record.Redacted)
			if short || r.ResponseBody.Truncated != (len(pl.body) > bodyLimit) {
				t.Errorf("case %d: the record's body has %d bytes (truncated %v) of %d, limit %d", i, len(r.ResponseBody.Text), r.ResponseBody.Truncated, len(pl.body), bodyLimit)
			}
		}
		if pl.ctype != "text/event-stream" {
			continue
		}
		ends := eventEnds(pl.body)
		if (len(ends) > 0) != (r.Timings.FirstEvent > 0) {
			t.Errorf("case %d: first event %v with %d events", i, r.Timings.FirstEvent, len(ends))
		}
		if mode != proxy.BodiesFull {
			continue
		}
		var gotEnds []int64
		for j, a := range r.SSEArrivals {
			if j < len(ends) && a.End == ends[j]-1 && pl.body[a.End-1] == '\r' && pl.body[a.End] == '\n' {
				// A blank line's CRLF split between two flushes: the
				// event ended at the CR, before the LF was sent
				// (wire.Event.Length says so).
				a.End++
			}
			gotEnds = append(gotEnds, a.End)
		}
		if fmt.Sprint(gotEnds) != fmt.Sprint(ends) {
			t.Errorf("case %d: arrivals at %v, events end at %v", i, gotEnds, ends)
		}
	}
}

// facts are a record's facts of the response besides its verdict.
func facts(r *record.Record) string {
	deref := func(p any) string {
		switch v := p.(type) {
		case *int64:
			if v != nil {
				return strconv.FormatInt(*v, 10)
			}
		case *bool:
			if v != nil {
				return strconv.FormatBool(*v)
			}
		}
		return "nil"
	}
	return fmt.Sprintf("response id %s code %s (%s) message %.80q data %.80q isError %s warnings %v",
		r.JSONRPC.ResponseID.Raw(), deref(r.JSONRPC.ErrorCode), r.JSONRPC.ErrorName, r.ErrorMessage, r.ErrorData, deref(r.IsError), r.Warnings)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// testingSeed is MCPDIAG_ATTACK_SEED, for rerunning a failure.
func testingSeed() uint64 {
	s, err := strconv.ParseUint(os.Getenv("MCPDIAG_ATTACK_SEED"), 10, 64)
	if err != nil {
		return 0
	}
	return s
}

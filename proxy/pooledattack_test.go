package proxy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestPooledMemoryNoCrosstalk attacks the memory the proxy reuses across
// exchanges (the request body buffer, the record, the response header
// copy, the response capture, the pipe's chunks) with concurrent exchanges
// of distinct bodies of every shape the request side takes: bodies of a
// declared length, chunked bodies, Expect: 100-continue, bodies larger
// than the proxy parses, requests the upstream answers before it read the
// body (the transport may still be writing it), and clients that
// disconnect halfway through their body. Records go through a
// record.Async (which keeps nothing of them: the records are reused), once
// with no observer and once with the fault layer and an observer (which
// take the bytes and keep the records). Every body the upstream reads is
// the client's, byte for byte; each exchange has exactly one record, which
// holds its own request bytes (a prefix of them when cut or unparsed), id,
// tool and response header.
func TestPooledMemoryNoCrosstalk(t *testing.T) {
	t.Parallel()
	all := []int{0, 1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name          string
		faults, obs   bool
		kinds         []int
		clients, each int
	}{
		{"records reused", false, false, all, 8, 36},
		{"faults and observer", true, true, all, 8, 36},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attackPooled(t, tc.faults, tc.obs, tc.kinds, tc.clients, tc.each)
		})
	}
}

// attackParse is the proxy's MaxRequestParse in the attack.
const attackParse = 32 << 10

func attackPooled(t *testing.T, withFaults, withObserver bool, kinds []int, clients, each int) {
	var lateMu sync.Mutex
	var late []string // bodies read after the answer that are not the client's
	sentBodies := map[string]string{}
	uph := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Req")
		if r.Header.Get("X-Early") != "" {
			// Answered whole before the body is read, which is read
			// afterwards: the proxy's handler may return, and its exchange
			// be recorded, while the transport is still writing the body,
			// whose bytes must still be the client's (the transport gives
			// up a body it has not written 50 ms after the response: what
			// arrived must then be a prefix of it).
			_ = http.NewResponseController(w).EnableFullDuplex()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Id", id)
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"content":[{"type":"text","text":"early"}]}}`, id)
			w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
			io.WriteString(w, answer)
			http.NewResponseController(w).Flush()
			time.Sleep(2 * time.Millisecond)
			b, err := io.ReadAll(r.Body)
			sum := sha256.Sum256(b)
			lateMu.Lock()
			want := sentBodies[id]
			lateMu.Unlock()
			if err == nil && hex.EncodeToString(sum[:]) != r.Header.Get("X-Body-Sum") || err != nil && !strings.HasPrefix(want, string(b)) {
				lateMu.Lock()
				late = append(late, fmt.Sprintf("%s: %d bytes, %v", id, len(b), err))
				lateMu.Unlock()
			}
			return
		}
		b, err := io.ReadAll(r.Body)
		sum := sha256.Sum256(b)
		if err != nil || hex.EncodeToString(sum[:]) != r.Header.Get("X-Body-Sum") {
			http.Error(w, "the body is not the client's", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Id", id)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%q,"result":{"content":[{"type":"text","text":%q}]}}`, id, strings.Repeat(id, 40))
	})
	upSrv := httptest.NewServer(uph)
	defer upSrv.Close()
	up := upSrv.URL + "/mcp"
	lines := &recordtest.Lines{}
	sink := record.NewAsync(lines, record.AsyncOptions{Policy: record.QueueBlock})
	opts := proxy.Options{Records: sink, Bodies: proxy.BodiesAll, BodyLimit: 1 << 20, MaxRequestParse: attackParse}
	if withFaults {
		sel, err := faults.Select("errors.http_status_sequence", []byte(`{"statusCodes":[503],"match":{"tool":"boom"}}`))
		if err != nil {
			t.Fatal(err)
		}
		opts.Faults = &proxy.FaultOptions{Selection: sel, Seed: 3}
	}
	obs := &keepingObserver{}
	if withObserver {
		opts.Observer = obs
	}
	purl, _, _, stop := startProxy(t, up, opts)
	pu, _ := url.Parse(purl)

	type sentReq struct {
		body   string // the bytes the client sent (all of them, or before it left)
		whole  bool   // the client sent its whole body
		status int    // the status the client must get (0: it left)
		tool   string
	}
	var mu sync.Mutex
	sent := map[string]sentReq{}
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := range clients {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(c), 13))
			for i := range each {
				id := fmt.Sprintf("c%d-%d", c, i)
				kind := kinds[(c+i)%len(kinds)]
				size := 200 + rnd.IntN(40<<10)
				switch kind {
				case 3: // larger than the proxy parses
					size = attackParse + 1 + rnd.IntN(24<<10)
				case 4: // answered early: large enough to be still in flight, parsed whole
					size = attackParse/2 + rnd.IntN(attackParse/2-300) // (the JSON around it: under 300 bytes)
				}
				tool := "tool-" + id
				if withFaults && i%5 == 0 {
					tool = "boom"
				}
				fill := strings.Repeat(string(rune('a'+rnd.IntN(26))), size)
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, id, tool, fill)
				want := http.StatusOK
				if tool == "boom" {
					want = http.StatusServiceUnavailable
				}
				if kind == 5 {
					// A client that leaves halfway through its body.
					half := body[:len(body)/2]
					mu.Lock()
					sent[id] = sentReq{body: half, tool: tool}
					mu.Unlock()
					if err := leaveMidBody(pu.Host, id, len(body), half); err != nil {
						errs <- fmt.Errorf("%s: %v", id, err)
					}
					continue
				}
				mu.Lock()
				sent[id] = sentReq{body: body, whole: true, status: want, tool: tool}
				mu.Unlock()
				lateMu.Lock()
				sentBodies[id] = body
				lateMu.Unlock()
				var rd io.Reader = strings.NewReader(body)
				if kind == 1 {
					rd = io.MultiReader(strings.NewReader(body[:len(body)/3]), strings.NewReader(body[len(body)/3:])) // chunked
				}
				req, _ := http.NewRequest(http.MethodPost, purl, rd)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("X-Req", id)
				sum := sha256.Sum256([]byte(body))
				req.Header.Set("X-Body-Sum", hex.EncodeToString(sum[:]))
				switch kind {
				case 2:
					req.Header.Set("Expect", "100-continue")
				case 4:
					req.Header.Set("X-Early", "1")
				}
				resp, err := client.Do(req)
				if err != nil {
					errs <- fmt.Errorf("%s: %v", id, err)
					continue
				}
				rb, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					errs <- fmt.Errorf("%s (kind %d): status %d, want %d: %s", id, kind, resp.StatusCode, want, rb)
				} else if want == http.StatusOK && resp.Header.Get("X-Id") != id {
					errs <- fmt.Errorf("%s: the response of %s", id, resp.Header.Get("X-Id"))
				}
			}
		})
	}
	testwait.Wait(t, &wg, "the clients' calls through the proxy")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	stop()
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	upSrv.Close() // (every body the upstream read to its end)
	for _, l := range late {
		t.Errorf("a body read after its answer is not the client's: %s", l)
	}

	seen := map[string]bool{}
	n := 0
	for _, l := range lines.All() {
		var r record.Record
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if r.Kind != record.KindExchange {
			continue
		}
		n++
		id := r.RequestHeaders.Get("X-Req")
		s, ok := sent[id]
		if !ok || seen[id] {
			t.Errorf("a record of request %q (tool %q), which no client sent, or a second one", id, r.Tool)
			continue
		}
		seen[id] = true
		if r.RequestBody == nil || !strings.HasPrefix(s.body, unmarked(r.RequestBody)) || r.RequestBody.Text == "" {
			t.Errorf("%s: the record's request body is not its own (%.80q...)", id, textOf(r.RequestBody))
			continue
		}
		if !s.whole {
			continue // cut: no id, no response
		}
		if len(s.body) <= attackParse {
			var want record.Record
			want.SetMessage(new(wire.ParseMessage([]byte(s.body))))
			rid, _ := wire.StringValue(r.JSONRPC.ID.Raw())
			if r.RequestBody.Text != s.body || rid != id || r.Tool != s.tool || r.ArgsHash != want.ArgsHash || r.RequestBytes != int64(len(s.body)) {
				t.Errorf("%s: record id %s tool %q args hash %s (want %s), %d bytes of %d, body whole %v",
					id, rid, r.Tool, r.ArgsHash, want.ArgsHash, r.RequestBytes, len(s.body), r.RequestBody.Text == s.body)
			}
		}
		if r.Status != s.status || s.status == http.StatusOK && r.ResponseHeaders.Get("X-Id") != id {
			t.Errorf("%s: record status %d (want %d), response header of %q", id, r.Status, s.status, r.ResponseHeaders.Get("X-Id"))
		}
	}
	if n != len(sent) {
		t.Errorf("%d exchange records for %d exchanges", n, len(sent))
		for id, s := range sent {
			if !seen[id] {
				t.Errorf("no record of %s (whole body sent: %v)", id, s.whole)
			}
		}
	}
	if withObserver {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		// Each exchange's record once (a record reused by a later
		// exchange would show up twice, with the later one's request).
		oseen := map[string]bool{}
		for _, r := range obs.recs {
			id := r.RequestHeaders.Get("X-Req")
			if s, ok := sent[id]; !ok || oseen[id] || r.RequestBody == nil || !strings.HasPrefix(s.body, r.RequestBody.Text) {
				t.Errorf("an observed record of %q (seen before: %v) holds another request's body", id, oseen[id])
			}
			oseen[id] = true
		}
		if len(oseen) != len(sent) {
			t.Errorf("%d exchanges observed of %d", len(oseen), len(sent))
		}
	}
}

func textOf(b *record.Body) string {
	if b == nil {
		return "<none>"
	}
	return b.Text
}

// leaveMidBody sends a POST that declares n body bytes, sends part of them,
// and ends its side of the connection; it returns once the proxy answered
// or closed (the exchange was then served), so that closing the proxy
// afterwards cuts no exchange short of its record.
func leaveMidBody(host, id string, n int, part string) error {
	conn, err := net.Dial("tcp", host)
	if err != nil {
		return err
	}
	defer conn.Close()
	head := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nX-Req: %s\r\nContent-Length: %d\r\n\r\n", host, id, n)
	if _, err := io.WriteString(conn, head+part); err != nil {
		return err
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return err
	}
	return nil // (a reset is an end too)
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// floorCase is one exchange through the floor proxy: the request's id (as
// written), the upstream's path, and what its record must say.
type floorCase struct {
	id, path string
	outcome  classify.Outcome
	events   int  // SSE events counted, 0 for a JSON response
	body     bool // the record carries the response body (not a success)
}

// floorUpstream answers each path with the request's own id: /json a tool
// result, /sse three notifications and the result (flushed event by event,
// the third split in two writes), /err a tool error whose text carries a
// bearer token, /badsse a malformed notification then the result.
func floorUpstream(t *testing.T) (*httptest.Server, map[string][]byte) {
	sent := map[string][]byte{} // id → the body the upstream sent
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(r.Body)
		m := wire.ParseMessage(req)
		id := string(m.ID.Raw())
		result := func(isError bool, text string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":%q}],"isError":%v}}`, id, text, isError)
		}
		note := func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"event %d %s"}}`, i, strings.Repeat("x", 6000))
		}
		var pieces []string
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			pieces = []string{result(false, "found")}
		case "/err":
			w.Header().Set("Content-Type", "application/json")
			pieces = []string{result(true, "upstream refused: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.c2lnbmF0dXJlLXNlY3JldA")}
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			e3 := "id: 3\ndata: " + note(3) + "\n\n"
			pieces = []string{"id: 1\ndata: " + note(1) + "\n\n", "id: 2\ndata: " + note(2) + "\n\n", e3[:100], e3[100:], "id: 4\ndata: " + result(false, "found") + "\n\n"}
		case "/badsse":
			w.Header().Set("Content-Type", "text/event-stream")
			pieces = []string{"data: {\"jsonrpc\":\"2.0\",\"method\":\n\n", "data: " + result(false, "found") + "\n\n"}
		default:
			http.NotFound(w, r)
			return
		}
		var all []byte
		for _, p := range pieces {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
			all = append(all, p...)
		}
		<-ch
		sent[id] = all
		ch <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return srv, sent
}

// TestFloorRecords runs the floor target as proxybench runs it (the
// floorproxy binary, its own process on 127.0.0.1) on JSON and SSE
// exchanges, successes and failures, each with its own id: every client
// gets the upstream's bytes unchanged, and the record file holds exactly
// one record per exchange, its id equal to the request's with its JSON
// type, with the method, tool, status and the classifier's verdict, the
// SSE events counted, timings, and the response body (redacted) only for
// an exchange that did not succeed.
func TestFloorRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the floor proxy")
	}
	up, sent := floorUpstream(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := build(ctx, dir, "floorproxy", floorproxyPkg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "records.jsonl")
	s, err := start(ctx, "floor proxy", nil, listeningRE, false, bin, up.URL, file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		select {
		case <-s.done:
		default:
			s.kill()
		}
	}()
	cases := []floorCase{
		{id: `"s-1"`, path: "/json", outcome: classify.ToolSuccess},
		{id: `7`, path: "/sse", outcome: classify.ToolSuccess, events: 4},
		{id: `"8"`, path: "/err", outcome: classify.ToolError, body: true},
		{id: `9`, path: "/badsse", outcome: classify.MalformedJSON, events: 1, body: true},
	}
	for _, c := range cases {
		body := `{"jsonrpc":"2.0","id":` + c.id + `,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.base+c.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", c.path, resp.StatusCode, err)
		}
		if !bytes.Equal(got, sent[c.id]) {
			t.Errorf("%s: the client got %d bytes that differ from the upstream's %d", c.path, len(got), len(sent[c.id]))
		}
	}
	if err := s.stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d records for %d exchanges:\n%s", len(lines), len(cases), b)
	}
	byID := map[string]*record.Record{}
	for _, l := range lines {
		rec, err := record.Decode([]byte(l))
		if err != nil {
			t.Fatalf("record %q: %v", l, err)
		}
		id := string(rec.JSONRPC.ID.Raw())
		if byID[id] != nil {
			t.Errorf("two records of id %s", id)
		}
		byID[id] = rec
	}
	for _, c := range cases {
		rec := byID[c.id]
		if rec == nil {
			t.Errorf("%s: no record of id %s (records' ids: %v)", c.path, c.id, keys(byID))
			continue
		}
		if rec.Kind != record.KindExchange || rec.Method != "tools/call" || rec.Tool != "search" || rec.Status != 200 || rec.Outcome != c.outcome {
			t.Errorf("%s: record kind %q method %q tool %q status %d outcome %s; want exchange, tools/call, search, 200, %s", c.path, rec.Kind, rec.Method, rec.Tool, rec.Status, rec.Outcome, c.outcome)
		}
		if events := 0; rec.SSE != nil || c.events > 0 {
			if rec.SSE != nil {
				events = rec.SSE.Events
			}
			if events != c.events {
				t.Errorf("%s: %d SSE events recorded, want %d", c.path, events, c.events)
			}
		}
		if rec.Timings.Total <= 0 || rec.Timings.Headers <= 0 || rec.Timings.Headers > rec.Timings.Total || (c.path == "/sse") != (rec.Timings.FirstEvent > 0) && c.path != "/badsse" {
			t.Errorf("%s: timings %+v", c.path, rec.Timings)
		}
		if (rec.ResponseBody != nil) != c.body {
			t.Errorf("%s: response body recorded %v, want %v", c.path, rec.ResponseBody != nil, c.body)
		}
	}
	if rec := byID[`"8"`]; rec != nil && rec.ResponseBody != nil {
		if strings.Contains(rec.ResponseBody.Text, "c2VjcmV0LXBheWxvYWQ") || !strings.Contains(rec.ResponseBody.Text, "upstream refused") {
			t.Errorf("/err: recorded body %q: want it kept with its token redacted", rec.ResponseBody.Text)
		}
	}
	if rec := byID[`9`]; rec != nil && rec.ResponseBody != nil && rec.ResponseBody.Text != string(sent[`9`]) {
		t.Errorf("/badsse: recorded body %q, want the whole stream %q", rec.ResponseBody.Text, sent[`9`])
	}
}

func keys[V any](m map[string]V) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	return k
}

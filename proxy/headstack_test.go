package proxy_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// headStackChild names, in a child process of TestHeadWriteStack, the
// proxy it runs: "plain" or "recording".
const headStackChild = "MCPDIAG_HEADSTACK_CHILD"

// TestHeadWriteStack: the recording proxy's handler goroutine fits in the
// 8 KiB stack that the plain httputil.ReverseProxy's fits in, on the
// deepest call of a request: net/http writing the response head from the
// first Write of a 16 KiB event (chunkWriter.writeHeader, whose frame is
// 2,816 bytes, and the header sort under it). A stack that needs 16 KiB
// there is halved by every garbage collection that finds its connection
// waiting for the next request, and grows again on the next response
// (runtime.newstack under Header.sortedKeyValues: ~4 µs per SSE exchange
// in proxybench's profiles, none in the plain proxy's; docs/benchmarks.md,
// record3).
//
// Each proxy runs in a child process with debug.SetMaxStack(8192), where a
// goroutine that needs more than 8 KiB crashes the process with its
// traceback; the child serves SSE responses of four 16 KiB events and 1 KiB
// JSON responses through the proxy, as proxybench does, and SSE responses
// of small events (whose head a flush writes). The plain proxy's
// child must pass (else this Go release's net/http leaves no room on this
// path and the test cannot tell anything): it has 40 bytes to spare there,
// and the recording proxy's frames between the server and net/http's Write
// were 176 bytes more than the plain proxy's before the handler was one
// frame (recorder.Front) and the writer's Write a small one.
func TestHeadWriteStack(t *testing.T) {
	if which := os.Getenv(headStackChild); which != "" {
		headStackServe(t, which)
		return
	}
	if raceEnabled {
		t.Skip("the race detector's frames are larger")
	}
	for _, which := range []string{"plain", "recording"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestHeadWriteStack$", "-test.v")
		cmd.Env = append(os.Environ(), headStackChild+"="+which, "GOTRACEBACK=single")
		out, err := cmd.CombinedOutput()
		if err != nil {
			msg := string(out)
			if i := strings.Index(msg, "goroutine stack exceeds"); i >= 0 {
				msg = msg[i:min(len(msg), i+4000)]
			}
			if which == "plain" {
				t.Skipf("the plain proxy's child failed, so the recording proxy cannot be measured against it: %v\n%s", err, msg)
			}
			t.Fatalf("the %s proxy's child, its goroutines limited to 8 KiB of stack: %v\n%s", which, err, msg)
		}
		if !bytes.Contains(out, []byte("served through the "+which+" proxy")) {
			t.Fatalf("the %s proxy's child did not serve its requests:\n%s", which, out)
		}
	}
}

// headStackServe is the child of TestHeadWriteStack: it serves SSE and JSON
// exchanges through the proxy named which, every goroutine limited to
// 8 KiB of stack.
func headStackServe(t *testing.T, which string) {
	event := "event: message\ndata: " + strings.Repeat("x", 16<<10-len("event: message\ndata: \n\n")) + "\n\n"
	small := "event: message\ndata: " + strings.Repeat("s", 400) + "\n\n" // written by a flush
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", 1000) + `"}]}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if e, ok := map[string]string{"/sse": event, "/small": small}[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for range 4 {
				io.WriteString(w, e)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, result)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)

	var h http.Handler
	switch which {
	case "plain":
		// proxybench's plain proxy: the transport and copy buffers
		// proxy.New builds, full duplex.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 256, 1024
		defer tr.CloseIdleConnections()
		rp := &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = "" },
			FlushInterval: -1, Transport: tr, BufferPool: copyPool{},
		}
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.NewResponseController(w).EnableFullDuplex()
			rp.ServeHTTP(w, r)
		})
	case "recording":
		// mcpdiag proxy's defaults (the CLI's, and proxybench's lib
		// target): records through an Async sink into a file.
		enc := record.Encoder{BodyLimit: proxy.DefaultBodyLimit}
		fw, err := record.OpenFile(filepath.Join(t.TempDir(), "records.jsonl"), record.FileOptions{Encoder: enc})
		if err != nil {
			t.Fatal(err)
		}
		sink := record.NewAsync(fw, record.AsyncOptions{Encoder: enc})
		defer sink.Close()
		p, err := proxy.New(proxy.Options{Upstream: u, Records: sink, Bodies: proxy.BodiesErrors})
		if err != nil {
			t.Fatal(err)
		}
		h = p
	default:
		t.Fatalf("no proxy %q", which)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// No collection in the child: a mark assist that starts on a goroutine
	// at its deepest frame adds the runtime's frames to the proxy's, and
	// whether one starts there depends on how long marking takes, so on
	// the machine's load (a land at load ~19 overflowed in gcAssistAlloc,
	// mend17). The 30 exchanges allocate a few MB.
	debug.SetGCPercent(-1)
	debug.SetMaxStack(8192)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("z", 900) + `"}}}`
	for i := range 30 {
		path, want := "/mcp", len(result)
		switch i % 3 {
		case 1:
			path, want = "/sse", 4*len(event)
		case 2:
			path, want = "/small", 4*len(small)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || int(n) != want {
			t.Fatalf("%s: status %d, %d bytes (%v), want 200 and %d bytes", path, resp.StatusCode, n, err, want)
		}
	}
	fmt.Printf("served through the %s proxy\n", which)
}

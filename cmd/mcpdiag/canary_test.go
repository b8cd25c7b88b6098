package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// The canary test's helper processes are this test binary, re-executed with
// MCPDIAG_CMD_TEST_CANARY set to their role: "stdio" (an MCP server on
// stdin/stdout that echoes secrets in results, errors and stray lines) or
// "matrix" (a client program for `mcpdiag matrix` that prints secrets on
// stderr and stdout and sends them in headers).
const canaryEnv = "MCPDIAG_CMD_TEST_CANARY"

func init() {
	switch os.Getenv(canaryEnv) {
	case "stdio":
		canaryStdioServer()
		os.Exit(0)
	case "matrix":
		os.Exit(canaryMatrixClient())
	}
}

// canary is a unique secret value: alphanumeric, so that it survives URL
// and JSON escaping unchanged and a plain search finds it.
func canary(name string) string { return "zqCnry" + name + "x7Q2vL9w" }

// canaryJWT is a JWT-shaped canary: a header, a payload naming it and a
// signature. Its payload and signature segments are searched for too, so
// that half a token cannot leak unseen.
func canaryJWT(name string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9." + enc([]byte(`{"sub":"`+canary(name)+`"}`)) + "." + enc([]byte("signature-"+canary(name)))
}

// canaryPEM is a PEM block whose body is the canary.
func canaryPEM(name string) string {
	return "-----BEGIN PRIVATE KEY-----\nMIIE" + canary(name) + "QIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"
}

// needles are the strings no output may contain: every canary, and the
// payload and signature segments of every JWT canary.
func needles(values map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range values {
		out[k] = v
		if strings.Count(v, ".") == 2 && strings.HasPrefix(v, "eyJ") {
			parts := strings.Split(v, ".")
			out[k+" (JWT payload)"], out[k+" (JWT signature)"] = parts[1], parts[2]
		}
		if strings.HasPrefix(v, "-----BEGIN") {
			out[k+" (PEM body)"] = canary(strings.TrimSuffix(k, "-pem"))
		}
	}
	return out
}

// relay is a TCP relay on 127.0.0.1 that copies bytes both ways and keeps
// a copy: the proof that a secret really was on the wire.
type relay struct {
	ln   net.Listener
	mu   sync.Mutex
	seen bytes.Buffer
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); testwait.Wait(t, &wg, "the relay's connections to end") })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					if n > 0 {
						r.mu.Lock()
						r.seen.Write(buf[:n])
						r.mu.Unlock()
						if _, werr := dst.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				dst.Close()
				src.Close()
			}
			go pipe(u, c)
			go pipe(c, u)
		}
	}()
	return r
}

func (r *relay) saw(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Contains(r.seen.Bytes(), []byte(s))
}

// otlpReceiver is a local OTLP/HTTP receiver: it keeps the raw bodies of
// every export request (decompressed), for a byte search.
type otlpReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies bytes.Buffer
	n      int
}

func startOTLP(t *testing.T) *otlpReceiver {
	o := &otlpReceiver{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rd io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			rd = zr
		}
		b, _ := io.ReadAll(rd)
		o.mu.Lock()
		o.bodies.Write(b)
		o.n++
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// outputs collects every byte mcpdiag wrote, by name.
type outputs map[string][]byte

func (o outputs) file(t *testing.T, name, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	o[name] = b
}

// run runs mcpdiag with args, keeps its stdout as name and its stderr as
// name+" stderr", and fails the test unless it exits with want.
func (o outputs) run(t *testing.T, name string, want int, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, nil, &stdout, &stderr); code != want {
		t.Fatalf("%s: exit %d, want %d\n%s%s", name, code, want, stdout.String(), stderr.String())
	}
	o[name], o[name+" stderr"] = stdout.Bytes(), stderr.Bytes()
}

// reports runs report over files in every format (text, --json, and
// --html with --har into dir) and keeps each output.
func (o outputs) reports(t *testing.T, dir string, files ...string) {
	t.Helper()
	page, har := filepath.Join(dir, "all.html"), filepath.Join(dir, "all.har")
	for _, mode := range [][]string{nil, {"--json"}, {"--html", page, "--har", har}} {
		var stdout, stderr bytes.Buffer
		if code := run(append(append([]string{"report"}, mode...), files...), nil, &stdout, &stderr); code == 2 {
			t.Fatalf("report %v: exit 2\n%s", mode, stderr.String())
		}
		o[fmt.Sprintf("report %v", mode)], o[fmt.Sprintf("report %v stderr", mode)] = stdout.Bytes(), stderr.Bytes()
	}
	o.file(t, "report --html", page)
	o.file(t, "report --har", har)
}

// leaks fails the test for each output that holds one of secrets, quoting
// where.
func (o outputs) leaks(t *testing.T, secrets map[string]string) {
	t.Helper()
	for _, kind := range sortedKeys(secrets) {
		needle := []byte(secrets[kind])
		for _, name := range sortedKeys(o) {
			if i := bytes.Index(o[name], needle); i >= 0 {
				lo, hi := max(0, i-80), min(len(o[name]), i+len(needle)+20)
				t.Errorf("%s leaks the %s secret: …%s…", name, kind, o[name][lo:hi])
			}
		}
	}
}

func get(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	return b
}

// TestCanariesInNoOutput is issue 11's canary test: every kind of secret
// (credential headers, query parameters, JSON members at any depth, form
// bodies, Bearer and JWT values and PEM blocks inside text and error
// messages, a client's stderr and stdout) goes through every producer of
// output: `mcpdiag proxy` (HTTP, with bodies recorded in full, metrics and
// OpenTelemetry spans to a local OTLP receiver; and stdio), `mcpdiag serve
// --log`, GET /admin/log, `mcpdiag call --record` (and its report and
// --json), `mcpdiag auth`, `mcpdiag report` (text, --json, --har, --html) over every record file,
// and `mcpdiag matrix --json --junit --record`; and the OAuth chain's own
// secrets (tokens, codes, verifiers, state, client secrets, assertions:
// canaryAuthChain). Every byte of every output
// is searched for every canary: zero hits. The relay between the proxy and
// serve, the forwarded stdio lines and the matrix client prove that each
// secret was really sent.
func TestCanariesInNoOutput(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{
		"bearer": canary("bearer"), "x-api-key": canary("xapikey"), "dpop": canaryJWT("dpop"),
		"iap-assertion": canaryJWT("iap"), "cookie": canary("cookie"), "access-code": canary("accesscode"),
		"query-auth": canary("qauth"), "query-pwd": canary("qpwd"), "query-jwt": canaryJWT("qjwt"),
		"aws_secret_access_key": canary("aws"), "apiSecret": canary("apisecret"), "passphrase": canary("passphrase"),
		"jwt-member":  canaryJWT("jwtmember"),
		"text-bearer": canary("textbearer"), "text-jwt": canaryJWT("textjwt"), "text-pem": canaryPEM("textpem"),
		"error-token": canary("errtoken"), "error-bearer": canary("errbearer"), "error-secret": canary("errsecret"),
		"error-jwt":   canaryJWT("errjwt"),
		"form-secret": canary("formsecret"), "form-code": canary("formcode"), "form-state": canary("formstate"),
		"stdio-member": canary("stdiomember"), "stdio-result": canary("stdioresult"), "stdio-stray": canary("stdiostray"),
		"stdio-error": canary("stdioerror"), "stdio-data": canary("stdiodata"),
		"matrix-stderr-bearer": canary("mxbearer"), "matrix-stderr-token": canary("mxtoken"),
		"matrix-stderr-jwt": canaryJWT("mxjwt"), "matrix-stdout-key": canary("mxkey"),
		"matrix-header-bearer": canary("mxhdrbearer"), "matrix-header-key": canary("mxhdrkey"),
		"matrix-argv-key": canary("mxargvkey"), "matrix-argv-token": canary("mxargvtoken"), "matrix-argv-bearer": canary("mxargvbearer"),
	}
	out := outputs{}

	// serve, with its log in a file, behind a relay that sees the bytes.
	serveLog := filepath.Join(dir, "serve.jsonl")
	su, serveOut := startServe(t, serveOptions{logFile: serveLog})
	sbase := strings.TrimSuffix(su, "/mcp")
	rl := startRelay(t, strings.TrimPrefix(sbase, "http://"))

	// The HTTP proxy in front of the relay: bodies in full, metrics, spans.
	otlp := startOTLP(t)
	proxyRec := filepath.Join(dir, "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{
		upstream: "http://" + rl.ln.Addr().String() + "/mcp", recordFile: proxyRec, recordBodies: "full",
		metricsAddr: "127.0.0.1:0", otlp: otlp.srv.URL,
	})

	// 1. `mcpdiag call` through the proxy: credential headers, query
	// parameters, nested JSON members, and text the tool echoes back.
	args, _ := json.Marshal(map[string]any{
		// The X-Api-Key value again, with no name near it: masked because
		// call registers the values of its credential headers as secrets.
		"text": "please keep Bearer " + secrets["text-bearer"] + " and " + secrets["text-jwt"] + "\n" + secrets["text-pem"] +
			"\nmy key is " + secrets["x-api-key"] + " and my cookie " + secrets["cookie"],
		"config": map[string]any{
			"aws_secret_access_key": secrets["aws_secret_access_key"],
			"nested":                []any{map[string]any{"apiSecret": secrets["apiSecret"], "deeper": map[string]any{"passphrase": secrets["passphrase"]}}},
			"jwt":                   secrets["jwt-member"],
		},
	})
	callURL := px.base + "/mcp?auth=" + secrets["query-auth"] + "&pwd=" + secrets["query-pwd"] + "&jwt=" + secrets["query-jwt"]
	callArgs := []string{"call", callURL, "echo", "--args", string(args), "--protocol", "2026-07-28",
		"--bearer", secrets["bearer"], "--header", "X-Api-Key: " + secrets["x-api-key"], "--header", "DPoP: " + secrets["dpop"],
		"--header", "X-Goog-IAP-JWT-Assertion: " + secrets["iap-assertion"], "--header", "Cookie: sid=" + secrets["cookie"],
		"--header", "X-Access-Code: " + secrets["access-code"]}
	callRec := filepath.Join(dir, "call.jsonl")
	var callOut, callErr bytes.Buffer
	if code := run(append(callArgs, "--record", callRec), strings.NewReader(""), &callOut, &callErr); code != 0 {
		t.Fatalf("call: exit %d\n%s%s", code, callOut.String(), callErr.String())
	}
	out["call report"], out["call stderr"] = callOut.Bytes(), callErr.Bytes()
	var callJSON, callJSONErr bytes.Buffer
	if code := run(append(callArgs, "--json"), strings.NewReader(""), &callJSON, &callJSONErr); code != 0 {
		t.Fatalf("call --json: exit %d\n%s", code, callJSONErr.String())
	}
	out["call --json"], out["call --json stderr"] = callJSON.Bytes(), callJSONErr.Bytes()

	// 2. A JSON-RPC error whose message and data carry secrets (the
	// scenario's params travel in the query string).
	params, _ := json.Marshal(map[string]any{
		"code": -32001, "message": "upstream rejected token=" + secrets["error-token"] + " (Bearer " + secrets["error-bearer"] + ")",
		"data": map[string]any{"client_secret": secrets["error-secret"], "detail": "bad jwt " + secrets["error-jwt"]},
	})
	errURL := px.base + "/s/errors.jsonrpc_error/mcp?params=" + url.QueryEscape(string(params))
	var errOut, errErr bytes.Buffer
	if code := run([]string{"call", errURL, "echo", "--args", `{"text":"x"}`, "--protocol", "2026-07-28", "--retries", "0", "--record", callRec}, strings.NewReader(""), &errOut, &errErr); code != 3 {
		t.Fatalf("call of the JSON-RPC error: exit %d, want 3\n%s%s", code, errOut.String(), errErr.String())
	}
	out["call report (error)"], out["call stderr (error)"] = errOut.Bytes(), errErr.Bytes()

	// 3. A form body (an OAuth token request sent to the MCP endpoint).
	form := "grant_type=authorization_code&client_secret=" + secrets["form-secret"] + "&code=" + secrets["form-code"] + "&state=" + secrets["form-state"]
	resp, err := http.Post(px.base+"/mcp", "application/x-www-form-urlencoded", strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	// 3b. The OAuth chain (issue 14): tokens, codes, PKCE verifiers, state,
	// client secrets and client assertions, as the wire showed them.
	proxyAuthRec := canaryAuthChain(t, dir, rl.ln.Addr().String(), rl, out, callRec, secrets)

	// The outputs of serve and the proxy, read while they run and after.
	out["GET /admin/log"] = get(t, sbase+"/admin/log")
	out["GET /metrics"] = get(t, px.metrics)
	px.stop()
	out["proxy stderr"] = []byte(px.stderr.String())
	out.file(t, "proxy --record", proxyRec)
	out.file(t, "call --record", callRec)
	otlp.mu.Lock()
	out["OTLP spans"] = append([]byte(nil), otlp.bodies.Bytes()...)
	spans := otlp.n
	otlp.mu.Unlock()
	if spans == 0 {
		t.Error("the OTLP receiver got no export request")
	}

	// 4. The stdio proxy, in front of a server that echoes secrets.
	t.Setenv(canaryEnv, "stdio")
	stdioRec := filepath.Join(dir, "stdio.jsonl")
	stdin := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"cfg":{"list":[{"secret_key":"` + secrets["stdio-member"] + `"}]}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{}}}`,
	}, "\n") + "\n"
	var stdioOut, stdioErr bytes.Buffer
	if code := run([]string{"proxy", "--stdio", "--record", stdioRec, "--record-bodies", "all", "--", os.Args[0], "-test.run=^$"}, strings.NewReader(stdin), &stdioOut, &stdioErr); code != 0 {
		t.Fatalf("stdio proxy: exit %d\n%s", code, stdioErr.String())
	}
	out.file(t, "stdio proxy --record", stdioRec)
	for _, k := range []string{"stdio-result", "stdio-stray", "stdio-error", "stdio-data"} {
		if !strings.Contains(stdioOut.String(), secrets[k]) {
			t.Errorf("the stdio server did not send %s: the test proves nothing for it\n%s", k, stdioOut.String())
		}
	}

	// 5. matrix with a client that leaks on stderr and stdout.
	t.Setenv(canaryEnv, "matrix")
	for k, v := range map[string]string{"MX_BEARER": "matrix-stderr-bearer", "MX_TOKEN": "matrix-stderr-token", "MX_JWT": "matrix-stderr-jwt",
		"MX_KEY": "matrix-stdout-key", "MX_HDR_BEARER": "matrix-header-bearer", "MX_HDR_KEY": "matrix-header-key"} {
		t.Setenv(k, secrets[v])
	}
	junit, mrec := filepath.Join(dir, "matrix.xml"), filepath.Join(dir, "matrix.jsonl")
	var mOut, mErr bytes.Buffer
	code := run([]string{"matrix", "--scenarios", "baseline,errors.tool_error", "--protocol", "2026-07-28", "--json", "--junit", junit, "--record", mrec,
		"--", os.Args[0], "-test.run=^$", "--api-key", secrets["matrix-argv-key"], "--token=" + secrets["matrix-argv-token"],
		"Authorization: Bearer " + secrets["matrix-argv-bearer"]}, nil, &mOut, &mErr)
	if code == 2 {
		t.Fatalf("matrix: usage error\n%s", mErr.String())
	}
	out["matrix --json"], out["matrix stderr"] = mOut.Bytes(), mErr.Bytes()
	out.file(t, "matrix --junit", junit)
	out.file(t, "matrix --record", mrec)

	// 6. serve's own outputs, once it has seen everything.
	out["GET /admin/log (end)"] = get(t, sbase+"/admin/log")
	out["serve stdout"] = []byte(serveOut.String())
	out.file(t, "serve --log", serveLog)
	checkAuthServerFacts(t, out["serve --log"])

	// 7. report over every record file: text, JSON and HAR.
	out.reports(t, dir, proxyRec, proxyAuthRec, callRec, stdioRec, mrec, serveLog)

	// The proof: the secrets of steps 1 to 3 were on the wire between the
	// proxy and serve (and the echoed text came back).
	for _, k := range []string{"bearer", "x-api-key", "dpop", "iap-assertion", "cookie", "access-code", "query-auth", "query-pwd", "query-jwt",
		"aws_secret_access_key", "apiSecret", "passphrase", "jwt-member", "text-bearer", "text-jwt", "error-token", "error-bearer",
		"error-secret", "error-jwt", "form-secret", "form-code", "form-state"} {
		if !rl.saw(secrets[k]) {
			t.Errorf("the relay never saw %s: the test proves nothing for it", k)
		}
	}
	if !rl.saw("MIIE" + canary("textpem")) {
		t.Error("the relay never saw the PEM block")
	}
	// And the outputs are the real thing: non-empty, with masks where the
	// secrets were.
	for _, name := range []string{"proxy --record", "proxy (auth) --record", "call --record", "stdio proxy --record", "serve --log", "matrix --junit", "matrix --json", "report --har", "report --html", "GET /metrics", "OTLP spans"} {
		if len(out[name]) == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	for _, name := range []string{"proxy --record", "call --record", "stdio proxy --record", "serve --log", "report --har", "report --html"} {
		if !bytes.Contains(out[name], []byte("[redacted:len=")) {
			t.Errorf("%s holds no mask: were the secrets recorded at all?", name)
		}
	}

	// The search: every needle in every output.
	hits := 0
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for kind, needle := range needles(secrets) {
		for _, name := range names {
			if i := bytes.Index(out[name], []byte(needle)); i >= 0 {
				hits++
				lo, hi := max(0, i-120), min(len(out[name]), i+len(needle)+40)
				t.Errorf("%s leaks the %s canary: …%s…", name, kind, out[name][lo:hi])
			}
		}
	}
	t.Logf("%d outputs, %d bytes, %d needles searched, %d hits", len(out), func() (n int) {
		for _, b := range out {
			n += len(b)
		}
		return
	}(), len(needles(secrets)), hits)
}

// canaryStdioServer answers MCP requests on stdin: echo's result carries a
// Bearer credential, fail's error carries secrets in its message and data,
// and a stray line on stdout and a line on stderr carry more.
func canaryStdioServer() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	stray := false
	for sc.Scan() {
		m, ok := parseRPCRequest(sc.Bytes())
		if !ok || m.ID == nil {
			continue
		}
		if !stray {
			stray = true
			fmt.Println("debug: Authorization: Bearer " + canary("stdiostray"))
			fmt.Fprintln(os.Stderr, "token="+canary("stdiostray"))
		}
		if m.Params.Name == "fail" {
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"login failed: Bearer %s","data":{"password":"%s"}}}`+"\n",
				m.ID, canary("stdioerror"), canary("stdiodata"))
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"use Bearer %s"}]}}`+"\n", m.ID, canary("stdioresult"))
	}
}

// canaryMatrixClient is a client program for `mcpdiag matrix`: it prints
// secrets on stderr and stdout, then makes the case's call with credential
// headers, as a real client that logs too much would.
func canaryMatrixClient() int {
	u := os.Args[len(os.Args)-1]
	fmt.Fprintf(os.Stderr, "connecting with Authorization: Bearer %s\nretrying with token=%s (%s)\n",
		os.Getenv("MX_BEARER"), os.Getenv("MX_TOKEN"), os.Getenv("MX_JWT"))
	fmt.Printf("api_key: %s\n", os.Getenv("MX_KEY"))
	protocol := os.Getenv("MCP_PROTOCOL")
	if protocol == "" {
		protocol = client.ProtocolAuto
	}
	c, err := client.New(client.Options{URL: u, Protocol: protocol, Timeout: 10 * time.Second, Bearer: os.Getenv("MX_HDR_BEARER"),
		Header: http.Header{"X-Api-Key": {os.Getenv("MX_HDR_KEY")}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var args json.RawMessage
	if a := os.Getenv("MCP_ARGS"); a != "" {
		args = json.RawMessage(a)
	}
	call, err := c.CallTool(context.Background(), os.Getenv("MCP_TOOL"), args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("outcome: %s\n", call.Outcome)
	return 0
}

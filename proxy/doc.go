// Package proxy is mcpdiag's recording proxy: it sits between a real MCP
// client and a real MCP server, changes nothing, and writes one classified
// record per exchange, so that "the tool failed" can be traced to the layer
// where it failed.
//
//	u, _ := url.Parse("https://mcp.example.com/mcp")
//	records, _ := record.OpenSink("calls.jsonl", record.SinkOptions{Async: true,
//		OnLoss: record.PrintLosses(os.Stderr, "proxy: ")})
//	ln, _ := net.Listen("tcp", "127.0.0.1:8081")
//	err := proxy.Serve(ctx, ln, proxy.Options{Upstream: u, Records: records})
//
// [Serve] (and [Proxy.Serve]) serve until ctx ends and then shut down in
// order: stop accepting, let open exchanges finish for
// Options.Shutdown.Timeout, cut the rest (their records say the shutdown cut
// them), wait for every record, close the sink; a *[ServeError] says what
// was lost. A program with its own http.Server does the same by hand:
// srv.Shutdown, p.Close (every exchange finished and its record handed
// over), records.Close (every record on disk).
//
// [RunStdio] does the same for a server run as a child process over stdio.
//
// # Overview
//
// One chain of http.Handlers, as in `mcpdiag serve`:
//
//	client ─► loopback guard ─► recorder.Recorder ─► admin guard ─► [fault scenarios] ─► httputil.ReverseProxy ─► upstream
//
// The recording is package recorder's, the same middleware `mcpdiag serve`
// records with: it reads the request body before forwarding it (up to
// Options.MaxRequestParse), copies every byte to the classifier only after
// it was flushed to the client, and writes exactly one record per exchange
// (see the package's doc). The proxy adds the upstream leg: its transport
// and error handler report it through recorder.From(ctx).Up (timings, the
// error that cut it, the RFC 9209 error type and the response flag), its
// Begin and Finish hooks the tool-definition drift and unknown-tool
// warnings and the Observer. [Proxy.Wait] and [Proxy.Close] wait for every
// record, so a server shut down and a proxy closed have written them all.
//
// # Failure vocabulary
//
// The record says what the client saw (the classifier's outcome) and, in its
// typed "flags" member (record.Flags), why, in Envoy's response-flag codes: UF
// (the upstream could not be reached: the proxy answered 502/504 with a
// Proxy-Status header, RFC 9209), UC (the upstream dropped the connection
// before responding: so did the proxy), UT, DF, UPE, UR (the upstream cut the
// response after it started: the client got the cut stream), DC (the client
// left), FI (a fault scenario fired; the "fault" member holds the decision),
// and mcpdiag's own SD (the proxy shut down with the exchange in flight), UX
// (the stdio server ended with the request unanswered) and HJ (a handler took
// over the connection). The note says the same in words, for people; no code
// reads it.
package proxy

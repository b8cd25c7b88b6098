// Package recorder is the one recorder of mcpdiag: an http.Handler
// middleware that passes every request to the handler behind it unchanged
// and writes one classified exchange record (package record) per HTTP
// exchange. Both the recording proxy and the fault server are built on it:
//
//	proxy: client ─► Recorder ─► [faults.Endpoint] ─► httputil.ReverseProxy ─► upstream
//	serve: client ─► router ─► Recorder ─► faults.Endpoint ─► fixture
//
// The recorder reads the request body before passing it on (up to
// Options.MaxRequestParse; the rest streams after it), to learn the JSON-RPC
// id, method, tool, protocol version and client, then passes the request on
// as it came. It wraps the ResponseWriter: every byte written to the client
// is written first, flushed, and only then copied to the classifier, which
// runs on the exchange's own goroutine and reads the copy through a bounded
// pipe. An event stream is scanned once: the classifier's event reader takes
// the pipe's chunks themselves (wire.SSEChunkSource), and each chunk carries
// when it was flushed, so that the same scan times the events' arrival. The
// forwarding path never waits for
// the classifier (unless it falls 256 KiB behind) and never for the record
// sink. Classification starts lazily, once 16 KiB are waiting or the
// response ends, and holds at most Options.ClassifyMemory over all
// exchanges (past it: NOT_CLASSIFIED, the response untouched).
//
// A fault endpoint (faults.Endpoint) behind the recorder tells the exchange
// its decision through the request's context (faults.WithTap, installed by
// the recorder): the record's typed "fault" member (and with
// Options.ServerFacts the endpoint's counters and the "params" facts). A
// handler that forwards the request reports the upstream leg through
// From(ctx).Up: the record's flags UF, UC, UT, DF, UPE (Up.Flag), UR and the
// notes that say them in words.
//
// # Exactly one record per exchange
//
// Serve counts the exchange in, and its deferred end (which also runs when
// the handler panics with http.ErrAbortHandler to cut a stream) closes the
// pipe with the reason the response ended and lets the exchange's goroutine
// classify, build the record, call the Finish hook and hand the record to
// the Sink; a record the sink refuses is counted (Stats.RecordErrors) and
// named in the log. [Recorder.Wait] waits for all of them. The flags say how
// the exchange ended: DC (the client left), SD (the owner shut down, see
// BeginShutdown), HJ (a handler took over the connection), AB (the handler
// aborted the response), FI (a fault scenario fired).
package recorder

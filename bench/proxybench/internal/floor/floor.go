// Package floor is proxybench's target "floor": the plain tuned
// httputil.ReverseProxy of package plain plus only the work a recording
// proxy cannot skip, done the cheapest way mcpdiag's own packages allow.
// It is a measuring device, not a proxy to ship: what mcpdiag proxy costs
// above it is the price of its design and of the record's other fields,
// not of the guarantees (docs/benchmarks.md, ssefloor19).
//
// Per exchange it does, and only does:
//   - the request body read once (up to MaxRequestParse, the rest streamed
//     after it) and parsed once with wire.ParseMessage (id with its JSON
//     type, method, tool, protocol version);
//   - every response byte forwarded as ReverseProxy with FlushInterval -1
//     forwards it (a write and a flush per read; the head of a body of known
//     length flushed alone only if its body is later than
//     plain.HeadFlushDelay, as mcpdiag's and the plain proxy's) and scanned
//     once, on the handler's goroutine, with no second copy: each read lands
//     in a pooled chunk that is written to the client, handed as it is to the
//     classifier's event reader (wire.NewPooledSSEChunkReader) or kept for the
//     classification of a JSON body (classify.Classifier), and kept for the
//     record's body excerpt up to its limit. A chunk of an event stream is
//     forwarded once the classifier has read the events it completes, so that
//     a server request on the stream is noted before the client can have it
//     (the guarantee mcpdiag's request watch gives), and before the next read
//     of the upstream (no event waits for the next one);
//   - one record per exchange (id, method, tool, status, the verdict by
//     record.Record.SetResult, the timings, the response body excerpt of an
//     exchange that did not succeed, at the default body mode and limit),
//     redacted and encoded by the record package's Encoder and written by
//     record.Async (one writer goroutine, group commit with one write(2) per
//     batch, fsync on close): the CLI's default write path. The record is
//     built and encoded by one of two long-lived goroutines the ended
//     exchange is handed to, so that the end of the response never waits
//     for it.
//
// Not done (what mcpdiag does beyond the guarantees above, or what the
// benchmark's exchanges never need): the request and response headers, URL,
// client, session, args hash and capabilities in the record; the 2025
// sessions; the fault layer; the loopback and admin guards; the upstream
// leg's flags (UF, UC, UR) beyond the error; the shutdown's accounting; an
// idle stream's empty read (an idle stream through the floor holds its
// chunk and its classifier's state on the handler's goroutine).
package floor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/plain"
	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

const (
	// MaxRequestParse bounds the request body read before forwarding
	// (mcpdiag's recorder.DefaultMaxRequestParse).
	MaxRequestParse = 4 << 20
	// ClassifyMemory is the memory the classifications of all exchanges
	// share (mcpdiag proxy's --classify-memory default).
	ClassifyMemory = 128 << 20
	// chunkSize is the size of each read of the upstream body: the plain
	// proxy's copy buffer and mcpdiag's (proxy.CopyBufferSize).
	chunkSize = plain.CopyBufferSize
	// minRead is the least room a chunk must have left to take the next
	// read; a chunk with less is kept whole (or reused) and a new one taken.
	minRead = 4 << 10
	// maxServerRequests bounds the server requests remembered.
	maxServerRequests = 4096
	// recordWorkers is the number of goroutines that build and encode the
	// records, long-lived so that their stacks, grown once by the encoder,
	// stay grown (a goroutine per record cost its creation and a stack
	// growth per exchange, ~5 µs: ssefloor19's second profile).
	recordWorkers = 2
	// recordQueue is how many ended exchanges wait for them at most; an
	// exchange that finds the queue full waits (after its response ended).
	recordQueue = 1024
)

// Writer takes one record per exchange (a *record.Async).
type Writer interface {
	Write(rec *record.Record) error
}

// Proxy is the floor proxy; New makes one.
type Proxy struct {
	rp      *httputil.ReverseProxy
	sink    Writer
	budget  *wire.Budget
	records sync.WaitGroup // records being encoded and written
	queue   chan *exchange // the ended exchanges, to the record goroutines
	workers sync.WaitGroup

	mu      sync.Mutex
	srvReqs map[string]struct{} // ids of server requests seen on streams
	lost    int                 // records the sink refused
}

// New returns the floor proxy to upstream over rt, writing a record per
// exchange to sink.
func New(upstream *url.URL, rt http.RoundTripper, sink Writer) *Proxy {
	p := &Proxy{sink: sink, budget: wire.NewBudget(ClassifyMemory), srvReqs: map[string]struct{}{}, queue: make(chan *exchange, recordQueue)}
	for range recordWorkers {
		p.workers.Go(func() {
			for ex := range p.queue {
				ex.record()
			}
		})
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        rewrite(upstream),
		FlushInterval:  plain.HeadFlushDelay,
		Transport:      rt,
		BufferPool:     plain.BufferPool(),
		ModifyResponse: modifyResponse,
		ErrorHandler:   errorHandler,
	}
	return p
}

// rewrite is plain's Rewrite, and passes on the request body read whole as
// the in-memory reader it is: ReverseProxy's outgoing request carries a
// wrapper of it, for which net/http flushes the headers alone before the
// body (golang/go#22088), one more write for the floor and one more read
// for the upstream (mcpdiag proxy passes its in-memory body on the same
// way: recorder.Exchange.InMemoryBody).
func rewrite(upstream *url.URL) func(*httputil.ProxyRequest) {
	return func(pr *httputil.ProxyRequest) {
		pr.SetURL(upstream)
		pr.Out.Host = ""
		if ex, ok := pr.In.Context().Value(ctxKey{}).(*exchange); ok && ex.memBody != nil && pr.Out.Body != nil {
			pr.Out.Body = ex.memBody
		}
	}
}

// Close waits for the records of the exchanges that ended, stops the
// record goroutines, and reports how many records the sink refused (an
// error naming them; nil when none). No request may be served after it.
func (p *Proxy) Close() error {
	p.records.Wait()
	close(p.queue)
	p.workers.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lost > 0 {
		return fmt.Errorf("floor: the sink refused %d record(s)", p.lost)
	}
	return nil
}

type ctxKey struct{}

// exchange is one request and its response: the ResponseWriter that
// ReverseProxy writes through (its flushes ordered with the floor's own
// writes), the chunk source of the classifier's event reader, and the
// facts of the record.
type exchange struct {
	p     *Proxy
	w     http.ResponseWriter
	mu    sync.Mutex // orders ReverseProxy's timer flush with forward
	start time.Time
	msg   wire.Message
	// memBody is the request body passed on when it was read whole.
	memBody io.ReadCloser

	status  int
	header  http.Header
	up      upBody
	upErr   error // the round trip's, when no response came (answered 502)
	headers time.Duration
	first   time.Duration // to the flush of the first event's end
	total   time.Duration

	// The response body's bytes: kept chunks (full ones), and cur, the
	// chunk being read into (its length the bytes in it). n counts all
	// bytes kept, keepMax bounds them.
	kept    [][]byte
	cur     []byte
	n       int
	keepMax int
	more    bool   // bytes past keepMax were read
	pending []byte // the event reader's last chunk, not forwarded yet
	wrote   int64
	rerr    error // the upstream body's read error (io.EOF at its end)
	werr    error // the client's write error
	firstAt bool  // the first event ended in pending: time it at its flush

	res        classify.Result
	classified bool
}

// ServeHTTP reads and parses the request body, forwards the request with
// the reverse proxy, and, when the exchange has ended, hands it to the
// record goroutines.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ex := &exchange{p: p, w: w, start: time.Now()}
	body, whole, err := readBody(r)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "reading the request body: "+err.Error()+"\n")
		ex.status = http.StatusBadRequest
		ex.header = http.Header{}
		ex.end()
		return
	}
	ex.msg = wire.ParseMessage(body)
	if whole {
		ex.memBody = io.NopCloser(bytes.NewReader(body))
		r.Body = ex.memBody
	} else {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	}
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, ex))
	defer ex.end() // also when ReverseProxy panics to cut the response
	p.rp.ServeHTTP(ex, r)
}

// readBody reads the request body up to MaxRequestParse; whole reports
// that it was read to its end.
func readBody(r *http.Request) (body []byte, whole bool, err error) {
	if r.ContentLength >= 0 && r.ContentLength <= MaxRequestParse {
		body = make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, false, err
		}
		return body, true, nil
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, MaxRequestParse))
	if err != nil {
		return nil, false, err
	}
	return body, len(body) < MaxRequestParse, nil
}

// The exchange is the http.ResponseWriter ReverseProxy writes through.

func (ex *exchange) Header() http.Header { return ex.w.Header() }

func (ex *exchange) WriteHeader(code int) { ex.w.WriteHeader(code) }

func (ex *exchange) Write(b []byte) (int, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.w.Write(b)
}

// FlushError flushes to the client (ReverseProxy's timer flush and its
// flushes after a write), ordered with the floor's own writes.
func (ex *exchange) FlushError() error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return flush(ex.w)
}

// Unwrap gives http.ResponseController the server's writer.
func (ex *exchange) Unwrap() http.ResponseWriter { return ex.w }

func flush(w http.ResponseWriter) error {
	if f, ok := w.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func modifyResponse(resp *http.Response) error {
	ex := resp.Request.Context().Value(ctxKey{}).(*exchange)
	ex.headers = time.Since(ex.start)
	ex.status, ex.header = resp.StatusCode, resp.Header
	ex.up = upBody{ex: ex, rc: resp.Body}
	resp.Body = &ex.up
	return nil
}

func errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	ex := r.Context().Value(ctxKey{}).(*exchange)
	ex.upErr = err
	ex.status, ex.header = http.StatusBadGateway, http.Header{}
	w.WriteHeader(http.StatusBadGateway)
}

// upBody is the upstream body as ReverseProxy reads it: its first Read
// forwards the whole body itself (forwardAll) and ends the copy.
type upBody struct {
	ex   *exchange
	rc   io.ReadCloser
	done bool
}

func (b *upBody) Read([]byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	b.done = true
	ex := b.ex
	ex.forwardAll()
	switch {
	case ex.rerr != nil && ex.rerr != io.EOF && !errors.Is(ex.rerr, context.Canceled):
		return 0, ex.rerr // ReverseProxy cuts the client's response
	case ex.werr != nil:
		return 0, context.Canceled
	}
	return 0, io.EOF
}

func (b *upBody) Close() error { return b.rc.Close() }

// forwardAll forwards the response body, classifying it as it goes: an
// event stream through the classifier's event reader over the forwarded
// chunks, a JSON (or other) body read whole (kept up to the classifier's
// bound) and classified at its end.
func (ex *exchange) forwardAll() {
	p := ex.p
	cl := classify.Classifier{Budget: p.budget}
	cx := ex.classifyExchange()
	if ex.status >= 200 && ex.status <= 299 && isEventStream(ex.header.Get("Content-Type")) {
		ex.keepMax = record.DefaultBodyLimit
		rd := wire.NewPooledSSEChunkReader(ex, 0)
		rd.SetBudget(p.budget)
		cl.OnServerRequest = p.sawServerRequest
		cx.Events, cx.Body = rd, eventBody{}
		_ = cl.ClassifyInto(cx, &ex.res)
		rd.Drain() // forward what the classifier did not read
		ex.forwardPending()
		rd.Recycle()
		ex.classified = true
		return
	}
	ex.keepMax = wire.DefaultMaxEventSize + 1
	for {
		c, err := ex.read()
		if len(c) > 0 {
			ex.forward(c)
		}
		if err != nil || ex.werr != nil {
			break
		}
	}
	b := ex.bytes()
	switch {
	case ex.rerr != io.EOF && ex.rerr != nil:
		cx.Body = io.MultiReader(bytes.NewReader(b), errReader{ex.rerr})
	case ex.more:
		// Over the classifier's bound: it reads its bound (the kept
		// chunks) and says so.
		cx.Body = bytes.NewReader(b)
	case p.budget.TryReserve(int64(len(b)) + 1):
		// Charged what the classifier's own read would reserve, as
		// mcpdiag's recorder does for a body it holds.
		cx.BodyBytes = b
		defer p.budget.Release(int64(len(b)) + 1)
	default:
		cx.Body = bytes.NewReader(b) // the classifier reserves, and is refused
	}
	_ = cl.ClassifyInto(cx, &ex.res)
	ex.classified = true
}

// eventBody is the classifier's Body of an event stream: it reads the
// stream's events only through Events; a Read means it took another path.
type eventBody struct{}

func (eventBody) Read([]byte) (int, error) { return 0, io.EOF }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func (ex *exchange) classifyExchange() *classify.Exchange {
	m := &ex.msg
	id := wire.ID{}
	if m.Kind == wire.MessageRequest || m.IsNullIDRequest() {
		id = m.ID
	}
	return &classify.Exchange{
		Method: m.Method, ID: id, Notification: m.Kind != wire.MessageRequest,
		ProtocolVersion: m.Protocol, Extensions: m.Extensions,
		Status: ex.status, Header: ex.header,
	}
}

// NextChunk hands the event reader the next bytes of the upstream body,
// first forwarding the chunk it handed before (the reader has read every
// event that chunk completes).
func (ex *exchange) NextChunk() ([]byte, error) {
	ex.forwardPending()
	if ex.werr != nil {
		return nil, ex.werr
	}
	c, err := ex.read()
	if len(c) == 0 {
		return nil, err
	}
	ex.pending = c
	return c, nil
}

// EventEnd notes the end of the first event, timed when it is flushed.
func (ex *exchange) EventEnd(end int64) {
	if ex.first == 0 && end > ex.wrote {
		ex.firstAt = true
	}
}

func (ex *exchange) forwardPending() {
	if ex.pending != nil {
		ex.forward(ex.pending)
		ex.pending = nil
	}
}

// read reads the upstream body into the free room of the current chunk
// (a new one when that is under minRead) and returns the bytes read; at
// the end (or a failure) no bytes and the error, kept in rerr.
func (ex *exchange) read() ([]byte, error) {
	if ex.rerr != nil {
		return nil, ex.rerr
	}
	for {
		if cap(ex.cur)-len(ex.cur) < minRead {
			ex.nextChunk()
		}
		at := len(ex.cur)
		n, err := ex.up.rc.Read(ex.cur[at:cap(ex.cur)])
		ex.cur = ex.cur[:at+n]
		if err != nil {
			ex.rerr = err
		}
		if n > 0 {
			return ex.cur[at : at+n], nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// nextChunk puts the current chunk among the kept ones (while the kept
// bytes are under keepMax) or reuses it, and takes a new one.
func (ex *exchange) nextChunk() {
	if ex.cur != nil {
		if ex.n < ex.keepMax {
			ex.kept = append(ex.kept, ex.cur)
			ex.n += len(ex.cur)
		} else {
			ex.more = true
			ex.cur = ex.cur[:0]
			return
		}
	}
	ex.cur = getChunk()
}

// forward writes b to the client and flushes it, as ReverseProxy's copy
// does each read with FlushInterval -1.
func (ex *exchange) forward(b []byte) {
	if ex.werr != nil {
		return
	}
	ex.mu.Lock()
	m, err := ex.w.Write(b)
	if err == nil {
		err = flush(ex.w)
	}
	ex.mu.Unlock()
	ex.wrote += int64(m)
	if err != nil {
		ex.werr = err
	}
	if ex.firstAt {
		ex.firstAt = false
		ex.first = time.Since(ex.start)
	}
}

// bytes returns the kept body: the current chunk itself when it is all
// (no copy), else the chunks joined.
func (ex *exchange) bytes() []byte {
	if len(ex.kept) == 0 {
		return ex.cur
	}
	b := make([]byte, 0, ex.n+len(ex.cur))
	for _, c := range ex.kept {
		b = append(b, c...)
	}
	return append(b, ex.cur...)
}

// sawServerRequest notes the id of a server request on a stream, for the
// client's answer to it (bounded).
func (p *Proxy) sawServerRequest(msg []byte) {
	id, _, _ := wire.ScanHead(msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.srvReqs) >= maxServerRequests {
		for k := range p.srvReqs {
			delete(p.srvReqs, k)
			break
		}
	}
	p.srvReqs[string(id)] = struct{}{}
}

// end classifies an exchange that had no response body to forward (the
// upstream failed, or the request was refused) and hands the record to the
// record goroutines.
func (ex *exchange) end() {
	ex.total = time.Since(ex.start)
	if !ex.classified {
		cx := ex.classifyExchange()
		if cx.Header == nil {
			cx.Header = http.Header{}
		}
		cx.BodyBytes = ex.bytes()
		_ = (&classify.Classifier{}).ClassifyInto(cx, &ex.res)
	}
	ex.p.records.Add(1)
	ex.p.queue <- ex
}

// record builds the exchange's record, hands it to the sink and gives the
// chunks back.
func (ex *exchange) record() {
	p := ex.p
	defer p.records.Done()
	rec := record.Record{Kind: record.KindExchange, Time: ex.start, Method: ex.msg.Method, PostCount: 1}
	rec.JSONRPC.ID = ex.msg.ID
	if ex.msg.Method == "tools/call" || ex.msg.Method == "prompts/get" {
		rec.Tool = ex.msg.Tool
	}
	rec.SetResult(&ex.res)
	rec.Status, rec.ResponseBytes = ex.status, ex.wrote
	rec.HTTPStatuses = []int{ex.status}
	if ex.upErr != nil {
		rec.Note = "the upstream failed: " + ex.upErr.Error()
	}
	rec.Timings = record.Timings{Headers: record.Duration(ex.headers), FirstEvent: record.Duration(ex.first), Total: record.Duration(ex.total)}
	if !rec.Outcome.Success() && (ex.n > 0 || len(ex.cur) > 0) {
		b := ex.bytes()
		lim := record.DefaultBodyLimit
		rec.ResponseBody = &record.Body{Text: string(b[:min(len(b), lim)]), Truncated: len(b) > lim || ex.more}
	}
	err := p.sink.Write(&rec)
	for _, c := range ex.kept {
		putChunk(c)
	}
	if ex.cur != nil {
		putChunk(ex.cur)
	}
	ex.kept, ex.cur = nil, nil
	if err != nil {
		p.mu.Lock()
		p.lost++
		p.mu.Unlock()
	}
}

// isEventStream reports whether a Content-Type names an event stream.
func isEventStream(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

var chunks = sync.Pool{New: func() any { return new([chunkSize]byte) }}

func getChunk() []byte { return chunks.Get().(*[chunkSize]byte)[:0] }

func putChunk(c []byte) { chunks.Put((*[chunkSize]byte)(c[:chunkSize])) }

// Open returns the floor proxy to upstream over rt recording to the file
// path as `mcpdiag proxy --record PATH` opens it by default: appended
// (O_APPEND, 0600 when new), the default body mode's limit, fsync on close,
// behind record.Async with the default queue and the block policy. close
// waits for the records of the ended exchanges, then closes the file; its
// error names what was lost.
func Open(upstream *url.URL, rt http.RoundTripper, path string) (p *Proxy, close func() error, err error) {
	enc := record.Encoder{BodyLimit: record.DefaultBodyLimit}
	fw, err := record.OpenFile(path, record.FileOptions{Sync: record.SyncClose, Encoder: enc})
	if err != nil {
		return nil, nil, fmt.Errorf("records: %w", err)
	}
	sink := record.NewAsync(fw, record.AsyncOptions{QueueSize: record.DefaultQueueSize, Policy: record.QueueBlock, Encoder: enc})
	p = New(upstream, rt, sink)
	return p, func() error {
		perr := p.Close()
		if err := sink.Close(); err != nil {
			return errors.Join(perr, fmt.Errorf("records: %w", err))
		}
		if s := sink.Stats(); s.Lost() > 0 {
			return errors.Join(perr, fmt.Errorf("records: %d lost", s.Lost()))
		}
		return perr
	}, nil
}

package client

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// sseWatch passes an event stream through to the classifier unchanged and
// notes, as the bytes go by, what a reconnection needs (WHATWG HTML
// §9.2.6): the last event id (the id field's value as of the last
// dispatched event) and the reconnection time (the last retry field made
// of digits). It reads the stream with wire.SSEScanner and keeps only an
// id or retry value, so memory stays bounded whatever the stream holds.
type sseWatch struct {
	r  io.Reader
	sc wire.SSEScanner

	line     []byte // the id or retry value being read
	long     bool   // its line outgrew maxWatchedLine: ignored
	idBuffer string // the id field's value so far (WHATWG: last event ID buffer)

	lastEventID string
	retry       time.Duration
	hasRetry    bool
}

// maxWatchedLine bounds the id or retry line kept in memory; event ids
// longer than this are not used for resumption.
const maxWatchedLine = 1024

func (w *sseWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.scan(p[:n])
	return n, err
}

func (w *sseWatch) scan(b []byte) {
	w.sc.Feed(b)
	for t := w.sc.Next(); t != nil; t = w.sc.Next() {
		switch {
		case t.Kind == wire.SSEEnd:
			// A blank line dispatches the event: the last event id becomes
			// the id buffer, even for an event without data.
			w.lastEventID = w.idBuffer
		case t.Kind == wire.SSEField && (t.Field == wire.FieldID || t.Field == wire.FieldRetry):
			if t.First {
				w.line, w.long = w.line[:0], false
			}
			if t.End-t.Line > maxWatchedLine {
				w.long, w.line = true, w.line[:0]
			}
			if !w.long {
				w.line = append(w.line, t.Value...)
			}
			if t.Last && !w.long {
				w.field(t.Field, w.line)
			}
		}
	}
}

// field applies a whole id or retry field.
func (w *sseWatch) field(name wire.SSEFieldName, value []byte) {
	switch name {
	case wire.FieldID:
		if bytes.IndexByte(value, 0) < 0 {
			w.idBuffer = string(value)
		}
	case wire.FieldRetry:
		if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 && allDigits(value) {
			w.retry = time.Duration(min(ms, int64(time.Hour/time.Millisecond))) * time.Millisecond
			w.hasRetry = true
		}
	}
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && strings.EqualFold(mt, "text/event-stream")
}

// resumeStream sends the GET that resumes the 2025-11-25 response stream
// of the call's last request after the last event it delivered. The answer
// is classified as the rest of that request: same method, same id.
func (c *Client) resumeStream(ctx context.Context, st *callState) *Exchange {
	hdr := http.Header{}
	hdr.Set("MCP-Protocol-Version", c.legacyVersion())
	if c.session != "" {
		hdr.Set("Mcp-Session-Id", c.session)
	}
	rq := &request{method: "tools/call", id: st.resumeID, tool: st.call.Tool, header: hdr, origin: st.origin, protocol: c.protocol, lastEventID: st.resume}
	st.resume = ""
	return c.send(ctx, rq)
}

// listenWait bounds the wait for the standalone stream's headers before the
// request goes out.
const listenWait = time.Second

// listen opens the 2025-11-25 standalone GET stream for the length of one
// request, when the client can answer server requests (Options.Inputs). A
// server may send a request such as elicitation/create there rather than on
// the request's own response stream (the TypeScript SDK does for a request
// its tool makes through the server object), and drops it when no stream is
// open. Requests that arrive are answered as on the response stream; the
// GET itself is a listening channel, not an exchange, and is not recorded.
// The returned function closes the stream and waits for it to end.
func (c *Client) listen(ctx context.Context) (stop func()) {
	if c.protocol != Protocol2025 || c.opts.Inputs == nil || c.session == "" {
		return func() {}
	}
	lctx, cancel := context.WithCancel(ctx)
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		c.standalone(lctx, ctx, ready)
	}()
	t := time.NewTimer(min(listenWait, c.opts.firstByte()))
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	case <-ctx.Done():
	}
	return func() { cancel(); <-done }
}

// standalone reads the standalone stream until ctx ends, answering every
// server request on it: asked for under ctx, POSTed under actx, the
// request's own context, not the stream's, so that an answer POSTed as the
// request ends (a server may send the request's response before it
// answers the POST) is not cut by the stream's end, which stop waits for,
// while a question still open then (a terminal prompt) ends, and does not
// hold the call open. ready is closed once the server
// answered the GET (or failed to).
func (c *Client) standalone(ctx, actx context.Context, ready chan<- struct{}) {
	var once sync.Once
	signal := func() { once.Do(func() { close(ready) }) }
	defer signal()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opts.URL, nil)
	if err != nil {
		return
	}
	for k, vs := range c.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", c.legacyVersion())
	req.Header.Set("Mcp-Session-Id", c.session)
	if v, _, _ := c.authorization(); v != "" {
		req.Header.Set("Authorization", v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	signal()
	// 405 (no standalone stream) and anything that is not a stream end the
	// listening quietly: the stream is optional.
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header.Get("Content-Type")) {
		return
	}
	rd := wire.NewSSEReader(resp.Body, c.opts.MaxEventSize)
	for {
		ev, err := rd.Next()
		if err != nil {
			return
		}
		// What the classifier hands on from a POST's stream, the one
		// rule: the client answers the same requests on either stream.
		if wire.IsServerRequest(ev.Type, ev.Data) {
			c.answerServerRequest(ctx, actx, append([]byte(nil), ev.Data...))
		}
	}
}

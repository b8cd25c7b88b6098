package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// HARVersion is the HAR version written.
const HARVersion = "1.2"

// HAR is an HTTP Archive (HAR 1.2): what browser devtools import. The types
// below hold the members mcpdiag writes; names starting with "_" are custom
// fields, which other tools ignore.
type HAR struct {
	Log HARLog `json:"log"`
}

// HARLog is the archive's "log".
type HARLog struct {
	Version string     `json:"version"`
	Creator HARCreator `json:"creator"`
	Entries []HAREntry `json:"entries"`
	// Comment names the exchange records without an outcome that the
	// archive left out (LeftOut.Comment), when there are any.
	Comment string `json:"comment,omitempty"`
	// LeftOut lists them, as the custom field "_leftOut".
	LeftOut *LeftOut `json:"_leftOut,omitempty"`
}

// HARCreator names the program that wrote the archive.
type HARCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HAREntry is one exchange.
type HAREntry struct {
	// StartedDateTime is when the request started (RFC 3339 / ISO 8601).
	StartedDateTime string `json:"startedDateTime"`
	// Time is the total time in milliseconds: Send + Wait + Receive.
	Time     float64     `json:"time"`
	Request  HARRequest  `json:"request"`
	Response HARResponse `json:"response"`
	// Cache is always empty: nothing is known about caches.
	Cache   struct{}   `json:"cache"`
	Timings HARTimings `json:"timings"`
	// Comment is "OUTCOME (layer): reason".
	Comment string `json:"comment,omitempty"`
	// ResourceType is "fetch", so that devtools list the entry with
	// Fetch/XHR.
	ResourceType string `json:"_resourceType,omitempty"`
	// MCP holds the record's diagnosis.
	MCP *HARMCP `json:"_mcpdiag,omitempty"`
}

// HARNameValue is a header, query parameter or cookie.
type HARNameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HARRequest is an entry's request.
type HARRequest struct {
	Method      string         `json:"method"`
	URL         string         `json:"url"`
	HTTPVersion string         `json:"httpVersion"`
	Cookies     []HARNameValue `json:"cookies"`
	Headers     []HARNameValue `json:"headers"`
	QueryString []HARNameValue `json:"queryString"`
	PostData    *HARPostData   `json:"postData,omitempty"`
	// HeadersSize is -1: records do not keep the header bytes.
	HeadersSize int64 `json:"headersSize"`
	// BodySize is the request body size, -1 when unknown.
	BodySize int64 `json:"bodySize"`
}

// HARPostData is the request body excerpt, when the record kept one.
type HARPostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	// Truncated reports that Text is shorter than the body.
	Truncated bool `json:"_truncated,omitempty"`
}

// HARResponse is an entry's response. Status is 0 when no response arrived
// (as browsers export a failed request); Error then says why.
type HARResponse struct {
	Status      int            `json:"status"`
	StatusText  string         `json:"statusText"`
	HTTPVersion string         `json:"httpVersion"`
	Cookies     []HARNameValue `json:"cookies"`
	Headers     []HARNameValue `json:"headers"`
	Content     HARContent     `json:"content"`
	RedirectURL string         `json:"redirectURL"`
	HeadersSize int64          `json:"headersSize"`
	// BodySize is the response body size, -1 when unknown (no response, or
	// the record holds no size: records omit a size of 0).
	BodySize int64 `json:"bodySize"`
	// Error is the transport error when the exchange failed below HTTP.
	Error string `json:"_error,omitempty"`
}

// HARContent is the response body: its size and, when the record kept
// one, the (redacted) excerpt.
type HARContent struct {
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
	// Truncated reports that Text is shorter than the body.
	Truncated bool `json:"_truncated,omitempty"`
	// StreamAnswer is, for a message POSTed over the 2024-11-05 HTTP+SSE
	// transport whose answer came on the session's GET stream, that answer
	// (its size, application/json, the recorded excerpt): the POST's own
	// response, which Size and Text describe, is the 202's few bytes.
	StreamAnswer *HARContent `json:"_streamAnswer,omitempty"`
}

// HARTimings split Time. Only the time to the response headers (Wait) and
// the rest (Receive) are known; Send is 0 and the optional phases are -1.
type HARTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
	// FirstEvent is the time to the first SSE event, when measured.
	FirstEvent float64 `json:"_firstEvent,omitempty"`
}

// HARMCP is the record's diagnosis, as the custom field "_mcpdiag".
type HARMCP struct {
	ID              string            `json:"id"`
	CallID          string            `json:"callId,omitempty"`
	Seq             int               `json:"seq,omitempty"`
	Outcome         string            `json:"outcome"`
	Layer           string            `json:"layer,omitempty"`
	Reason          string            `json:"reason,omitempty"`
	Method          string            `json:"method,omitempty"`
	Tool            string            `json:"tool,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Client          string            `json:"client,omitempty"`
	Scenario        string            `json:"scenario,omitempty"`
	JSONRPCID       wire.ID           `json:"jsonrpcId,omitzero"`
	ErrorCode       *int64            `json:"errorCode,omitempty"`
	ErrorName       string            `json:"errorName,omitempty"`
	ErrorMessage    string            `json:"errorMessage,omitempty"`
	RetryOrigin     string            `json:"retryOrigin,omitempty"`
	SSE             *record.SSE       `json:"sse,omitempty"`
	Network         *record.Network   `json:"network,omitempty"`
	Warnings        []record.Warning  `json:"warnings,omitempty"`
	Decision        *record.Decision  `json:"decision,omitempty"`
	IsError         *bool             `json:"isError,omitempty"`
	ResultType      record.ResultType `json:"resultType,omitempty"`
}

// HAROptions configure a HARWriter.
type HAROptions struct {
	// Creator names the writer (default "mcpdiag").
	Creator string
	// Version is the creator's version (default "dev").
	Version string
}

// HARWriter writes the exchange records added to it as a HAR 1.2 archive,
// streaming: each entry is written when it is added, so memory does not
// grow with the number of exchanges. Only exchange lines become entries:
// call lines summarise exchanges (they would show each request twice) and
// server lines are the server's view of requests a client file already
// holds. Entries keep the order of the records. It is not safe for
// concurrent use.
type HARWriter struct {
	bw      *bufio.Writer
	enc     *json.Encoder
	opts    HAROptions
	entries int64
	stdio   int64
	leftOut LeftOut
	started bool
	closed  bool
	err     error
}

// NewHARWriter returns a writer of a HAR archive to w. Close writes its
// end; w is not closed.
func NewHARWriter(w io.Writer, opts HAROptions) *HARWriter {
	if opts.Creator == "" {
		opts.Creator = "mcpdiag"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	// Each entry in one Write: a peer's bidi, C1 and other invisible
	// characters as \u escapes (visible.JSON), the same JSON value.
	enc := json.NewEncoder(visible.JSONWriter{W: bw})
	enc.SetEscapeHTML(false)
	return &HARWriter{bw: bw, enc: enc, opts: opts}
}

func (h *HARWriter) start() {
	if h.started {
		return
	}
	h.started = true
	head, _ := json.Marshal(HARCreator{Name: h.opts.Creator, Version: h.opts.Version})
	h.write(`{"log":{"version":"` + HARVersion + `","creator":` + string(head) + `,"entries":[`)
}

func (h *HARWriter) write(s string) {
	if h.err == nil {
		_, h.err = h.bw.WriteString(s)
	}
}

// Add writes r as an entry when it is an exchange record of HTTP. A
// stdio exchange (StdioRecord) is counted (Stdio), not written: a HAR
// entry is an HTTP request and response, and a line pair has neither
// method nor status (written as POST with status 0, a viewer showed every
// stdio exchange, successes included, as a failed request). A write error
// is kept and returned by Err and Close; later records are then ignored.
func (h *HARWriter) Add(r *record.Record) {
	if r == nil || r.Kind != record.KindExchange || h.closed || h.err != nil {
		return
	}
	if StdioRecord(r) {
		h.stdio++
		return
	}
	h.start()
	if h.entries > 0 {
		h.write(",")
	}
	h.write("\n")
	if h.err == nil {
		// Encode appends a newline; the entries stay one per line.
		h.err = h.enc.Encode(Entry(r))
	}
	h.entries++
}

// AddBadLine notes an exchange record without an outcome (b.NoOutcome),
// which Read gives to no report as a record: Close names it in the
// archive's log.comment and "_leftOut", so that the archive does not drop
// it without saying. Other bad lines (no record, a call) are no entry of
// an archive and are not noted.
func (h *HARWriter) AddBadLine(b BadLine) {
	if b.NoOutcome && b.Kind == record.KindExchange {
		h.leftOut.Add(b)
	}
}

// LeftOut returns the exchange records without an outcome left out.
func (h *HARWriter) LeftOut() int64 { return h.leftOut.Records }

// Entries returns the number of entries written.
func (h *HARWriter) Entries() int64 { return h.entries }

// Stdio returns the number of stdio exchanges left out.
func (h *HARWriter) Stdio() int64 { return h.stdio }

// StdioRecord reports whether r is an exchange of the stdio transport (the
// stdio proxy's or probe's): no HTTP method and a "stdio:" URL.
func StdioRecord(r *record.Record) bool {
	return r.HTTPMethod == "" && strings.HasPrefix(r.URL, "stdio:")
}

// Err returns the first write error.
func (h *HARWriter) Err() error { return h.err }

// Close ends the archive and flushes it. It does not close the underlying
// writer.
func (h *HARWriter) Close() error {
	if h.closed {
		return h.err
	}
	h.start()
	h.closed = true
	h.write("]")
	if h.leftOut.Records > 0 {
		comment, _ := json.Marshal(h.leftOut.Comment())
		named, _ := json.Marshal(&h.leftOut)
		h.write(`,"comment":` + string(visible.JSON(comment)) + `,"_leftOut":` + string(visible.JSON(named)))
	}
	h.write("}}\n")
	if h.err == nil {
		h.err = h.bw.Flush()
	}
	return h.err
}

// Entry converts one exchange record to a HAR entry.
func Entry(r *record.Record) HAREntry {
	total := roundMs(durationMs(r.Timings.Total))
	wait := roundMs(durationMs(r.Timings.Headers))
	if wait <= 0 || wait > total {
		wait = total
	}
	method := cmp.Or(r.HTTPMethod, http.MethodPost)
	e := HAREntry{
		StartedDateTime: r.Time.UTC().Format(time.RFC3339Nano),
		Time:            total,
		Request: HARRequest{
			Method:      method,
			URL:         cmp.Or(r.URL, "about:blank"),
			HTTPVersion: httpVersion,
			Cookies:     []HARNameValue{},
			Headers:     harHeaders(r.RequestHeaders),
			QueryString: harQuery(r.URL),
			HeadersSize: -1,
			BodySize:    -1,
		},
		Response: HARResponse{
			Status:      r.Status,
			StatusText:  http.StatusText(r.Status),
			HTTPVersion: httpVersion,
			Cookies:     []HARNameValue{},
			Headers:     harHeaders(r.ResponseHeaders),
			Content:     HARContent{Size: max(r.ResponseBytes, 0), MimeType: cmp.Or(r.ContentType, "x-unknown")},
			RedirectURL: r.ResponseHeaders.Get("Location"),
			HeadersSize: -1,
			BodySize:    -1,
		},
		Timings:      HARTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Wait: wait, Receive: roundMs(total - wait), FirstEvent: roundMs(durationMs(r.Timings.FirstEvent))},
		ResourceType: "fetch",
		MCP: &HARMCP{
			ID: r.ID, CallID: r.CallID, Seq: r.Seq, Outcome: string(r.Outcome), Layer: string(r.Layer), Reason: r.Reason,
			Method: r.Method, Tool: r.Tool, ProtocolVersion: r.ProtocolVersion, Client: r.Client, Scenario: r.Scenario,
			JSONRPCID: r.JSONRPC.ID, ErrorCode: r.JSONRPC.ErrorCode, ErrorName: r.JSONRPC.ErrorName, ErrorMessage: r.ErrorMessage,
			RetryOrigin: string(r.RetryOrigin), SSE: r.SSE, Network: r.Network, Warnings: r.Warnings, Decision: r.Decision,
			IsError: r.IsError, ResultType: r.ResultType,
		},
	}
	if e.Timings.Receive < 0 {
		e.Timings.Receive = 0
	}
	if e.Timings.FirstEvent < 0 {
		e.Timings.FirstEvent = 0
	}
	if r.RequestBytes > 0 || method == http.MethodGet || method == http.MethodDelete {
		e.Request.BodySize = max(r.RequestBytes, 0)
	}
	if b := r.RequestBody; b != nil {
		e.Request.PostData = &HARPostData{MimeType: cmp.Or(r.RequestHeaders.Get("Content-Type"), "application/json"), Text: b.Text, Truncated: b.Truncated}
	}
	if r.Status != 0 && r.ResponseBytes > 0 {
		e.Response.BodySize = r.ResponseBytes
	}
	if b := r.ResponseBody; b != nil {
		if sa := r.StreamAnswer; r.AnsweredOn == record.AnsweredOnStream && sa != nil && sa.Seen {
			// The record keeps the answer the stream carried, not the
			// POST's "Accepted": content is this response's (HAR 1.2:
			// size, text and mimeType of one body).
			e.Response.Content.StreamAnswer = &HARContent{Size: sa.Bytes, MimeType: "application/json", Text: b.Text, Truncated: b.Truncated}
		} else {
			e.Response.Content.Text, e.Response.Content.Truncated = b.Text, b.Truncated
		}
	}
	if n := r.Network; n != nil {
		e.Response.Error = n.Error
	}
	if r.Outcome != "" {
		e.Comment = string(r.Outcome)
		if r.Layer != "" {
			e.Comment += " (" + string(r.Layer) + ")"
		}
		if r.Reason != "" {
			e.Comment += ": " + r.Reason
		}
	}
	if math.IsNaN(e.Time) || e.Time < 0 {
		e.Time, e.Timings.Wait, e.Timings.Receive = 0, 0, 0
	}
	return e
}

// httpVersion is what entries give as the HTTP version: records do not
// keep it.
const httpVersion = "unknown"

func harHeaders(h http.Header) []HARNameValue {
	out := []HARNameValue{}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range h[name] {
			out = append(out, HARNameValue{Name: name, Value: v})
		}
	}
	return out
}

func harQuery(raw string) []HARNameValue {
	out := []HARNameValue{}
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return out
	}
	query, _, _ = strings.Cut(query, "#")
	for part := range strings.SplitSeq(query, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		out = append(out, HARNameValue{Name: k, Value: v})
	}
	return out
}

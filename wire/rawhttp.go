package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"
)

// RawResponse is an HTTP response read from a capture such as `curl -si`
// prints: status line, headers, blank line, body.
type RawResponse struct {
	Proto  string
	Status int
	Header http.Header
	// Body streams the body. Chunked transfer coding is decoded when the body
	// is really chunked; curl prints the header but decodes the body, so a
	// capture whose body is not chunked is read as it is (see Notes). A
	// body that ends before the Content-Length a client would hold it to
	// ends with a *ShortBodyError (see declaredLength).
	Body io.Reader
	// Notes are remarks about the capture (skipped interim responses, a
	// chunked header over a decoded body).
	Notes []string
}

// ErrNotHTTPResponse is returned when the input does not start with an HTTP
// status line.
var ErrNotHTTPResponse = errors.New("input is not a raw HTTP response (expected a status line such as \"HTTP/1.1 200 OK\", as `curl -si` prints)")

// DefaultMaxHeaderBytes bounds the head of a capture (status lines and
// headers, interim responses included) that ReadRawResponse reads: 1 MiB,
// as net/http's DefaultMaxHeaderBytes.
const DefaultMaxHeaderBytes = 1 << 20

// ErrHeaderTooLarge is returned when the head of a capture exceeds the
// reader's bound.
var ErrHeaderTooLarge = errors.New("the response head (status lines and headers) exceeds the size limit")

// rawBufferSize is ReadRawResponse's read buffer.
const rawBufferSize = 64 << 10

// headLimit passes reads through to r, at most n bytes while on: the head
// of a capture cannot make the reader hold more than its bound (and the
// read buffer) however long a line is.
type headLimit struct {
	r  io.Reader
	n  int64
	on bool
}

func (h *headLimit) Read(p []byte) (int, error) {
	if !h.on {
		return h.r.Read(p)
	}
	if h.n <= 0 {
		return 0, ErrHeaderTooLarge
	}
	if int64(len(p)) > h.n {
		p = p[:h.n]
	}
	n, err := h.r.Read(p)
	h.n -= int64(n)
	return n, err
}

// ReadRawResponse reads a raw HTTP response, with a head of at most
// DefaultMaxHeaderBytes. Interim 1xx responses and a proxy's "200
// Connection established" preamble are skipped. Line ends may be CRLF or
// LF.
func ReadRawResponse(r io.Reader) (*RawResponse, error) {
	return ReadRawResponseLimit(r, DefaultMaxHeaderBytes)
}

// ReadRawResponseLimit is ReadRawResponse with a head (every status line
// and header before the body) of at most maxHeader bytes
// (DefaultMaxHeaderBytes when maxHeader <= 0); past it the error wraps
// ErrHeaderTooLarge. The body is not bounded.
func ReadRawResponseLimit(r io.Reader, maxHeader int) (*RawResponse, error) {
	if maxHeader <= 0 {
		maxHeader = DefaultMaxHeaderBytes
	}
	// The source may be read a buffer ahead of the head's end, so the
	// reads are bounded at the head's bound plus one buffer; what the head
	// really took is checked once it is parsed.
	lim := &headLimit{r: r, n: int64(maxHeader) + rawBufferSize + 1, on: true}
	br := bufio.NewReaderSize(lim, rawBufferSize)
	tooLarge := func() error {
		return fmt.Errorf("%w: more than %d bytes before the body", ErrHeaderTooLarge, maxHeader)
	}
	headBytes := func() int64 { return int64(maxHeader) + rawBufferSize + 1 - lim.n - int64(br.Buffered()) }
	var notes []string
	for {
		raw, err := br.ReadSlice('\n')
		if err == nil && len(bytes.TrimSpace(raw)) == 0 {
			// A blank line before the status line: skipped without a copy.
			if headBytes() > int64(maxHeader) {
				return nil, tooLarge()
			}
			continue
		}
		line := string(raw)
		if err == bufio.ErrBufferFull {
			var rest string
			rest, err = br.ReadString('\n')
			line += rest
		}
		if errors.Is(err, ErrHeaderTooLarge) || headBytes() > int64(maxHeader) {
			return nil, tooLarge()
		}
		if err != nil && line == "" {
			if err == io.EOF {
				return nil, fmt.Errorf("%w: the input is empty", ErrNotHTTPResponse)
			}
			return nil, fmt.Errorf("reading the status line: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		proto, status, err := parseStatusLine(line)
		if err != nil {
			return nil, err
		}
		tp := textproto.NewReader(br)
		mh, err := tp.ReadMIMEHeader()
		if errors.Is(err, ErrHeaderTooLarge) || headBytes() > int64(maxHeader) {
			return nil, tooLarge()
		}
		if err != nil && !(err == io.EOF && mh != nil) {
			return nil, fmt.Errorf("reading the headers of the %s %d response: %w", proto, status, err)
		}
		h := http.Header(mh)
		if status >= 100 && status < 200 && status != 101 {
			notes = append(notes, fmt.Sprintf("skipped an interim %d response", status))
			continue
		}
		if status == 200 && strings.HasPrefix(strings.ToLower(statusText(line)), "connection established") {
			notes = append(notes, "skipped a proxy's CONNECT preamble")
			continue
		}
		// The head is read: the body is not bounded.
		lim.on = false
		resp := &RawResponse{Proto: proto, Status: status, Header: h, Body: br, Notes: notes}
		if strings.EqualFold(strings.TrimSpace(h.Get("Transfer-Encoding")), "chunked") {
			resp.Body = maybeChunked(br, &resp.Notes)
		} else if n, ok := declaredLength(status, h); ok {
			resp.Body = &lengthReader{r: br, want: n}
		}
		return resp, nil
	}
}

func statusText(line string) string {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 3 {
		return ""
	}
	return f[2]
}

func parseStatusLine(line string) (string, int, error) {
	if !strings.HasPrefix(line, "HTTP/") {
		return "", 0, fmt.Errorf("%w; the first line is %q", ErrNotHTTPResponse, truncate(line, 60))
	}
	f := strings.Fields(line)
	if len(f) < 2 || len(f[1]) != 3 {
		return "", 0, fmt.Errorf("malformed status line %q: expected \"HTTP/1.1 200 OK\" or \"HTTP/2 200\"", truncate(line, 60))
	}
	code, err := strconv.Atoi(f[1])
	if err != nil || code < 100 || code > 999 {
		return "", 0, fmt.Errorf("malformed status code in %q", truncate(line, 60))
	}
	return f[0], code, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// maybeChunked decodes a chunked body when the body starts like one (a hex
// chunk size line); otherwise the body is returned as it is, as curl -i
// prints decoded bodies under a "Transfer-Encoding: chunked" header.
func maybeChunked(br *bufio.Reader, notes *[]string) io.Reader {
	head, _ := br.Peek(32)
	i := bytes.IndexByte(head, '\n')
	if i > 0 {
		size := strings.TrimSpace(string(bytes.TrimRight(head[:i], "\r")))
		if j := strings.IndexByte(size, ';'); j >= 0 {
			size = size[:j]
		}
		if _, err := strconv.ParseUint(size, 16, 64); err == nil && size != "" {
			return httputil.NewChunkedReader(br)
		}
	}
	*notes = append(*notes, "Transfer-Encoding is chunked but the body is not chunk-framed (curl prints bodies decoded); read as is")
	return br
}

// declaredLength returns the body length a capture's Content-Length
// declares, when a client would hold the body to it: one valid value (or
// a list of identical ones, RFC 9110 §8.6), no Transfer-Encoding, no
// Content-Encoding other than identity (curl --compressed prints the body
// decoded, and Content-Length is then the encoded length), and a status
// whose response has a body (not 1xx, 204 or 304).
func declaredLength(status int, h http.Header) (int64, bool) {
	if status < 200 || status == 204 || status == 304 || len(h["Transfer-Encoding"]) > 0 {
		return 0, false
	}
	for _, ce := range h["Content-Encoding"] {
		for _, c := range strings.Split(ce, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return 0, false
			}
		}
	}
	n := int64(-1)
	for _, v := range h["Content-Length"] {
		for _, f := range strings.Split(v, ",") {
			m, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || m < 0 || n >= 0 && m != n {
				return 0, false
			}
			n = m
		}
	}
	return n, n >= 0
}

// ShortBodyError is the error a capture's body returns when it ends before
// the length its Content-Length declares: a client reading that response
// off the wire sees an incomplete message (RFC 9112 §6.3, §8), as curl does
// ("transfer closed with N bytes remaining to read"). It wraps
// io.ErrUnexpectedEOF, the error net/http's client returns there.
type ShortBodyError struct {
	Got, Declared int64
}

func (e *ShortBodyError) Error() string {
	return fmt.Sprintf("unexpected EOF: the body ends after %d of the %d bytes its Content-Length declares, so a client reading it "+
		"sees an incomplete message (RFC 9112 §6.3, §8); if the capture was edited, correct or remove Content-Length", e.Got, e.Declared)
}

func (e *ShortBodyError) Unwrap() error { return io.ErrUnexpectedEOF }

// lengthReader reads a capture's body and returns a *ShortBodyError in
// place of io.EOF when fewer than want bytes came. A longer body is read
// whole, as before.
type lengthReader struct {
	r         io.Reader
	got, want int64
}

func (l *lengthReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.got += int64(n)
	if err == io.EOF && l.got < l.want {
		err = &ShortBodyError{Got: l.got, Declared: l.want}
	}
	return n, err
}

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
	// capture whose body is not chunked is read as it is (see Notes).
	Body io.Reader
	// Notes are remarks about the capture (skipped interim responses, a
	// chunked header over a decoded body).
	Notes []string
}

// ErrNotHTTPResponse is returned when the input does not start with an HTTP
// status line.
var ErrNotHTTPResponse = errors.New("input is not a raw HTTP response (expected a status line such as \"HTTP/1.1 200 OK\", as `curl -si` prints)")

// ReadRawResponse reads a raw HTTP response. Interim 1xx responses and a
// proxy's "200 Connection established" preamble are skipped. Line ends may
// be CRLF or LF.
func ReadRawResponse(r io.Reader) (*RawResponse, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var notes []string
	for {
		line, err := br.ReadString('\n')
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
		resp := &RawResponse{Proto: proto, Status: status, Header: h, Body: br, Notes: notes}
		if strings.EqualFold(strings.TrimSpace(h.Get("Transfer-Encoding")), "chunked") {
			resp.Body = maybeChunked(br, &resp.Notes)
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

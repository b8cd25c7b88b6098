package classify

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// NetCause is a network failure in a word, read from the error value, not
// from its text: the same event gives the same cause whatever Go's words
// were. A server that closes a connection without answering reaches the
// client as EOF in one run and "connection reset by peer" in the next (a
// reset when the closing side still held unread bytes, which is timing):
// both are NetClosed. NetworkDetails.Error keeps the raw text.
type NetCause string

// The network causes.
const (
	// NetClosed: the peer closed or reset the connection before the answer
	// ended (EOF, an unexpected EOF, ECONNRESET, EPIPE, ECONNABORTED).
	NetClosed NetCause = "closed"
	// NetRefused: nothing listened (ECONNREFUSED).
	NetRefused NetCause = "refused"
	// NetTimeout: a deadline or timeout passed before the answer.
	NetTimeout NetCause = "timeout"
	// NetCancelled: the client itself cancelled the request.
	NetCancelled NetCause = "cancelled"
	// NetUnreachable: the host was not found or not reachable (DNS, no
	// route).
	NetUnreachable NetCause = "unreachable"
	// NetOther: any other error (TLS, a malformed response head, …).
	NetOther NetCause = "other"
)

// WordedError is a failure told in mcpdiag's own words (Text) whose
// cause, for errors.Is and NetCauseOf, is Err: a client that disconnects
// has cancelled its request (context.Canceled), an upstream's reset keeps
// its ECONNRESET under a text without the URL, a stdio server that exits
// before answering has closed the session (io.EOF).
type WordedError struct {
	Text string
	Err  error
}

// Error returns Text.
func (e *WordedError) Error() string { return e.Text }

// Unwrap returns Err.
func (e *WordedError) Unwrap() error { return e.Err }

// NetCauseOf classifies err. Timeouts are looked at first: a deadline that
// cut a read may also wrap an EOF.
func NetCauseOf(err error) NetCause {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return NetTimeout
	case errors.Is(err, context.Canceled):
		return NetCancelled
	case errors.Is(err, syscall.ECONNREFUSED):
		return NetRefused
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, net.ErrClosed):
		return NetClosed
	case errors.As(err, &dns), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return NetUnreachable
	}
	return NetOther
}

// Words says the cause in a phrase, the same for every error of the cause.
func (c NetCause) Words() string {
	switch c {
	case NetClosed:
		return "the server closed or reset the connection"
	case NetRefused:
		return "the connection was refused"
	case NetTimeout:
		return "a timeout passed"
	case NetCancelled:
		return "the client cancelled the request"
	case NetUnreachable:
		return "the server's host was not found or not reachable"
	case NetOther:
		return "another network error (the record's network.error says which)"
	}
	return ""
}

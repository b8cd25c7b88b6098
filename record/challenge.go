package record

import (
	"net/http"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// ChallengeFacts are the typed facts of an exchange record that link an
// authorization challenge recorded by a proxy or a server (a JSON-RPC
// request refused 401, or 403 insufficient_scope, with a Bearer challenge)
// to the request by which the client answered it (Record.ChallengeFacts,
// ChallengeFacts.Answers). They hold no credential: Bearer is the
// recorded Authorization value, its credential masked.
type ChallengeFacts struct {
	// ID is the record's id.
	ID string
	// Client is the record's client (clientInfo name@version, or the
	// User-Agent).
	Client string
	// Run is the recording process's part of the record's connection id
	// ("RUN" of "RUN-N"; a connection named otherwise, by its remote
	// address, is its own run).
	Run string
	// UserAgent is the request's User-Agent header, as recorded.
	UserAgent string
	// Method and Tool are the request's JSON-RPC method and tool (or
	// prompt) name.
	Method, Tool string
	// Args is the request's ArgsHash: a client re-sends the request it
	// was refused with the same arguments.
	Args string
	// Session is the record's hashed Mcp-Session-Id ("" without one): two
	// sessions are two instances of a client, whatever their names.
	Session string
	// Bearer is the request's Authorization value when its scheme is
	// Bearer, as recorded ("Bearer [redacted:len=N:h=H]": one recording
	// masks the same token the same way), else "".
	Bearer string
	// Start is when the exchange started (Record.Time); Headers when its
	// response's headers came (Start plus Timings.Headers): a request the
	// client sent in answer to this one starts after it.
	Start, Headers time.Time
	// Status is the answer's HTTP status (0: none came).
	Status int
	// Challenge reports Record.BearerChallenge.
	Challenge bool
}

// Refused reports whether the answer refused the request's authorization:
// HTTP 401 or 403.
func (f ChallengeFacts) Refused() bool {
	return f.Status == http.StatusUnauthorized || f.Status == http.StatusForbidden
}

// Linkable reports whether the record is one the link reads at all: a
// recorder's record (a proxy's or a server's: it names the connection) of
// a JSON-RPC request over HTTP.
func (f ChallengeFacts) Linkable() bool {
	return f.Run != "" && f.Method != ""
}

// SameRequest reports whether a is the same client's request as c, sent
// after c's answer came: the same recording process (Run), the same
// client and User-Agent, the same JSON-RPC method, tool and arguments
// (Args), not another session when both have one, started not before c's
// response headers (records without a time are linked by order alone).
func (a ChallengeFacts) SameRequest(c ChallengeFacts) bool {
	if !a.Linkable() || !c.Linkable() || a.Run != c.Run || a.Client == "" || a.Client != c.Client ||
		a.UserAgent != c.UserAgent || a.Method != c.Method || a.Tool != c.Tool || a.Args != c.Args || a.ID == c.ID {
		return false
	}
	if a.Session != "" && c.Session != "" && a.Session != c.Session {
		return false
	}
	return a.Start.IsZero() || c.Headers.IsZero() || !a.Start.Before(c.Headers)
}

// Answers reports whether a, the same client's next such request after
// the challenge c (SameRequest), answered it: it carried a Bearer
// credential, and not the one c carried (a new token). Whether a was
// accepted is its own answer's: a refused a (Refused) answered nothing
// unless it is a challenge the client answered in turn.
func (a ChallengeFacts) Answers(c ChallengeFacts) bool {
	return a.SameRequest(c) && a.Bearer != "" && a.Bearer != c.Bearer
}

// ChallengeFacts returns r's facts for the link between a challenge and
// its answer; a record the link does not read (not a recorder's exchange
// of a JSON-RPC request over HTTP: a client's own record, a GET, a
// client's answer, a batch, stdio) has facts that are not Linkable.
func (r *Record) ChallengeFacts() ChallengeFacts {
	if r.Kind != KindExchange || r.Conn == "" || r.Method == "" || r.HTTPMethod != http.MethodPost ||
		r.ClientAnswer || r.Batch != 0 {
		return ChallengeFacts{ID: r.ID}
	}
	f := ChallengeFacts{ID: r.ID, Client: r.Client, Run: connRun(r.Conn), UserAgent: strings.Join(r.RequestHeaders.Values("User-Agent"), ", "),
		Method: r.Method, Tool: r.Tool, Args: r.ArgsHash, Session: r.Session, Bearer: r.BearerSent(), Start: r.Time, Status: r.Status, Challenge: r.BearerChallenge()}
	if !r.Time.IsZero() {
		f.Headers = r.Time.Add(time.Duration(r.Timings.Headers))
	}
	return f
}

// ConnRun is the recording process's part of a connection id: "RUN" of
// "RUN-N" (recorder.ConnContext), else the whole id (a remote address).
func ConnRun(conn string) string { return connRun(conn) }

// connRun is the recording process's part of a connection id: "RUN" of
// "RUN-N" (recorder.ConnContext), else the whole id (a remote address).
func connRun(conn string) string {
	i := strings.LastIndexByte(conn, '-')
	if i <= 0 || i == len(conn)-1 {
		return conn
	}
	for _, c := range conn[i+1:] {
		if c < '0' || c > '9' {
			return conn
		}
	}
	return conn[:i]
}

// BearerChallenge reports whether r is the record of a JSON-RPC request
// over HTTP (a POST with a method, no client's answer, no batch) that the
// server refused with an authorization challenge the MCP authorization
// spec designs (2025-06-18 and later, "Authorization Server Discovery";
// RFC 6750 §3): outcome HTTP_ERROR and HTTP 401 with a WWW-Authenticate
// challenge of the scheme Bearer, or HTTP 403 whose Bearer challenge says
// error="insufficient_scope" (the step-up). Only the first challenge of
// each WWW-Authenticate line is read. A 401 without a Bearer challenge
// is none: the client cannot discover where to authorize.
func (r *Record) BearerChallenge() bool {
	if r.Kind != KindExchange || r.Outcome != classify.HTTPError || r.HTTPMethod != http.MethodPost ||
		r.Method == "" || r.ClientAnswer || r.Batch != 0 {
		return false
	}
	switch r.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
	default:
		return false
	}
	for _, v := range r.ResponseHeaders.Values("WWW-Authenticate") {
		w := classify.ParseWWWAuthenticate(v)
		if !strings.EqualFold(w.Scheme, "Bearer") {
			continue
		}
		return r.Status == http.StatusUnauthorized || strings.EqualFold(w.Error, "insufficient_scope")
	}
	return false
}

// BearerSent returns the Authorization value r's request carried when its
// scheme is Bearer, as recorded (the credential masked by the encoder:
// "Bearer [redacted:len=N:h=H]", so that two requests of one recording
// that carried the same token carry the same value), or "" when it carried
// none.
func (r *Record) BearerSent() string {
	for _, v := range r.RequestHeaders.Values("Authorization") {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(rest) != "" {
			return v
		}
	}
	return ""
}

package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// legacyEventMax bounds the first event of a GET that checks for the
// 2024-11-05 transport: an endpoint event is one short line.
const legacyEventMax = 64 << 10

// legacyHint follows a set-up that ended on a 4xx (a 2024-11-05 HTTP+SSE
// server answers a POST to its /sse URL 404, 405 or 400) with the check the
// spec's backward-compatibility section prescribes (transports 2025-03-26 ›
// Backwards Compatibility: after a 4xx to the POST, "issue a GET request to
// the server URL, expecting that this will open an SSE stream and return an
// endpoint event as the first event"). When that event arrives the server
// speaks the older transport, which this client does not: the call's
// decision and era say so and name the way out, instead of a bare "HTTP 404,
// the endpoint is absent". The GET is a check, not an exchange of the call,
// and is not recorded (as the standalone stream); the decision names it.
func (c *Client) legacyHint(ctx context.Context, st *callState) {
	r := st.call.Final
	if r == nil || r.Outcome != classify.HTTPError || !legacyStatus(r.Status) {
		return
	}
	if r.JSONRPC() != nil && r.JSONRPC().Error != nil {
		// A JSON-RPC error in the 4xx's body (go-sdk's 400 -32022 to a
		// protocol version it does not speak): the server reads JSON-RPC
		// POSTs at this URL, so it is no 2024-11-05 event stream, and the
		// check would only add a GET to the wire (and an exchange to a
		// recording proxy's file).
		return
	}
	endpoint, ok := c.legacyEndpoint(ctx)
	if !ok {
		return
	}
	st.call.LegacyTransport = endpoint
	c.eraReason = "none: the server speaks the 2024-11-05 HTTP+SSE transport (" + c.eraReason + ")"
	st.call.Decision.Reason = LegacyHint(c.opts.URL, endpoint) + "; the last answer: " + st.call.Decision.Reason
}

// LegacyHint is the sentence that names a server of the 2024-11-05 HTTP+SSE
// transport found at serverURL, whose endpoint event named endpoint (its
// path, without the session's query), and the way out.
func LegacyHint(serverURL, endpoint string) string {
	return fmt.Sprintf("the server speaks the older HTTP+SSE transport (2024-11-05: a GET of the URL opened an event stream "+
		"whose first event, endpoint, names %s for the messages), which mcpdiag call and probe do not speak; "+
		"record a client that speaks it through `mcpdiag proxy --upstream %s` instead", endpoint, record.RedactURL(serverURL))
}

// legacyStatus reports the 4xx statuses after which the URL may be a
// 2024-11-05 server's event stream: not the ones that mean authorization,
// a timeout or a rate limit.
func legacyStatus(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return status >= 400 && status < 500
}

// legacyEndpoint sends the GET of the check and reads its first event,
// within the first-byte timeout. It reports the path the endpoint event
// names (the query, which carries the session id, is left out).
func (c *Client) legacyEndpoint(ctx context.Context) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.firstByte())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opts.URL, nil)
	if err != nil {
		return "", false
	}
	for k, vs := range c.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "text/event-stream")
	if v, _, _ := c.authorization(); v != "" {
		req.Header.Set("Authorization", v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", false
	}
	// Closing the body (and cancelling ctx) ends the stream, and with it
	// the session the server opened for it.
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header.Get("Content-Type")) {
		return "", false
	}
	ev, err := wire.NewSSEReader(resp.Body, legacyEventMax).Next()
	if err != nil || ev.Type != "endpoint" || len(ev.Data) == 0 {
		return "", false
	}
	u, err := url.Parse(string(ev.Data))
	if err != nil || u.Path == "" {
		return "", false
	}
	return u.Path, true
}

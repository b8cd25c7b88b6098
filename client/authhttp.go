package client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// authStepKey carries the step of the authorization chain an HTTP request
// belongs to, from the step code (and the libraries it calls) to the
// recording transport.
type authStepKey struct{}

// withStep marks ctx's requests as exchanges of one step.
func withStep(ctx context.Context, info AuthInfo) context.Context {
	return context.WithValue(ctx, authStepKey{}, &info)
}

// authPeek is how much of an auth response body the transport keeps for the
// step code to read an OAuth error from. Auth bodies are never recorded:
// they hold tokens, codes and client secrets.
const authPeek = 16 << 10

// authTransport is the RoundTripper of every HTTP exchange of the
// authorization chain, whichever code sends it (mcpdiag's own discovery,
// go-sdk's oauthex, golang.org/x/oauth2): it numbers the exchange, times
// it and hands it to the client's exchange list, where the step code then
// classifies it. No request or response body is kept in the Exchange.
type authTransport struct {
	c    *Client
	base http.RoundTripper

	mu   sync.Mutex
	last []*Exchange // the exchanges since the last take
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	info, _ := req.Context().Value(authStepKey{}).(*AuthInfo)
	ex := &Exchange{Seq: t.c.nextSeq(), HTTPMethod: req.Method, URL: req.URL.String(), Start: time.Now(),
		RequestHeader: req.Header.Clone(), Origin: OriginNone, Result: &classify.Result{}}
	if info != nil {
		cp := *info
		ex.Auth = &cp
	} else {
		ex.Auth = &AuthInfo{Step: "unknown"}
	}
	t.add(ex)
	resp, err := t.base.RoundTrip(req)
	ex.ToHeaders = time.Since(ex.Start)
	if err != nil {
		ex.Total = ex.ToHeaders
		ex.authErr = err
		ex.Result = &classify.Result{Outcome: classify.NetworkError, Reason: "no answer: " + err.Error()}
		ex.Result.SetNetwork(&classify.NetworkDetails{Error: err.Error(), Phase: "before-response", Cause: classify.NetCauseOf(err)})
		return nil, err
	}
	ex.Status, ex.ResponseHeader = resp.StatusCode, resp.Header.Clone()
	ex.Result = &classify.Result{Status: resp.StatusCode}
	ex.Result.SetContentType(resp.Header.Get("Content-Type"))
	resp.Body = &peekBody{r: resp.Body, ex: ex}
	return resp, nil
}

func (t *authTransport) add(ex *Exchange) {
	t.mu.Lock()
	t.last = append(t.last, ex)
	t.mu.Unlock()
	t.c.record(ex)
}

// take returns the exchanges sent since the last take, oldest first.
func (t *authTransport) take() []*Exchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.last
	t.last = nil
	return out
}

// peekBody keeps the first authPeek bytes of an auth response for the step
// code, and times the body.
type peekBody struct {
	r    io.ReadCloser
	ex   *Exchange
	done bool
}

func (p *peekBody) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		if p.ex.ToFirstByte == 0 {
			p.ex.ToFirstByte = time.Since(p.ex.Start)
		}
		if room := authPeek - len(p.ex.authBody); room > 0 {
			p.ex.authBody = append(p.ex.authBody, b[:min(n, room)]...)
		}
		p.ex.authBytes += int64(n)
	}
	if err != nil && !p.done {
		p.done = true
		p.ex.Total = time.Since(p.ex.Start)
		if err != io.EOF {
			p.ex.authErr = err
		}
	}
	return n, err
}

func (p *peekBody) Close() error {
	if !p.done {
		p.done = true
		p.ex.Total = time.Since(p.ex.Start)
	}
	return p.r.Close()
}

// authHTTPClient is the http.Client of the authorization chain: the
// client's own transport under the recorder, and no redirect followed (a
// redirect is an answer of its step, recorded and judged like any other).
func (c *Client) authHTTPClient() (*http.Client, *authTransport) {
	base := c.http.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	t := &authTransport{c: c, base: base}
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, t
}

// isJSONType reports whether a Content-Type is application/json (or a
// +json type).
func isJSONType(ct string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(ct)), ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// oauthError reads RFC 6749 §5.2's error and error_description from a
// response body (JSON), or from a form body.
func oauthError(body []byte) (code, desc string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return "", ""
	}
	if body[0] == '{' {
		var e struct {
			Error       any    `json:"error"`
			Description string `json:"error_description"`
		}
		if jsonUnmarshal(body, &e) == nil {
			if s, ok := e.Error.(string); ok {
				code = s
			}
			return code, e.Description
		}
	}
	return "", ""
}

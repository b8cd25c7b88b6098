// Command badclient is a small 2026-07-28 MCP client for the matrix tests:
// well behaved by default, or deliberately wrong in one way (-bad MODE).
// It follows the matrix's environment contract: the endpoint is the last
// argument, the call is MCP_TOOL with MCP_ARGS, MCP_INPUT answers MRTR
// input requests, MCP_TIMEOUT_MS bounds the call. It prints "outcome: NAME"
// (the classifier's name of its final answer), except in hang mode.
//
// Modes:
//
//	(none)              classify every answer, decide with the retry policy
//	retry-destructive   treat every tool as safe to repeat (ignores annotations)
//	reuse-id            send each MRTR round with the id of the request it answers
//	ignore-retry-after  retry a 429 at once, whatever Retry-After says
//	hang                no timeout; wait forever for an answer that does not come
//	lie                 leave clientCapabilities out of _meta (the server answers
//	                    400 -32602) and print "outcome: TOOL_SUCCESS" whatever came
//	no-elicitation      declare no capability ({}), even with MCP_INPUT: the
//	                    server answers an elicitation scenario's call 400
//	                    -32021, and it prints what it got (HTTP_ERROR)
//	skip-round          on input_required, print TOOL_SUCCESS without
//	                    answering it (no MRTR round)
//	form-only           declare elicitation as {} (form mode only, as the
//	                    schema reads it), even with MCP_INPUT: a URL-mode
//	                    scenario's call gets 400 -32021, and it prints HTTP_ERROR
//	list-declares       declare elicitation (with MCP_INPUT) on a tools/list
//	                    first, and no clientCapabilities at all in its
//	                    tools/call's _meta: the server reads only the call's
//	                    own (2026-07-28), so an elicitation scenario's call
//	                    gets 400 -32021, and it prints HTTP_ERROR
//	caps-null           declare clientCapabilities as null (no object) on its
//	                    tools/call, even with MCP_INPUT: the server reads no
//	                    capability, an elicitation scenario's call gets 400
//	                    -32021, and it prints HTTP_ERROR
//	fallback            probe with a 2026-07-28 server/discover and fall back to
//	                    2025-11-25 (initialize, a session) on any failure, even a 503
//	crash               make the call, print its outcome, then exit 1
//	early-timeout       give up the call 500 ms after starting it, whatever
//	                    MCP_TIMEOUT_MS says, and print the timeout (NETWORK_ERROR)
//	exit-mid-request    send its tools/call's request line and exit at once; a
//	                    child in its own session (out of the matrix's reach)
//	                    sends the rest 200 ms later and reads the answer: the
//	                    request reaches the server after the client exited
//	exit-late-request   exit-mid-request with the rest sent 3.5 s later: the
//	                    request reaches the server after the matrix's wait for
//	                    its run (3 s) ended
//	exit-late-body      the whole head at once (the server's handler starts),
//	                    the body 3.5 s later from the child: the request is
//	                    still being served when the matrix's wait ends
//
// Behind an OAuth authorization server (a 401 with a Bearer challenge) it
// runs a small OAuth 2.1 chain first (auth.go, which lists the OAuth
// modes: no-resource, token-elsewhere, pkce-plain, step-up-loop,
// token-in-url).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

func main() {
	mode := flag.String("bad", "", "how to misbehave: retry-destructive, reuse-id, ignore-retry-after, hang, lie, no-elicitation, form-only, list-declares, caps-null, skip-round, fallback, crash, early-timeout, killed, list-only, other-tool, other-args, exit-mid-request, exit-late-request, exit-late-body, exit-unread, read-then-exit; "+
		"OAuth: no-resource, token-elsewhere, pkce-plain, step-up-loop, token-in-url")
	flag.Parse()
	if os.Getenv("BADCLIENT_TAIL") != "" {
		sendTail() // the child of exit-mid-request
		return
	}
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: badclient [-bad MODE] URL")
		os.Exit(2)
	}
	c := &mini{url: flag.Arg(flag.NArg() - 1), mode: *mode, tool: os.Getenv("MCP_TOOL"), args: json.RawMessage(os.Getenv("MCP_ARGS")),
		auth: &oauth{mode: *mode}}
	if len(c.args) == 0 {
		c.args = json.RawMessage(`{}`)
	}
	if c.mode == "other-args" {
		// It calls the case's tool with other arguments than MCP_ARGS.
		c.args = json.RawMessage(`{"text":"not the case's arguments","id":"item-2"}`)
	}
	if c.mode == "other-tool" {
		// It calls another tool than the case's: echo, or delete_item
		// when the case's tool is echo.
		c.tool, c.args = "echo", json.RawMessage(`{"text":"not the case's call"}`)
		if os.Getenv("MCP_TOOL") == "echo" {
			c.tool, c.args = "delete_item", json.RawMessage(`{"id":"item-1"}`)
		}
	}
	if in := os.Getenv("MCP_INPUT"); in != "" {
		if err := json.Unmarshal([]byte(in), &c.inputs); err != nil {
			fmt.Fprintln(os.Stderr, "MCP_INPUT:", err)
			os.Exit(2)
		}
	}
	timeout := 10 * time.Second
	if ms, err := strconv.Atoi(os.Getenv("MCP_TIMEOUT_MS")); err == nil && ms > 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	ctx := context.Background()
	if c.mode == "early-timeout" {
		timeout = 500 * time.Millisecond
	}
	if c.mode != "hang" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if c.mode == "exit-mid-request" || c.mode == "exit-late-request" || c.mode == "exit-late-body" {
		exitMidRequest(c)
		return
	}
	var out classify.Outcome
	if c.mode == "exit-unread" || c.mode == "read-then-exit" {
		exitUnread(c)
		return
	}
	if c.mode == "list-only" {
		// It lists the tools and stops there, printing nothing: the
		// case's tools/call is never sent.
		c.listTools(ctx)
		return
	}
	if c.mode == "fallback" {
		out = c.probeThenCall(ctx)
	} else {
		if c.mode == "step-up-loop" || c.mode == "list-declares" {
			// It lists the tools first: in step-up-loop so that the
			// first 401 (and its re-authorization) falls on tools/list
			// (its tools/call is repeated after 403s only); in
			// list-declares to declare elicitation there alone.
			c.listTools(ctx)
		}
		out = c.call(ctx)
	}
	if c.mode == "lie" {
		out = classify.ToolSuccess
	}
	if c.mode == "hang" {
		if out != classify.ToolSuccess && out != classify.ToolError {
			select {} // the answer never came: wait for it forever
		}
		return
	}
	if c.mode == "killed" {
		// It dies of a signal after its call, before printing (as the
		// OOM killer would end it).
		fmt.Fprintln(os.Stderr, "the client is killed after its call")
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Kill()
		}
		time.Sleep(time.Minute)
	}
	fmt.Println("outcome:", out)
	if c.mode == "crash" {
		fmt.Fprintln(os.Stderr, "panic: the client crashed after its call")
		os.Exit(1)
	}
}

type mini struct {
	url, mode, tool string
	args            json.RawMessage
	inputs          map[string]json.RawMessage
	id              int64
	auth            *oauth
}

// listTools sends tools/list, through the OAuth chain when the server asks
// for it.
func (c *mini) listTools(ctx context.Context) {
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    classify.Protocol2026,
		"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "badclient", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	if c.mode == "list-declares" && c.inputs != nil {
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}}
	}
	for range 3 {
		c.id++
		h := http.Header{"Mcp-Protocol-Version": {classify.Protocol2026}, "Mcp-Method": {"tools/list"}}
		res, _ := c.rpc(ctx, "tools/list", map[string]any{"_meta": meta}, h, classify.Protocol2026)
		if res.Status != http.StatusUnauthorized {
			return
		}
		if again, _ := c.auth.challenge(ctx, c.url, "", res); !again {
			return
		}
	}
}

func (c *mini) call(ctx context.Context) classify.Outcome {
	pol := retry.DefaultPolicy()
	facts := retry.Facts{Safety: retry.Unknown, Protocol: classify.Protocol2026, Rand: nil}
	if c.mode == "retry-destructive" {
		facts.Safety = retry.Idempotent
	}
	var state, answers json.RawMessage
	round := false
	for {
		if !round || c.mode != "reuse-id" {
			c.id++
		}
		res := c.post(ctx, state, answers)
		if res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden {
			again, out := c.auth.challenge(ctx, c.url, c.tool, res)
			if again {
				state, answers, round = nil, nil, false
				continue
			}
			if out != "" {
				return out
			}
		}
		if dl, ok := ctx.Deadline(); ok {
			facts.Remaining = max(time.Until(dl), 0)
		}
		d := pol.Decide(res, facts)
		round = false
		switch d.Action {
		case retry.Retry:
			wait := d.Delay
			if c.mode == "ignore-retry-after" && res.Status == http.StatusTooManyRequests {
				wait = 0
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return res.Outcome
			}
			state, answers = nil, nil
		case retry.ContinueInput:
			if c.mode == "skip-round" {
				// The server asked for input: print success without
				// answering it.
				return classify.ToolSuccess
			}
			state, answers = nil, nil
			if r, ok := wire.Field(res.Response(), "result"); ok {
				if st, ok := wire.Field(r, "requestState"); ok {
					state = json.RawMessage(bytes.Clone(st))
				}
			}
			if res.Input() != nil && len(res.Input().Requests) > 0 {
				m := map[string]json.RawMessage{}
				for _, q := range res.Input().Requests {
					if a, ok := c.inputs[q.Key]; ok {
						m[q.Key] = a
					}
				}
				answers, _ = json.Marshal(m)
			}
			round = true
		default:
			return res.Outcome
		}
		facts.Count(d)
	}
}

// post sends one tools/call and classifies the answer.
func (c *mini) post(ctx context.Context, state, answers json.RawMessage) *classify.Result {
	caps := json.RawMessage(`{}`)
	if c.inputs != nil && c.mode != "no-elicitation" {
		caps = json.RawMessage(`{"elicitation":{"form":{},"url":{}}}`)
	}
	if c.inputs != nil && c.mode == "form-only" {
		caps = json.RawMessage(`{"elicitation":{}}`)
	}
	if c.mode == "caps-null" {
		caps = json.RawMessage(`null`)
	}
	params := map[string]any{
		"name": c.tool, "arguments": c.args,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    classify.Protocol2026,
			"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "badclient", "version": "0"},
			"io.modelcontextprotocol/clientCapabilities": caps,
		},
	}
	if c.mode == "lie" || c.mode == "list-declares" {
		delete(params["_meta"].(map[string]any), "io.modelcontextprotocol/clientCapabilities")
	}
	if state != nil {
		params["requestState"] = state
	}
	if answers != nil {
		params["inputResponses"] = answers
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call", "params": params})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", classify.Protocol2026)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", c.tool)
	if c.auth.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.auth.token)
	}
	ex := &classify.Exchange{Method: "tools/call", ID: wire.IntID(c.id), ProtocolVersion: classify.Protocol2026}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ex.Err, ex.RequestSent = err, true
	} else {
		defer resp.Body.Close()
		ex.Status, ex.Header, ex.Body = resp.StatusCode, resp.Header, resp.Body
	}
	res, err := (&classify.Classifier{StopAtTerminal: true, KeepResponse: true}).Classify(ex)
	if err != nil || res == nil {
		return &classify.Result{Outcome: classify.StreamIncomplete, Reason: fmt.Sprint(err)}
	}
	return res
}

// probeThenCall is the fallback mode: a 2026-07-28 server/discover first;
// when it succeeds, the 2026-07-28 call; on any failure (the bad part: a 503
// or a reset says nothing about the version) the 2025-11-25 handshake and
// the call in that session.
func (c *mini) probeThenCall(ctx context.Context) classify.Outcome {
	c.id++
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    classify.Protocol2026,
		"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "badclient", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	h := http.Header{"Mcp-Protocol-Version": {classify.Protocol2026}, "Mcp-Method": {"server/discover"}}
	if res, _ := c.rpc(ctx, "server/discover", map[string]any{"_meta": meta}, h, classify.Protocol2026); res.Outcome.Success() {
		return c.call(ctx)
	}
	c.id++
	_, rh := c.rpc(ctx, "initialize", map[string]any{"protocolVersion": classify.Protocol2025, "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "badclient", "version": "0"}}, http.Header{}, classify.Protocol2025)
	h = http.Header{"Mcp-Protocol-Version": {classify.Protocol2025}}
	if s := rh.Get("Mcp-Session-Id"); s != "" {
		h.Set("Mcp-Session-Id", s)
	}
	c.rpc(ctx, "notifications/initialized", nil, h, classify.Protocol2025)
	c.id++
	res, _ := c.rpc(ctx, "tools/call", map[string]any{"name": c.tool, "arguments": c.args}, h, classify.Protocol2025)
	return res.Outcome
}

// rpc sends one JSON-RPC message (a notification when its method starts
// with "notifications/") and classifies the answer; it returns the
// response's headers (empty when none came).
func (c *mini) rpc(ctx context.Context, method string, params any, h http.Header, protocol string) (*classify.Result, http.Header) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	note := strings.HasPrefix(method, "notifications/")
	if !note {
		msg["id"] = c.id
	}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	for k, vs := range h {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.auth.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.auth.token)
	}
	ex := &classify.Exchange{Method: method, ProtocolVersion: protocol, Notification: note}
	if !note {
		ex.ID = wire.IntID(c.id)
	}
	rh := http.Header{}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ex.Err, ex.RequestSent = err, true
	} else {
		defer resp.Body.Close()
		ex.Status, ex.Header, ex.Body, rh = resp.StatusCode, resp.Header, resp.Body, resp.Header
	}
	res, err := (&classify.Classifier{StopAtTerminal: true}).Classify(ex)
	if err != nil || res == nil {
		return &classify.Result{Outcome: classify.StreamIncomplete, Reason: fmt.Sprint(err)}, rh
	}
	return res, rh
}

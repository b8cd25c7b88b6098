// Package faults is mcpdiag's catalogue of MCP fault scenarios: small
// http.Handler middlewares that make a healthy MCP server fail on purpose, in
// one layer at a time, deterministically.
//
// # Overview
//
// A [Scenario] is a struct whose exported fields are its JSON params. It
// validates them and wraps the next handler:
//
//	type Scenario interface {
//		Validate() error
//		Wrap(next http.Handler, env *Env) http.Handler
//	}
//
// Every scenario embeds [Rules], the part common to all of them, so that no
// scenario re-implements it:
//
//   - match: which POSTs the scenario looks at (a JSON-RPC method glob, a tool
//     name glob, a protocol era);
//   - schedule: which of the matching POSTs it fires on (the Nth, every Nth,
//     the first N, a window, or with probability p from a seed);
//   - delay: a seeded delay (fixed, uniform, normal, lognormal) at a place
//     (before the headers, before the first SSE event, between events).
//
// The handler Wrap returns is called only for the requests the rules select;
// every other request goes straight to next. Each decision, fired or not, is
// kept on the request (see [Firing]) and ends up in the server's log, with the
// seed, so that a sequence can be replayed exactly.
//
// The catalogue ([Catalogue], in catalogue.go) lists every scenario by id with
// its title, layer, description, defaults, an example, the tool to call to
// trigger it and the outcome a correct client must see ([Entry]).
//
// # Layout
//
// The framework (scenario.go, match.go, delay.go, select.go, catalogue.go,
// endpoint.go, request.go, respond.go, markdown.go) is apart from the
// scenarios, which live one file per id prefix: baseline.go, http.go and
// jsonrpc.go (errors.*: transport, then protocol and application), auth.go,
// timeout.go, lists.go (catalog.*), mrtr.go (elicitation.*, mrtr.*),
// compat.go, session.go, sse.go and content.go. TestScenarioFiles holds the
// table; a new scenario goes in the file of its prefix.
//
// # Endpoints
//
// An [Endpoint] is one fault-injecting MCP endpoint: a [Selection] of
// scenarios (several compose as "a+b", applied outermost first) over the
// healthy server, with its own counters (per POST, per JSON-RPC method, per
// tool), its own seeded randomness, and an observer that receives one
// [Observation] per request. Counters start at zero, count in arrival order,
// and are reset by [Endpoint.Reset] and by [Endpoint.SetSelection].
//
// # Determinism
//
// Counters, schedules and draws are decided under one lock per scenario
// layer, in the order requests arrive, so a client that sends its requests
// one after the other gets the same decisions every run with the same seed.
// Concurrent requests are decided in the order the server took them, which
// the log records.
package faults

// Package classify tells in which layer one MCP tool-call exchange failed or
// finished, from its wire bytes alone: the HTTP exchange (transport), the
// JSON-RPC envelope and MCP result shape (protocol), an unfinished
// interaction such as input_required (interaction), or the tool's own
// isError (application). Classify (or a Classifier with limits) reads an
// Exchange — the request facts and the response status, headers and body,
// JSON or an SSE stream — and returns a Result with one Layer, one Outcome,
// the details that led to it and warnings for spec violations that do not
// change the outcome. NOT_CLASSIFIED is the one outcome that is not a
// verdict: the classifier stopped at one of its own limits and says so.
package classify

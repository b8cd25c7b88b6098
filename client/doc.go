// Package client is mcpdiag's diagnostic MCP client: it performs one real
// tools/call against any Streamable HTTP server and keeps the evidence of every
// exchange on the way.
//
// # Overview
//
// A logical call is a sequence of HTTP exchanges:
//
//	[probe / initialize] → tools/list (pages) → tools/call → (MRTR rounds, retries, recoveries)
//
// Every exchange is classified by package classify as it arrives (an SSE body
// is read event by event and abandoned once the response is in), and every
// classified response is handed to package retry, whose Decision says what
// happens next: done, surface the tool error to the model, answer input and
// send the next round, retry after a delay, re-initialize, renegotiate the
// protocol, re-read tools/list, or fail. Nothing is re-sent that the policy
// did not allow, so a destructive tool is never repeated blindly.
//
// # Protocol eras
//
// 2026-07-28 is stateless: every POST carries MCP-Protocol-Version, Mcp-Method,
// Mcp-Name (tools/call, prompts/get, resources/read), Mcp-Param-* for
// x-mcp-header arguments, and params._meta with the protocol version, client
// capabilities and client info. 2025-11-25 uses initialize,
// notifications/initialized and Mcp-Session-Id. In auto mode the first request
// is a modern tools/list; the spec's backward-compatibility rule decides the
// era from the answer, and Call.EraReason says why.
//
// A -32022 UnsupportedProtocolVersion whose data.supported lists the very
// version the request used is re-sent once at that version (another instance
// behind the same URL may accept it).
//
// # Tools and x-mcp-header
//
// On 2026-07-28 a tool whose x-mcp-header annotations break the transport's
// rules (an empty name or one that is not an RFC 9110 token, a name repeated
// case-insensitively, a property that is not string, integer or boolean, or
// an annotation not reached through properties alone) is excluded from the
// listing, as the spec requires, with a tool-excluded warning on the
// tools/list exchange. ListTools, Tools and ExcludedTools show the result;
// calling an excluded tool sends nothing and ends TOOL_EXCLUDED.
//
// # 2025-11-25 streams
//
// A response stream that ends after an event id is resumed with GET and
// Last-Event-ID (the policy's resume decision), after at least the stream's
// retry field. When the client can answer server requests (Options.Inputs),
// it also opens the standalone GET stream for the length of each tools/call,
// since some servers send their requests there rather than on the response
// stream.
//
// # MRTR
//
// An input_required result is answered from an InputProvider and followed by a
// new request with a new id, the same name and arguments, inputResponses, and
// requestState echoed byte for byte. Rounds are bounded (MaxRounds); running
// out is the call-level outcome INPUT_ROUNDS_EXCEEDED. A round is not a retry.
package client

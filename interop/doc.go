// Package interop holds the interoperability suite: mcpdiag against MCP
// software the team did not write, run by the README's test command
// (`./scripts/test.sh` → `go test -race ./...`). The package has no code of
// its own; everything is in its tests:
//
//   - the official conformance suite's server leg against `mcpdiag serve`
//     with no fault, directly and through `mcpdiag proxy` (identical
//     results, per check);
//   - the TypeScript SDK v2 client (@modelcontextprotocol/client) against
//     `mcpdiag serve`'s scenarios through a recording `mcpdiag proxy`: what
//     its API surfaced must agree with our classifier's record of the same
//     exchange;
//   - @modelcontextprotocol/server-everything, started on 127.0.0.1 with a
//     scrubbed environment, called by mcpdiag's client directly and through
//     `mcpdiag proxy`;
//   - mcp-go v1.2.1 and go-sdk v1.8.0, each as a client of `mcpdiag serve`
//     and as a server for mcpdiag's client, in both protocol eras.
//
// Every result is a row (peer × direction × era × scenario × route). The
// run prints "interop: N passed, M failed" and writes it, with the table,
// to .tools/interop/ (scripts/test.sh prints the line);
// `go test ./interop -update` rewrites the table in docs/interop.md.
//
// The Node peers run on Node 22 and pinned npm packages installed into
// .tools/node from conformance/package.json and package-lock.json (npm ci,
// under .tools/node.lock, shared with scripts/conformance-*.sh).
// MCPDIAG_CONFORMANCE=off skips them on purpose (offline work), and says
// so in the summary; a missing node or npm is a failure otherwise.
package interop

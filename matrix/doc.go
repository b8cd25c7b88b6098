// Package matrix runs an MCP client against every fault scenario and judges
// what the client did, from the server's side.
//
// # Overview
//
// A [Case] is one cell of the matrix: a scenario of the catalogue (package
// faults) with the call that triggers it, in one protocol era. [Cases]
// returns every scenario in each era it applies to (2026-07-28, and
// 2025-11-25 unless the scenario is of one era only), plus safety probes:
// four faults called with the fixture's destructive delete_item.
//
// [Run] starts the fault server (package serve) on 127.0.0.1 and runs the
// client once per case (a bounded number at once), each case on its own
// /s/{id}/mcp endpoint, so that every run has its own counters. The client
// is the built-in one (package client, with the default retry policy) or any
// program ([Options.Command]): it gets the endpoint as its last argument and
// the call in its environment ([Environment]).
//
// The verdicts come from the server's log of the run, not from the client's
// own account: every POST it sent, with its headers, JSON-RPC id, tool and
// arguments hash, the requestState it carried and the one the server
// issued, the status and Retry-After it got, and which fault fired. A
// [judge.Trace] holds those [judge.Exchange]s (judge.FromRecord reads each
// from its record) and what the client reported; [judge.Judge] applies the
// [judge.Rule]s (package judge holds them, a file per family). Each rule
// has an id, the spec text or retry-policy rule it cites, a predicate that
// says whether the run met its situation (else the verdict is not
// applicable), and a check that passes or fails with evidence: POST
// numbers, ids, headers. The matrix keeps the runner and the renderers.
//
// [FromRecords] applies the rules that need no injected fault to records
// captured elsewhere (mcpdiag proxy, mcpdiag call, the fault server's log),
// so a real client talking to a real server can be judged too.
//
// The report renders as a table (80 columns, or wide), as JSON Lines (one
// object per case, with the evidence) and as JUnit XML (a testsuite per
// case, a testcase per rule). docs/matrix.md lists the rules.
package matrix

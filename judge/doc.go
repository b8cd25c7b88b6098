// Package judge holds the matrix's rules: what an MCP client must (or must
// not) do, checked from the server's side, over the facts of typed records.
//
// A [Trace] is one client's POSTs as [Exchange]s (built from
// record.Record lines of any kind: the fault server's log, the proxy's and
// mcpdiag call's exchange records) with what the runner knows of the case
// ([Case]: its expected outcome and timeout, passed in as data) and of the
// client run ([ClientRun]). [Judge] applies the [Rule]s that run on it and
// returns a [Check] per rule: pass, fail or not applicable, with evidence
// (POST numbers, ids, headers).
//
// The rules are split by family, a file each: spec.go (what the MCP
// specification requires of a request), safety.go (retries: bounds,
// Retry-After, backoff, unsafe repeats, repeats after a refusal),
// liveness.go (finishing in time, loops, pending requests),
// classification.go (the client ran and printed what the server answered),
// auth.go (the client's OAuth chain, from the authorization server's
// lines in Trace.Auth) and probe.go (the server: how it answered the
// probes of mcpdiag probe, each exchange carrying its record.Probe; these
// rules have Rule.Probe set and run only on a trace with Trace.Probe, and
// the others never do).
// A rule reads typed record fields and flags (Flags.Pending(), Fault,
// Params), never a record's note text.
//
// The judge depends only on record, classify, retry and wire: not on the
// runner (package matrix), the fault server or its scenarios.
// testdata/*.txtar are its goldens: records in, checks out.
package judge

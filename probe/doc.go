// Package probe grades an MCP server on how it reports failure, from its own
// tool schemas, without running anything unsafe: mcpdiag probe.
//
// Run discovers the server over Streamable HTTP with package client (either
// era, or the one Options.Protocol fixes), lists every tool (all pages) and
// sends a bounded, seeded set of probes (Plan), one at a time:
//
//   - argument probes, from each tool's inputSchema: a required property
//     left out, a value of the wrong type, a null, a value outside an enum
//     or below minimum / above maximum, a string longer than maxLength or
//     shorter than minLength or not matching pattern, an extra property
//     where additionalProperties is false, empty arguments, arguments that
//     are not an object; at most Options.MaxPerTool per tool, chosen with
//     the seed;
//   - envelope probes: a tools/call of a tool the server does not list, a
//     tools/call without params.name, a tools/list with a string id and one
//     with a number id, a notification.
//
// Safety first: only tools annotated readOnlyHint true receive argument
// probes, unless Options.Allow names them or Options.AllowAll is set (an
// argument the server does not validate can still run the tool); the
// envelope probes call no listed tool.
//
// Every answer is classified by the client and recorded (record.Record,
// with the probe's kind, seed and index in record.Probe); the records are
// judged by the judge package's probe rules (judge/probe.go), which cite
// the spec rule each holds. Probe i of a seed is the same request for the
// same listing: Plan is a function of the tools and the options only.
//
// The Report gives each rule's verdict with its severity (judge.Severity:
// must, should, advice), the verdicts per tool (ToolPlan.Checks: ToolRules
// judged on that tool's probes alone), a grade per rule family (Grades),
// and the findings: the rules that failed at Options.FailOn or above
// (DefaultFailOn), which make Report.Failed true. WriteText, WriteJSON and
// WriteJUnit render it; Main is mcpdiag probe as a function (the options
// checked, the records written, the report rendered, the exit status).
package probe

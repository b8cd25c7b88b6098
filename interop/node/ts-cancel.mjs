// A TypeScript SDK client cancels a tool call it started, for the interop
// suite (interop/everything_test.go). It reads a plan, JSON, from stdin:
//
//	{"sdk", "url", "tool", "args", "cancelAfterMs", "closeAfterMs"?}
//
// "sdk" is "v2" (@modelcontextprotocol/client, pinned in
// conformance/package.json, in its 'legacy' mode: initialize, 2025-11-25)
// or "v1" (@modelcontextprotocol/sdk, server-everything's dependency, pinned
// by conformance/package-lock.json). It connects, calls the tool with an
// AbortSignal and aborts it after cancelAfterMs: either SDK then sends
// notifications/cancelled; v2 also closes the call's stream, v1 leaves it to
// the server. It closes the session closeAfterMs (1 s) after the call
// ended and prints one JSON line on stdout:
//
//	{"protocolVersion", "result": {...}}                 callTool resolved
//	{"protocolVersion", "thrown": {"class", "message"}}  it threw (the cancel)
//
// The packages are resolved from MCPDIAG_NODE_PREFIX (the npm prefix,
// .tools/node). Bounded: the whole run by MCPDIAG_RUN_TIMEOUT_MS (30 s),
// after which the process exits 3.
import { createRequire } from 'node:module';
import path from 'node:path';

const prefix = process.env.MCPDIAG_NODE_PREFIX;
if (!prefix) {
	process.stderr.write('ts-cancel: MCPDIAG_NODE_PREFIX is not set\n');
	process.exit(2);
}
const require = createRequire(path.join(prefix, 'package.json'));

setTimeout(() => {
	process.stderr.write('ts-cancel: the run took too long\n');
	process.exit(3);
}, Number(process.env.MCPDIAG_RUN_TIMEOUT_MS || 30000)).unref();

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const plan = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const info = { name: 'mcpdiag-interop-cancel-' + plan.sdk, version: '0' };
let client, transport, call;
if (plan.sdk === 'v1') {
	const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
	const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
	client = new Client(info);
	transport = new StreamableHTTPClientTransport(new URL(plan.url));
	call = (params, signal) => client.callTool(params, undefined, { signal });
} else {
	const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
	client = new Client(info, { versionNegotiation: { mode: 'legacy' } });
	transport = new StreamableHTTPClientTransport(new URL(plan.url));
	call = (params, signal) => client.callTool(params, { signal });
}
await client.connect(transport);
const ac = new AbortController();
setTimeout(() => ac.abort('user cancelled'), plan.cancelAfterMs);
const out = {};
try {
	out.result = await call({ name: plan.tool, arguments: plan.args }, ac.signal);
} catch (err) {
	out.thrown = { class: err?.constructor?.name ?? typeof err, message: String(err?.message ?? err) };
}
out.protocolVersion = transport.protocolVersion;
// The session goes on for a while, as a client's does after a cancel: the
// server ends the cancelled call's stream first, not the client's close.
await new Promise((resolve) => setTimeout(resolve, plan.closeAfterMs ?? 1000));
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');

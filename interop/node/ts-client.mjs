// The TypeScript SDK v2 client (@modelcontextprotocol/client, pinned in
// conformance/package.json) against an MCP endpoint, for the interop suite
// (interop/tssdk_test.go). It reads a plan, JSON, from stdin:
//
//	{"cases": [{"name", "era", "url", "tool", "args", "elicit"?}]}
//
// and for each case connects a fresh Client, calls the tool once and prints
// one JSON line on stdout with what the SDK's API surfaced. "era" picks the
// versionNegotiation: "2026-07-28" pins it ({mode: {pin}}: server/discover,
// no fallback); "2025-11-25" is the SDK's 'legacy' mode (initialize, the
// newest 2025 version it knows):
//
//	{"name", "connected", "protocolVersion", "result": {"isError", "text"}}        callTool resolved
//	{"name", "connected", "protocolVersion", "thrown": {"class", "code", "message", "data", "status"}}  it threw
//
// "elicit" is the elicitation/create answer ({"action", "content"}) the
// client gives when the server asks (through MRTR on 2026-07-28); without it
// the client declares no elicitation capability. Nothing else is printed on
// stdout. The package is resolved from MCPDIAG_NODE_PREFIX (the npm prefix,
// .tools/node), since this file lives outside it. Bounded: each case by
// MCPDIAG_CASE_TIMEOUT_MS (10 s), the whole run by MCPDIAG_RUN_TIMEOUT_MS
// (60 s), after which the process exits 3.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const prefix = process.env.MCPDIAG_NODE_PREFIX;
if (!prefix) {
	process.stderr.write('ts-client: MCPDIAG_NODE_PREFIX is not set\n');
	process.exit(2);
}
const require = createRequire(path.join(prefix, 'package.json'));
const sdk = require('@modelcontextprotocol/client');
const sdkVersion = JSON.parse(
	readFileSync(path.join(prefix, 'node_modules', '@modelcontextprotocol', 'client', 'package.json'), 'utf8'),
).version;
const { Client, StreamableHTTPClientTransport, ProtocolError, SdkError, SdkHttpError } = sdk;

const caseTimeout = Number(process.env.MCPDIAG_CASE_TIMEOUT_MS || 10000);
const runTimeout = Number(process.env.MCPDIAG_RUN_TIMEOUT_MS || 60000);
setTimeout(() => {
	process.stderr.write(`ts-client: the run took longer than ${runTimeout} ms\n`);
	process.exit(3);
}, runTimeout).unref();

async function readStdin() {
	const chunks = [];
	for await (const c of process.stdin) chunks.push(c);
	return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function describe(err) {
	const out = { class: err?.constructor?.name ?? typeof err, message: String(err?.message ?? err) };
	if (err instanceof ProtocolError) {
		out.class = 'ProtocolError';
		out.code = err.code;
		if (err.data !== undefined) out.data = err.data;
	} else if (err instanceof SdkHttpError) {
		out.class = 'SdkHttpError';
		out.code = err.code;
		out.status = err.status;
	} else if (err instanceof SdkError) {
		out.class = 'SdkError';
		out.code = err.code;
	}
	return out;
}

function text(result) {
	return (result?.content ?? [])
		.filter((c) => c?.type === 'text')
		.map((c) => c.text)
		.join('\n');
}

async function runCase(c) {
	const line = { name: c.name, sdk: sdkVersion, connected: false };
	const capabilities = c.elicit ? { elicitation: { form: {} } } : {};
	const client = new Client(
		{ name: 'mcpdiag-interop-ts-sdk', version: sdkVersion },
		{ capabilities, versionNegotiation: { mode: c.era === '2025-11-25' ? 'legacy' : { pin: c.era } } },
	);
	if (c.elicit) {
		line.elicitations = 0;
		client.setRequestHandler('elicitation/create', async () => {
			line.elicitations++;
			return c.elicit;
		});
	}
	const transport = new StreamableHTTPClientTransport(new URL(c.url));
	try {
		await client.connect(transport, { timeout: caseTimeout });
		line.connected = true;
		line.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
		const result = await client.callTool({ name: c.tool, arguments: c.args ?? {} }, { timeout: caseTimeout });
		line.result = { isError: result.isError === true, text: text(result) };
	} catch (err) {
		line.thrown = describe(err);
	} finally {
		await client.close().catch(() => {});
	}
	return line;
}

const plan = await readStdin();
for (const c of plan.cases) {
	process.stdout.write(JSON.stringify(await runCase(c)) + '\n');
}

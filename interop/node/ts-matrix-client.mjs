// A matrix client on the TypeScript SDK v2 (@modelcontextprotocol/client),
// written as a new user would write one for `mcpdiag matrix -- node
// ts-matrix-client.mjs` (interop/tsmatrix_test.go): it connects to the URL
// given as its last argument, calls MCP_TOOL with MCP_ARGS once, with the
// SDK's own defaults (no timeout of its own: the SDK's request timeout is
// 60 s), prints "outcome: TOOL_SUCCESS" or "outcome: TOOL_ERROR" when the
// call resolves, or the error on stderr and exits 1 when it throws. It pins
// the era MCP_PROTOCOL names (2025-11-25: the SDK's 'legacy' mode). The
// package is resolved from MCPDIAG_NODE_PREFIX (the npm prefix, .tools/node).
import { createRequire } from 'node:module';
import path from 'node:path';

const prefix = process.env.MCPDIAG_NODE_PREFIX;
if (!prefix) {
	process.stderr.write('ts-matrix-client: MCPDIAG_NODE_PREFIX is not set\n');
	process.exit(2);
}
const require = createRequire(path.join(prefix, 'package.json'));
const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');

const url = process.argv[process.argv.length - 1];
const era = process.env.MCP_PROTOCOL;
const options = era ? { versionNegotiation: { mode: era === '2025-11-25' ? 'legacy' : { pin: era } } } : {};
const client = new Client({ name: 'mcpdiag-interop-ts-matrix', version: '1.0.0' }, options);
try {
	await client.connect(new StreamableHTTPClientTransport(new URL(url)));
	const result = await client.callTool({ name: process.env.MCP_TOOL, arguments: JSON.parse(process.env.MCP_ARGS || '{}') });
	process.stdout.write(`outcome: ${result.isError === true ? 'TOOL_ERROR' : 'TOOL_SUCCESS'}\n`);
} catch (err) {
	process.stderr.write(`ts-matrix-client: ${err?.message ?? err}\n`);
	process.exitCode = 1;
} finally {
	await client.close().catch(() => {});
}

// Preloaded (node --import) into a peer client whose server URL is fixed
// (the TypeScript SDK's ssePollingClient fetches http://localhost:3001/mcp):
// every fetch of a URL under http://localhost:3001 goes to the same path
// under MCPDIAG_TARGET (http://127.0.0.1:PORT, a recording mcpdiag proxy)
// instead. Other URLs are fetched as they are.
const from = 'http://localhost:3001';
const target = process.env.MCPDIAG_TARGET;
if (!target) {
	process.stderr.write('fetch-target: MCPDIAG_TARGET is not set\n');
	process.exit(2);
}
const fetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
	const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
	if (url === from || url.startsWith(from + '/')) {
		return fetch(target + url.slice(from.length), init);
	}
	return fetch(input, init);
};

// Micro-benchmark of the article's Node.js classifier (classify.mjs) on the
// article's small responses, JSON.parse included as the article does. It
// prints lines in Go's benchmark format so benchstat and bench/run.sh read
// them beside the Go results:
//
//   BenchmarkNodeClassifySeedSmall/success  <iterations>  <ns> ns/op  <MB/s> MB/s
//
// Usage: node bench/node/bench.mjs [-count N] [-benchtime MS] [-run REGEXP]
// (defaults: -count 5, -benchtime 1000). No npm install is needed.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { classifyToolCall } from './classify.mjs';

// The article's response objects (mcp-error-layers-v3.test.mjs): good,
// rpcError, toolError, and the bodies of its input_required and
// legacy_resultType_absent cases.
const good = { jsonrpc: '2.0', id: 1, result: {
  resultType: 'complete', content: [{ type: 'text', text: 'ok' }], isError: false,
} };
const rpcError = { jsonrpc: '2.0', id: 1, error: {
  code: -32602, message: 'synthetic invalid params',
} };
const toolError = { jsonrpc: '2.0', id: 1, result: {
  resultType: 'complete', content: [{ type: 'text', text: 'failed' }], isError: true,
} };
const inputRequired = { jsonrpc: '2.0', id: 1, result: {
  resultType: 'input_required', inputRequests: { approval: {
    method: 'elicitation/create', params: { mode: 'form', message: 'synthetic input' },
  } },
} };
const legacy = { jsonrpc: '2.0', id: 1,
  result: { content: [{ type: 'text', text: 'legacy ok' }], isError: false } };

// The same bytes as benchSeedSmall in classify/bench_test.go; checked below
// (against the article's objects and against the Go file) so the two
// benchmarks cannot drift apart.
const cases = [
  ['success', good, 'TOOL_SUCCESS',
    '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}'],
  ['jsonrpc_error', rpcError, 'JSONRPC_ERROR',
    '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}'],
  ['tool_error', toolError, 'TOOL_ERROR',
    '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}'],
  ['input_required', inputRequired, 'INPUT_REQUIRED',
    '{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}'],
  ['legacy', legacy, 'TOOL_SUCCESS',
    '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}'],
];

function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}
const count = Number(arg('-count', '5'));
const benchMs = Number(arg('-benchtime', '1000'));
const run = new RegExp(arg('-run', '.'));

const goFile = new URL('../../classify/bench_test.go', import.meta.url);
const goSource = existsSync(goFile) ? readFileSync(goFile, 'utf8') : null;
for (const [name, obj, want, body] of cases) {
  assert.equal(JSON.stringify(obj), body, `${name}: body differs from the article's JSON.stringify`);
  assert.equal(classifyToolCall({ status: 200, body }).outcome, want, name);
  if (goSource !== null) {
    assert.ok(goSource.includes(`{"${name}", \`${body}\``), `${name}: classify/bench_test.go times other bytes`);
  }
}

let sink = 0;
function loop(body, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    sink += classifyToolCall({ status: 200, body }).outcome.length;
  }
  return Number(process.hrtime.bigint() - t0);
}

// Iterations that take about ms milliseconds, found as Go's testing package
// does: grow n until one run is long enough.
function calibrate(body, ms) {
  let n = 1;
  for (;;) {
    const ns = loop(body, n);
    if (ns >= ms * 1e6 || n >= 1e9) return n;
    const next = ns > 0 ? Math.ceil(n * (ms * 1e6 * 1.2) / ns) : n * 100;
    n = Math.min(Math.max(next, n + 1), n * 100);
  }
}

const selected = cases.filter(([name]) => run.test(name));
// Warm up: let V8 optimise classifyToolCall on the whole mix first, as a
// long-running client would, so no case is timed on cold code.
for (let r = 0; r < 3; r++) {
  for (const [, , , body] of selected) loop(body, calibrate(body, 50));
}

console.log(`goos: ${process.platform}`);
console.log(`goarch: ${process.arch}`);
console.log(`pkg: bench/node (node ${process.version})`);
for (let r = 0; r < count; r++) {
  for (const [name, , , body] of selected) {
    const n = calibrate(body, benchMs);
    const ns = loop(body, n);
    const nsop = ns / n;
    const mbs = (Buffer.byteLength(body) / nsop) * 1e3;
    console.log(`BenchmarkNodeClassifySeedSmall/${name}\t${n}\t${nsop.toFixed(1)} ns/op\t${mbs.toFixed(2)} MB/s`);
  }
}
if (sink === 42) console.log('');

// Reads Go benchmark output (go test -bench, and bench/node/bench.mjs, which
// prints the same format) and prints the medians and the ratios the
// performance goals are stated in, as Markdown tables.
//
// Usage: node bench/report.mjs go.txt node.txt [base.txt]
// A file whose name starts with "base" holds the same Go benchmarks run on
// an older commit (bench/run.sh BASE=REV): its rows become the "before"
// columns.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const runs = new Map(); // name -> {metric -> [values]}
for (const file of process.argv.slice(2)) {
  const prefix = basename(file).startsWith('base') ? 'Base:' : '';
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (!f[0] || !f[0].startsWith('Benchmark') || f.length < 4) continue;
    const name = prefix + f[0].replace(/-\d+$/, ''); // drop the GOMAXPROCS suffix
    const m = runs.get(name) ?? {};
    for (let i = 2; i + 1 < f.length; i += 2) {
      (m[f[i + 1]] ??= []).push(Number(f[i]));
    }
    runs.set(name, m);
  }
}

function median(xs) {
  if (!xs || xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
const get = (name, metric) => median(runs.get(name)?.[metric]);
const n = (name) => runs.get(name)?.['ns/op']?.length ?? 0;
const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a');
const verdict = (ok) => (ok ? 'met' : '**missed**');

const hasBase = [...runs.keys()].some((k) => k.startsWith('Base:'));
console.log('### Classifier vs json.Valid and wire.Valid on the same bytes (medians)\n');
console.log(`| benchmark | runs | ns/op | MB/s | B/op | allocs/op | json.Valid ns/op | ratio to json.Valid | wire.Valid ns/op | ratio to wire.Valid | goal (ratio to wire.Valid >= 0.5 for SSE from 64 KiB) |${hasBase ? ' before: ns/op | before: ratio to wire.Valid | before: B/op |' : ''}`);
console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|${hasBase ? '---:|---:|---:|' : ''}`);
for (const kind of ['JSON', 'SSE']) {
  for (const size of ['1KiB', '64KiB', '4MiB']) {
    const c = `BenchmarkClassify/${kind}/${size}`;
    const v = `BenchmarkJSONValid/${kind}/${size}`;
    const w = `BenchmarkWireValid/${kind}/${size}`;
    if (!runs.has(c)) continue;
    const ratio = get(v, 'ns/op') / get(c, 'ns/op');
    const wratio = get(w, 'ns/op') / get(c, 'ns/op');
    const goal = kind === 'SSE' && size !== '1KiB' ? verdict(wratio >= 0.5) : '(none)';
    let before = '';
    if (hasBase) {
      const bw = get('Base:' + w, 'ns/op') / get('Base:' + c, 'ns/op');
      before = ` ${fmt(get('Base:' + c, 'ns/op'))} | ${fmt(bw, 2)} | ${fmt(get('Base:' + c, 'B/op'))} |`;
    }
    console.log(`| ${kind}/${size} | ${n(c)} | ${fmt(get(c, 'ns/op'))} | ${fmt(get(c, 'MB/s'), 1)} | ${fmt(get(c, 'B/op'))} | ${fmt(get(c, 'allocs/op'))} | ${fmt(get(v, 'ns/op'))} | ${fmt(ratio, 2)} | ${fmt(get(w, 'ns/op'))} | ${fmt(wratio, 2)} | ${goal} |${before}`);
  }
}
for (const size of ['1KiB', '64KiB', '4MiB']) {
  const c = `BenchmarkClassifyReader/JSON/${size}`;
  const v = `BenchmarkJSONValid/JSON/${size}`;
  if (!runs.has(c)) continue;
  const ratio = get(v, 'ns/op') / get(c, 'ns/op');
  const w = `BenchmarkWireValid/JSON/${size}`;
  console.log(`| JSON/${size} read from an io.Reader | ${n(c)} | ${fmt(get(c, 'ns/op'))} | ${fmt(get(c, 'MB/s'), 1)} | ${fmt(get(c, 'B/op'))} | ${fmt(get(c, 'allocs/op'))} | ${fmt(get(v, 'ns/op'))} | ${fmt(ratio, 2)} | ${fmt(get(w, 'ns/op'))} | ${fmt(get(w, 'ns/op') / get(c, 'ns/op'), 2)} | (informative) |${hasBase ? ' | | |' : ''}`);
}

console.log('\n### The article\'s small responses: Go classifier vs the article\'s Node.js classifier (medians)\n');
console.log(`| response | bytes | Go ns/op | Go B/op | Go allocs/op | Node ns/op | Node / Go | goal |${hasBase ? ' before: Go ns/op | before: Node / Go |' : ''}`);
console.log(`|---|---:|---:|---:|---:|---:|---:|---|${hasBase ? '---:|---:|' : ''}`);
const ratios = [];
for (const variant of ['BenchmarkClassifySeedSmall', 'BenchmarkClassifySeedSmallInto'])
for (const c of ['success', 'jsonrpc_error', 'tool_error', 'input_required', 'legacy']) {
  const g = `${variant}/${c}`;
  const nd = `BenchmarkNodeClassifySeedSmall/${c}`;
  if (!runs.has(g)) continue;
  const bytes = Math.round((get(g, 'MB/s') * get(g, 'ns/op')) / 1e3);
  const ratio = get(nd, 'ns/op') / get(g, 'ns/op');
  ratios.push(ratio);
  const before = hasBase ? ` ${fmt(get('Base:' + g, 'ns/op'))} | ${fmt(get(nd, 'ns/op') / get('Base:' + g, 'ns/op'), 2)}x |` : '';
  console.log(`| ${c}${variant.endsWith('Into') ? ' (ClassifyInto, Result reused)' : ''} | ${bytes} | ${fmt(get(g, 'ns/op'))} | ${fmt(get(g, 'B/op'))} | ${fmt(get(g, 'allocs/op'))} | ${fmt(get(nd, 'ns/op'))} | ${fmt(ratio, 2)}x | >= 3x: ${verdict(ratio >= 3)} |${before}`);
}
if (ratios.length) {
  console.log(`\nMedian Node/Go ratio over all rows above: ${fmt(median(ratios), 2)}x.`);
}
// The floor under the allocating Classify: a Result allocated and kept,
// nothing classified (BenchmarkResultAlloc).
if (runs.has('BenchmarkResultAlloc')) {
  const a = get('BenchmarkResultAlloc', 'ns/op');
  const budgets = ['success', 'jsonrpc_error', 'tool_error', 'input_required', 'legacy']
    .map((c) => `${c} ${fmt((100 * a) / (get(`BenchmarkNodeClassifySeedSmall/${c}`, 'ns/op') / 3))}%`);
  const before = hasBase && runs.has('Base:BenchmarkResultAlloc')
    ? ` (before: ${fmt(get('Base:BenchmarkResultAlloc', 'ns/op'))} ns, ${fmt(get('Base:BenchmarkResultAlloc', 'B/op'))} B)` : '';
  console.log(`\nAllocating a Result alone (BenchmarkResultAlloc): ${fmt(a)} ns/op, ${fmt(get('BenchmarkResultAlloc', 'B/op'))} B${before}; that is this share of the 3x budget (Node's time / 3): ${budgets.join(', ')}.`);
}

const mem = [...runs.keys()].filter((k) => k.startsWith('BenchmarkStreamMemory/'));
if (mem.length) {
  console.log('\n### Memory for a stream of 1 KiB notifications (one response at the end)\n');
  console.log('| stream | ns/op | MB/s | B/op | allocs/op |');
  console.log('|---|---:|---:|---:|---:|');
  for (const k of mem) {
    console.log(`| ${k.slice('BenchmarkStreamMemory/'.length)} | ${fmt(get(k, 'ns/op'))} | ${fmt(get(k, 'MB/s'), 1)} | ${fmt(get(k, 'B/op'))} | ${fmt(get(k, 'allocs/op'))} |`);
  }
}

// Reads Go benchmark output (go test -bench, and bench/node/bench.mjs, which
// prints the same format) and prints the medians and the ratios the
// performance goals are stated in, as Markdown tables.
//
// Usage: node bench/report.mjs go.txt node.txt
import { readFileSync } from 'node:fs';

const runs = new Map(); // name -> {metric -> [values]}
for (const file of process.argv.slice(2)) {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (!f[0] || !f[0].startsWith('Benchmark') || f.length < 4) continue;
    const name = f[0].replace(/-\d+$/, ''); // drop the GOMAXPROCS suffix
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

console.log('### Classifier vs json.Valid on the same bytes (medians)\n');
console.log('| benchmark | runs | ns/op | MB/s | B/op | allocs/op | json.Valid ns/op | json.Valid MB/s | throughput ratio | goal |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const kind of ['JSON', 'SSE']) {
  for (const size of ['1KiB', '64KiB', '4MiB']) {
    const c = `BenchmarkClassify/${kind}/${size}`;
    const v = `BenchmarkJSONValid/${kind}/${size}`;
    if (!runs.has(c)) continue;
    const ratio = get(v, 'ns/op') / get(c, 'ns/op');
    const goal = size === '1KiB' ? '(none at 1 KiB)' : `>= 0.5: ${verdict(ratio >= 0.5)}`;
    console.log(`| ${kind}/${size} | ${n(c)} | ${fmt(get(c, 'ns/op'))} | ${fmt(get(c, 'MB/s'), 1)} | ${fmt(get(c, 'B/op'))} | ${fmt(get(c, 'allocs/op'))} | ${fmt(get(v, 'ns/op'))} | ${fmt(get(v, 'MB/s'), 1)} | ${fmt(ratio, 2)} | ${goal} |`);
  }
}
for (const size of ['1KiB', '64KiB', '4MiB']) {
  const c = `BenchmarkClassifyReader/JSON/${size}`;
  const v = `BenchmarkJSONValid/JSON/${size}`;
  if (!runs.has(c)) continue;
  const ratio = get(v, 'ns/op') / get(c, 'ns/op');
  console.log(`| JSON/${size} read from an io.Reader | ${n(c)} | ${fmt(get(c, 'ns/op'))} | ${fmt(get(c, 'MB/s'), 1)} | ${fmt(get(c, 'B/op'))} | ${fmt(get(c, 'allocs/op'))} | ${fmt(get(v, 'ns/op'))} | ${fmt(get(v, 'MB/s'), 1)} | ${fmt(ratio, 2)} | (informative) |`);
}

console.log('\n### The article\'s small responses: Go classifier vs the article\'s Node.js classifier (medians)\n');
console.log('| response | bytes | Go ns/op | Go B/op | Go allocs/op | Node ns/op | Node / Go | goal |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
const ratios = [];
for (const variant of ['BenchmarkClassifySeedSmall', 'BenchmarkClassifySeedSmallInto'])
for (const c of ['success', 'jsonrpc_error', 'tool_error', 'input_required', 'legacy']) {
  const g = `${variant}/${c}`;
  const nd = `BenchmarkNodeClassifySeedSmall/${c}`;
  if (!runs.has(g)) continue;
  const bytes = Math.round((get(g, 'MB/s') * get(g, 'ns/op')) / 1e3);
  const ratio = get(nd, 'ns/op') / get(g, 'ns/op');
  ratios.push(ratio);
  console.log(`| ${c}${variant.endsWith('Into') ? ' (ClassifyInto, Result reused)' : ''} | ${bytes} | ${fmt(get(g, 'ns/op'))} | ${fmt(get(g, 'B/op'))} | ${fmt(get(g, 'allocs/op'))} | ${fmt(get(nd, 'ns/op'))} | ${fmt(ratio, 2)}x | >= 3x: ${verdict(ratio >= 3)} |`);
}
if (ratios.length) {
  console.log(`\nMedian Node/Go ratio over all rows above: ${fmt(median(ratios), 2)}x.`);
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

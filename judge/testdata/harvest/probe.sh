#!/bin/bash
# Rewrites judge/testdata/probe.*.txtar from real mcpdiag probe runs: one
# against mcpdiag serve (the healthy fixture: every probe rule passes) and
# one per mode of probe/testdata/badserver (the mode's rule fails), then the
# .checks with go test ./judge -run TestGolden -update. Needs python3.
# Run from the module root: judge/testdata/harvest/probe.sh [RULE…] (the
# rules named, or every probe rule's file).
set -eu
root=$(pwd)
WORK=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
go build -o "$WORK/mcpdiag" ./cmd/mcpdiag
go build -o "$WORK/badserver" ./probe/testdata/badserver
go build -o "$WORK/stdioserver" ./probe/testdata/stdioserver
cd "$WORK"
./mcpdiag serve --addr 127.0.0.1:0 > serve.out 2>&1 & pids+=($!)
for _ in $(seq 50); do grep -q 'mcpdiag serve: http' serve.out 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^mcpdiag serve: \(http[^ ]*\).*/\1/p' serve.out | head -1)
./mcpdiag probe "$url" --protocol 2026-07-28 --max-probes 1 --record serve.jsonl > /dev/null
# The rules whose answer depends on the era also get a 2025-11-25 run.
./mcpdiag probe "$url" --protocol 2025-11-25 --max-probes 1 --record serve-2025.jsonl > /dev/null
for mode in dressed accepts unknown-as-tool malformed-ok id-type notification-200 bad-shape hang any-origin any-version no-result-type no-version-ok accept-500; do
  ./badserver -listen 127.0.0.1:0 -mode "$mode" > "bad-$mode.out" 2>&1 & pids+=($!)
  for _ in $(seq 50); do grep -q 'listening on' "bad-$mode.out" 2>/dev/null && break; sleep 0.1; done
  burl=$(sed -n 's/^listening on //p' "bad-$mode.out" | head -1)
  # Exit 1: the bad server fails the rule it is made to fail.
  ./mcpdiag probe "$burl" --max-probes 1 --timeout 300ms --record "bad-$mode.jsonl" > /dev/null || true
done
# Over stdio (go-sdk v1.8.0, auto: 2026-07-28): healthy, a line that answers
# the notification, no answer to the request after it.
./mcpdiag probe --max-probes 1 --record stdio.jsonl -- ./stdioserver > /dev/null
for mode in answer hang; do
  ./mcpdiag probe --max-probes 1 --timeout 300ms --record "stdio-notification-$mode.jsonl" -- ./stdioserver -notification "$mode" > /dev/null || true
done
python3 - "$root/judge/testdata" "$@" <<'PY'
import json, sys, os
out = sys.argv[1]
# What no probe rule reads is cut: the record id, timings, headers, the
# decision, the byte count of the request.
DROP = ('id', 'timings', 'requestHeaders', 'responseHeaders', 'decision', 'requestBytes', 'httpStatuses', 'postCount')
def cut(path):
    lines = []
    for l in open(path):
        r = json.loads(l)
        for k in DROP:
            r.pop(k, None)
        if 'probe' not in r or r.get('method') != 'tools/call' and r['probe'].get('kind') != 'notification':
            r.pop('responseBody', None)  # no probe rule reads a tools/list body
        lines.append(json.dumps(r, separators=(',', ':'), ensure_ascii=False))
    return '\n'.join(lines) + '\n'
rules = {
    'probe.answered': 'hang', 'probe.answer-shape': 'bad-shape', 'probe.invalid-arguments': 'accepts',
    'probe.is-error-missing': 'dressed', 'probe.unknown-tool': 'unknown-as-tool', 'probe.malformed-call': 'malformed-ok',
    'probe.id-type': 'id-type', 'probe.notification-202': 'notification-200',
    'probe.origin': 'any-origin', 'probe.protocol-version': 'any-version', 'probe.result-type': 'no-result-type',
    'probe.protocol-version-missing': 'no-version-ok', 'probe.accept': 'accept-500',
}
# Rules with a 2025-11-25 serve trace as well.
era2025 = {'probe.protocol-version-missing'}
# Rules with stdio traces as well (name, file, what).
stdio = {
    'probe.notification-202': [('stdio', 'stdio.jsonl', 'mcpdiag probe --max-probes 1 -- stdioserver (go-sdk v1.8.0 over stdio; auto: 2026-07-28)'),
                               ('stdio-answer', 'stdio-notification-answer.jsonl', 'the same, stdioserver -notification answer, --timeout 300ms')],
    'probe.answered': [('stdio-hang', 'stdio-notification-hang.jsonl', 'mcpdiag probe --max-probes 1 --timeout 300ms -- stdioserver -notification hang')],
}
only = set(sys.argv[2:])  # rules to rewrite (all when none named)
for rule, mode in rules.items():
    if only and rule not in only:
        continue
    path = os.path.join(out, rule + '.txtar')
    old = {}
    if os.path.exists(path):
        name = None
        for l in open(path):
            if l.startswith('-- ') and l.rstrip().endswith(' --'):
                name = l.strip()[3:-3]; old[name] = ''
            elif name:
                old[name] += l
    b = ('Golden traces of %s: records in (JSONL), checks out (RULE VERDICT EVIDENCE).\n'
         'Cut from real runs by judge/testdata/harvest/probe.sh:\n'
         '  serve: mcpdiag probe URL --protocol 2026-07-28 --max-probes 1 against mcpdiag serve (healthy)\n'
         '  bad-%s: mcpdiag probe URL --max-probes 1 --timeout 300ms against probe/testdata/badserver -mode %s\n') % (rule, mode, mode)
    traces = [('serve', 'serve.jsonl'), ('bad-' + mode, 'bad-%s.jsonl' % mode)]
    if rule in era2025:
        b += '  serve-2025: the same as serve with --protocol 2025-11-25\n'
        traces.insert(1, ('serve-2025', 'serve-2025.jsonl'))
    for t, src, what in stdio.get(rule, []):
        b += '  %s: %s\n' % (t, what)
        traces.append((t, src))
    for t, src in traces:
        b += '-- %s.jsonl --\n%s' % (t, cut(src))
        b += '-- %s.json --\n{"mode": "probe"}\n' % t
        b += '-- %s.checks --\n%s' % (t, old.get(t + '.checks', ''))
    open(path, 'w').write(b)
PY
cd "$root"
go test -count=1 ./judge -run 'TestGolden$' -update > /dev/null || true
go test -count=1 ./judge -run 'TestGolden'

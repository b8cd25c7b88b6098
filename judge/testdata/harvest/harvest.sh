#!/bin/bash
# Rewrites judge/testdata/*.txtar from real runs: the built-in client and
# matrix/testdata/badclient under mcpdiag matrix (their server logs, cut to
# each run's endpoint), and curl against mcpdiag serve and through mcpdiag
# proxy (curl.sh). Needs curl, jq and python3; ports 18321-18322 on
# 127.0.0.1. Run from the module root: judge/testdata/harvest/harvest.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/mcpdiag" ./cmd/mcpdiag
go build -o "$WORK/badclient" ./matrix/testdata/badclient
export MCPDIAG=$WORK/mcpdiag
cd "$WORK"
./mcpdiag matrix --protocol 2026-07-28 --json --record builtin.jsonl \
  --scenarios 'baseline,elicitation.approval,errors.rate_limited,errors.unsupported_version,sse.truncated,errors.connection_close,errors.http_status_sequence,timeout.uncooperative_hang,mrtr.load_shedding' > builtin.json
for spec in reuse-id:elicitation.approval ignore-retry-after:errors.rate_limited retry-destructive:sse.truncated \
    lie:baseline fallback:errors.http_status_sequence crash:baseline hang:timeout.uncooperative_hang \
    no-elicitation:elicitation.approval list-declares:elicitation.approval; do
  mode=${spec%%:*}
  # Exit 1: the bad client fails the rules it is made to fail.
  ./mcpdiag matrix --protocol 2026-07-28 --json --record "bad-$mode.jsonl" --scenarios "${spec#*:}" -- ./badclient "-bad=$mode" > "bad-$mode.json" || true
done
# The OAuth chain (issue 14): the built-in client, and badclient's OAuth modes.
./mcpdiag matrix --protocol 2026-07-28 --json --record builtin-auth.jsonl \
  --scenarios 'auth.oauth,auth.token_expired,auth.step_up,auth.scope_loop' > builtin-auth.json
for spec in no-resource:auth.oauth token-elsewhere:auth.oauth pkce-plain:auth.oauth step-up-loop:auth.scope_loop \
    token-in-url:auth.token_expired; do
  mode=${spec%%:*}
  ./mcpdiag matrix --protocol 2026-07-28 --json --record "bad-$mode.jsonl" --scenarios "${spec#*:}" -- ./badclient "-bad=$mode" > "bad-$mode.json" || true
done
# The TypeScript SDK's matrix client (no elicitation capability; it falls
# back to 2025-11-25), when the interop suite's Node tools are installed.
root=$(cd "$here/../../.." && pwd)
if [ -x "$root/.tools/node/node_modules/.bin/node" ]; then
  MCPDIAG_NODE_PREFIX="$root/.tools/node" ./mcpdiag matrix --protocol 2026-07-28 --json --record ts-elicitation.jsonl \
    --scenarios elicitation.approval -- "$root/.tools/node/node_modules/.bin/node" "$root/interop/node/ts-matrix-client.mjs" > ts-elicitation.json
fi
"$here/curl.sh"
python3 "$here/harvest.py"

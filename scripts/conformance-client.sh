#!/usr/bin/env bash
# The conformance leg, client side: the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned) runs its mock servers and drives
# mcpdiag's client through `mcpdiag conformance-client URL` (a hidden
# subcommand: the adapter reads MCP_CONFORMANCE_SCENARIO, _CONTEXT and
# _PROTOCOL_VERSION). Two runs:
#
#   1. --requirements 2026-07-28                 (the revision's frozen client set)
#   2. --suite core --spec-version 2025-11-25     (the 2025-11-25 core client set)
#
#   ./scripts/conformance-client.sh               # both runs
#   ./scripts/conformance-client.sh --out DIR     # keep the suite's checks.json files
#
# Both runs take conformance/client-expected-failures.yml as the baseline
# (the authorization extensions mcpdiag does not build: enterprise-managed,
# DPoP, workload identity; every scored auth/* scenario passes). The auth
# scenarios run the client's OAuth flow against the suite's own loopback
# authorization servers. Needs node and npm on PATH
# (any version that runs npm ci) and Go. The suite needs Node >= 22: the npm
# package node@22 installs one, with the suite, into .tools/node from the
# committed conformance/package.json and package-lock.json, with the same
# npm ci invocation, cache check and lock as scripts/conformance-server.sh
# (whichever runs first installs; the other finds the cache).
#
# Bounded: the install (5 min) and each suite run (4 min; the suite gives
# each scenario 30 s). Exit status: 0 when every failure is in the baseline
# and no baseline entry has gone stale, 1 otherwise, 2 for a set-up problem
# (missing tool, install or build failure).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

OUT=""
while [ $# -gt 0 ]; do
	case "$1" in
	--out) OUT="$2"; shift 2 ;;
	-h | --help) sed -n '2,25p' "$0"; exit 0 ;;
	*) echo "conformance-client: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

BASELINE="$ROOT/conformance/client-expected-failures.yml"

# --- install (pinned, cached): shared with the other leg
NAME=conformance-client
# shellcheck source=scripts/install-tools.sh
. "$ROOT/scripts/install-tools.sh"
# The suite only reads .tools/node from here on: let a server-side run go on.
exec 9>&-

# --- the adapter ------------------------------------------------------------
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
case "$WORK" in
*" "*) echo "conformance-client: the temp dir $WORK has a space; the suite splits --command on spaces (set TMPDIR)" >&2; exit 2 ;;
esac
echo "== building mcpdiag"
if ! go build -o "$WORK/mcpdiag" ./cmd/mcpdiag; then
	echo "conformance-client: go build ./cmd/mcpdiag failed" >&2
	exit 2
fi
ADAPTER="$WORK/mcpdiag conformance-client"

# --- the suite --------------------------------------------------------------
status=0
run() {
	local label="$1"
	shift
	local results="$WORK/results-$label"
	[ -z "$OUT" ] || results="$OUT/$label"
	mkdir -p "$results"
	local log="$WORK/conformance-$label.log" plain="$WORK/conformance-$label.txt"
	echo "== conformance client $* --expected-failures conformance/client-expected-failures.yml"
	local start rc secs
	start=$(date +%s)
	set +e
	# Run from $WORK: the suite writes ./results when -o is not honoured.
	# --timeout is each scenario's limit (the suite's default, 30 s, was
	# passed by the auth scenarios at load ~30: the suite runs every scenario
	# at once); timeout 240 bounds the whole run.
	(cd "$WORK" && PATH="$TOOLS/node_modules/.bin:$PATH" timeout 240 \
		conformance client --command "$ADAPTER" --timeout 120000 "$@" \
		--expected-failures "$BASELINE" -o "$results") >"$log" 2>&1
	rc=$?
	set -e
	secs=$(($(date +%s) - start))
	sed 's/\x1b\[[0-9;]*m//g' "$log" >"$plain"
	if [ "$rc" -ne 0 ]; then
		cat "$plain"
	else
		# Each scenario's line (✓ passed, ✗ failed and in the baseline, or
		# not scored), then the baseline verdict.
		sed -n '/^=== SUITE SUMMARY ===/,/^Total: /p' "$plain" | grep -E '^[✓✗] ' || true
		sed -n '/^Total: /,$p' "$plain" | grep -v -e '^Total: ' -e '^  ~ ' -e '^Expected failures (in baseline):' | sed '/^$/d'
	fi
	# The suite scores only the revision's required scenarios; mcpdiag also
	# holds the ones it runs without scoring (json-schema-2020-12-preservation,
	# "added after the release") to the baseline: a failure outside it fails.
	local name
	while IFS= read -r name; do
		if ! grep -qxF "  - $name" "$BASELINE"; then
			echo "conformance-client: $name failed and is not in the baseline (the suite does not score it for this run; mcpdiag does)" >&2
			status=1
		fi
	done < <(sed -n '/^=== SUITE SUMMARY ===/,/^Total: /p' "$plain" | sed -n 's/^✗ \([^:]*\):.*/\1/p')
	local total
	total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$plain" | tail -n 1 || true)"
	if [ -z "$total" ]; then
		echo "conformance-client: the suite printed no Total line (exit $rc)" >&2
		status=1
		return
	fi
	echo "$total"
	local failing
	failing="$(sed -n '/^=== SUITE SUMMARY ===/,/^Total: /p' "$plain" | grep -c '^✗ ' || true)"
	echo "== $label: suite exit $rc after ${secs}s ($failing failing scenario(s), each in the baseline: the authorization extensions not built)"
	if [ "$rc" -ne 0 ]; then
		status=1
	fi
}
run requirements-2026-07-28 --requirements 2026-07-28
run core-2025-11-25 --suite core --spec-version 2025-11-25
exit $status

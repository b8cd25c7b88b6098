#!/usr/bin/env bash
# The conformance leg, server side: the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned) against the fixture server.
#
#   ./scripts/conformance-server.sh                       # the 2026-07-28 requirement set
#   ./scripts/conformance-server.sh --requirements 2026-07-28 --requirements 2025-11-25
#   ./scripts/conformance-server.sh --out DIR             # keep the suite's checks.json files
#   ./scripts/conformance-server.sh --server serve        # `mcpdiag serve` (no fault) instead of the fixture
#   ./scripts/conformance-server.sh --server serve --proxy  # the same, through `mcpdiag proxy`
#   ./scripts/conformance-server.sh --url URL [--proxy]   # a server that is already running
#
# --server fixture|serve picks the server the script starts (fixture by
# default); --url targets a running one instead (nothing is started).
# --proxy puts `mcpdiag proxy --record` between the suite and the server; its
# records go to DIR/proxy.jsonl with --out. --mcpdiag BIN uses a built mcpdiag
# binary instead of building one (serve and proxy need it).
#
# Needs node and npm on PATH (any version that runs npm ci; Node 20 is fine)
# and Go. The suite needs Node >= 22: the npm package node@22 installs one,
# with the suite, into .tools/node from the committed conformance/package.json
# and package-lock.json (npm ci, so versions are pinned). The install is
# skipped when .tools/node already holds that exact lockfile.
#
# Everything runs on 127.0.0.1 and is bounded: the install (5 min), each
# suite run (2 min) and the server and proxy themselves (the fixture's
# -lifetime, timeout 15m for mcpdiag), which are also stopped when this
# script exits. Exit status: 0 when every required scenario
# passes or is listed in conformance/server-expected-failures.yml, 1
# otherwise, 2 for a set-up problem (missing tool, install or build failure).
set -euo pipefail
CALLER="$(pwd)"
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

REQS=()
OUT=""
SERVER=fixture
TARGET=""
PROXY=""
MCPDIAG=""
while [ $# -gt 0 ]; do
	case "$1" in
	--requirements) REQS+=("$2"); shift 2 ;;
	--out) case "$2" in /*) OUT="$2" ;; *) OUT="$CALLER/$2" ;; esac; shift 2 ;;
	--server) SERVER="$2"; shift 2 ;;
	--url) TARGET="$2"; shift 2 ;;
	--proxy) PROXY=1; shift ;;
	--mcpdiag) case "$2" in /*) MCPDIAG="$2" ;; *) MCPDIAG="$CALLER/$2" ;; esac; shift 2 ;;
	-h | --help) sed -n '2,29p' "$0"; exit 0 ;;
	*) echo "conformance-server: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ ${#REQS[@]} -gt 0 ] || REQS=(2026-07-28)
case "$SERVER" in
fixture | serve) ;;
*) echo "conformance-server: --server $SERVER: want fixture or serve" >&2; exit 2 ;;
esac
case "$TARGET" in
"" | http://*) ;;
*) echo "conformance-server: --url $TARGET: want an http:// URL" >&2; exit 2 ;;
esac

BASELINE="$ROOT/conformance/server-expected-failures.yml"

# --- install (pinned, cached): shared with the other leg
NAME=conformance-server
# shellcheck source=scripts/install-tools.sh
. "$ROOT/scripts/install-tools.sh"

# The suite only reads .tools/node from here on: let another run (the client
# leg, scripts/conformance-client.sh, shares the install) go on.
exec 9>&-

# --- the server (and the proxy) ------------------------------------------
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# first_url FILE PID: the first http://127.0.0.1:PORT… word FILE gets, within
# 10 s, while PID runs.
first_url() {
	local url=""
	for _ in $(seq 1 100); do
		url="$(grep -o -m 1 'http://127\.0\.0\.1:[0-9]*[^ ]*' "$1" 2>/dev/null | head -n 1 || true)"
		[ -n "$url" ] && break
		if ! kill -0 "$2" 2>/dev/null; then break; fi
		sleep 0.1
	done
	echo "$url"
}

need_mcpdiag() {
	[ -z "$MCPDIAG" ] || return 0
	echo "== building mcpdiag"
	if ! go build -o "$WORK/mcpdiag" ./cmd/mcpdiag; then
		echo "conformance-server: go build ./cmd/mcpdiag failed" >&2
		exit 2
	fi
	MCPDIAG="$WORK/mcpdiag"
}

URL="$TARGET"
if [ -n "$URL" ]; then
	echo "== server at $URL (--url: not started here)"
elif [ "$SERVER" = fixture ]; then
	echo "== building the fixture server"
	if ! go build -o "$WORK/fixture-server" ./fixture/cmd/fixture-server; then
		echo "conformance-server: go build ./fixture/cmd/fixture-server failed" >&2
		exit 2
	fi
	"$WORK/fixture-server" -addr 127.0.0.1:0 -lifetime 15m >"$WORK/server.out" 2>"$WORK/server.err" &
	PIDS+=($!)
	URL="$(first_url "$WORK/server.out" "${PIDS[-1]}")"
	case "$URL" in
	http://127.0.0.1:*) echo "== fixture server at $URL" ;;
	*)
		cat "$WORK/server.err" >&2
		echo "conformance-server: the fixture server did not print its URL" >&2
		exit 2
		;;
	esac
else
	need_mcpdiag
	# No fault: the healthy fixture behind the fault middleware. timeout
	# bounds it should this script be killed before its trap runs.
	timeout 15m "$MCPDIAG" serve --addr 127.0.0.1:0 >"$WORK/server.out" 2>"$WORK/server.err" &
	PIDS+=($!)
	URL="$(first_url "$WORK/server.out" "${PIDS[-1]}")"
	case "$URL" in
	http://127.0.0.1:*/mcp) echo "== mcpdiag serve at $URL" ;;
	*)
		cat "$WORK/server.out" "$WORK/server.err" >&2
		echo "conformance-server: mcpdiag serve did not print its URL" >&2
		exit 2
		;;
	esac
fi

if [ -n "$PROXY" ]; then
	need_mcpdiag
	RECORD="$WORK/proxy.jsonl"
	if [ -n "$OUT" ]; then
		mkdir -p "$OUT"
		RECORD="$OUT/proxy.jsonl"
		rm -f "$RECORD"
	fi
	timeout 15m "$MCPDIAG" proxy --upstream "$URL" --listen 127.0.0.1:0 --record "$RECORD" >"$WORK/proxy.out" 2>"$WORK/proxy.err" &
	PIDS+=($!)
	PROXY_URL="$(first_url "$WORK/proxy.err" "${PIDS[-1]}")"
	case "$PROXY_URL" in
	http://127.0.0.1:*) echo "== mcpdiag proxy at $PROXY_URL → $URL (records: $RECORD)" ;;
	*)
		cat "$WORK/proxy.out" "$WORK/proxy.err" >&2
		echo "conformance-server: mcpdiag proxy did not print its URL" >&2
		exit 2
		;;
	esac
	URL="$PROXY_URL"
fi

# --- the suite -------------------------------------------------------------
status=0
for req in "${REQS[@]}"; do
	results="$WORK/results-$req"
	[ -z "$OUT" ] || results="$OUT/$req"
	mkdir -p "$results"
	log="$WORK/conformance-$req.log"
	echo "== conformance server --requirements $req"
	start=$(date +%s)
	set +e
	# Run from $WORK: the suite writes ./results when -o is not honoured.
	(cd "$WORK" && PATH="$TOOLS/node_modules/.bin:$PATH" timeout 120 \
		conformance server --url "$URL" --requirements "$req" \
		--expected-failures "$BASELINE" -o "$results") >"$log" 2>&1
	rc=$?
	set -e
	secs=$(($(date +%s) - start))
	plain="$WORK/conformance-$req.txt"
	sed 's/\x1b\[[0-9;]*m//g' "$log" >"$plain"
	# The failing scenarios, each marked required or not scored (extension,
	# pending, added after the release), then the suite's closing lines; the
	# whole log when the suite failed.
	if [ "$rc" -ne 0 ]; then
		cat "$plain"
	else
		PATH="$TOOLS/node_modules/.bin:$PATH" conformance list --server --requirements "$req" 2>/dev/null |
			sed -n '/^Server scenarios/,/^$/s/^  - //p' >"$WORK/required-$req.txt" || true
		grep -E '^✗ ' "$plain" | while IFS= read -r line; do
			name="${line#✗ }"
			name="${name%%:*}"
			if grep -qxF "$name" "$WORK/required-$req.txt"; then
				echo "$line (required; in the expected failures)"
			else
				echo "$line (not scored for $req)"
			fi
		done
		sed -n '/^Total: /,$p' "$plain" | grep -v '^Total: ' | sed '/^$/d'
	fi
	total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$plain" | tail -n 1 || true)"
	if [ -z "$total" ]; then
		echo "conformance-server: the suite printed no Total line (exit $rc)" >&2
		status=1
		continue
	fi
	echo "$total"
	echo "== $req: suite exit $rc after ${secs}s (only required scenarios decide it; not-scored ones are reported above)"
	if [ "$rc" -ne 0 ]; then
		status=1
	fi
done
if [ -n "$PROXY" ]; then
	# Stop the proxy first (SIGTERM: it closes its record file), then count.
	kill "${PIDS[-1]}" 2>/dev/null || true
	wait "${PIDS[-1]}" 2>/dev/null || true
	unset 'PIDS[-1]'
	echo "== mcpdiag proxy recorded $(wc -l <"$RECORD" | tr -d ' ') lines in $RECORD"
fi
exit $status

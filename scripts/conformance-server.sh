#!/usr/bin/env bash
# The conformance leg, server side: the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned) against the fixture server.
#
#   ./scripts/conformance-server.sh                       # the 2026-07-28 requirement set
#   ./scripts/conformance-server.sh --requirements 2026-07-28 --requirements 2025-11-25
#   ./scripts/conformance-server.sh --out DIR             # keep the suite's checks.json files
#
# Needs node and npm on PATH (any version that runs npm ci; Node 20 is fine)
# and Go. The suite needs Node >= 22: the npm package node@22 installs one,
# with the suite, into .tools/node from the committed conformance/package.json
# and package-lock.json (npm ci, so versions are pinned). The install is
# skipped when .tools/node already holds that exact lockfile.
#
# Everything runs on 127.0.0.1 and is bounded: the install (5 min), each
# suite run (2 min) and the fixture server itself (-lifetime), which is also
# stopped when this script exits. Exit status: 0 when every required scenario
# passes or is listed in conformance/server-expected-failures.yml, 1
# otherwise, 2 for a set-up problem (missing tool, install or build failure).
set -euo pipefail
CALLER="$(pwd)"
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

REQS=()
OUT=""
while [ $# -gt 0 ]; do
	case "$1" in
	--requirements) REQS+=("$2"); shift 2 ;;
	--out) case "$2" in /*) OUT="$2" ;; *) OUT="$CALLER/$2" ;; esac; shift 2 ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "conformance-server: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ ${#REQS[@]} -gt 0 ] || REQS=(2026-07-28)

TOOLS="$ROOT/.tools/node"
BASELINE="$ROOT/conformance/server-expected-failures.yml"

for tool in node npm go; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "conformance-server: $tool is not on PATH; the conformance leg needs node and npm (any version that runs npm ci) and go" >&2
		exit 2
	fi
done

# --- install (pinned, cached) ---------------------------------------------
# One install at a time: concurrent runs (this script, the client leg's
# scripts/conformance-client.sh, two go test processes) share .tools/node.
mkdir -p "$ROOT/.tools"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$ROOT/.tools/node.lock"
	flock -w 600 9 || { echo "conformance-server: .tools/node.lock is held by another run" >&2; exit 2; }
fi
installed() {
	cmp -s "$ROOT/conformance/package-lock.json" "$TOOLS/package-lock.json" &&
		cmp -s "$ROOT/conformance/package.json" "$TOOLS/package.json" &&
		[ -x "$TOOLS/node_modules/.bin/conformance" ] &&
		"$TOOLS/node_modules/.bin/node" --version 2>/dev/null | grep -q '^v22\.'
}
if installed; then
	echo "== conformance tools: cached in .tools/node ($("$TOOLS/node_modules/.bin/node" --version), $(cd "$TOOLS" && node -p 'require("./node_modules/@modelcontextprotocol/conformance/package.json").version'))"
else
	echo "== conformance tools: npm ci into .tools/node (Node 22 and the suite, about 20 s)"
	rm -rf "$TOOLS"
	mkdir -p "$TOOLS"
	cp "$ROOT/conformance/package.json" "$ROOT/conformance/package-lock.json" "$TOOLS/"
	if ! timeout 300 npm ci --prefix "$TOOLS" --no-audit --no-fund --loglevel=error >"$TOOLS/npm-ci.log" 2>&1; then
		cat "$TOOLS/npm-ci.log" >&2
		rm -f "$TOOLS/package-lock.json" # not cached: try again next time
		echo "conformance-server: npm ci failed (log above)" >&2
		exit 2
	fi
	if ! installed; then
		echo "conformance-server: the install finished but .tools/node has no Node 22 or no conformance binary" >&2
		exit 2
	fi
fi

# The suite only reads .tools/node from here on: let another run (the client
# leg, scripts/conformance-client.sh, shares the install) go on.
exec 9>&-

# --- the fixture server ----------------------------------------------------
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

echo "== building the fixture server"
if ! go build -o "$WORK/fixture-server" ./fixture/cmd/fixture-server; then
	echo "conformance-server: go build ./fixture/cmd/fixture-server failed" >&2
	exit 2
fi
"$WORK/fixture-server" -addr 127.0.0.1:0 -lifetime 15m >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
URL=""
for _ in $(seq 1 100); do
	URL="$(head -n 1 "$WORK/server.out" 2>/dev/null || true)"
	[ -n "$URL" ] && break
	if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
	sleep 0.1
done
case "$URL" in
http://127.0.0.1:*) echo "== fixture server at $URL" ;;
*)
	cat "$WORK/server.err" >&2
	echo "conformance-server: the fixture server did not print its URL" >&2
	exit 2
	;;
esac

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
exit $status

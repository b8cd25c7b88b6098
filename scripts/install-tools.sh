# Sourced by scripts/conformance-*.sh: installs the pinned npm tools
# (Node 22, the conformance suite and the interop peers, from
# conformance/package.json + package-lock.json) into .tools/node with npm ci,
# once, and reuses them while the lock file is unchanged.
#
# Needs ROOT and NAME (for messages) set by the caller. Leaves TOOLS set and
# file descriptor 9 holding .tools/node.lock (when flock exists); the caller
# closes it (exec 9>&-) when it no longer needs the install to stay put.

TOOLS="$ROOT/.tools/node"

for tool in node npm go; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$NAME: $tool is not on PATH; the conformance leg needs node and npm (any version that runs npm ci) and go" >&2
		exit 2
	fi
done

# One install at a time: concurrent runs (both legs' scripts, several go test
# processes) share .tools/node.
mkdir -p "$ROOT/.tools"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$ROOT/.tools/node.lock"
	flock -w 600 9 || { echo "$NAME: .tools/node.lock is held by another run" >&2; exit 2; }
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
		echo "$NAME: npm ci failed (log above)" >&2
		exit 2
	fi
	if ! installed; then
		echo "$NAME: the install finished but .tools/node has no Node 22 or no conformance binary" >&2
		exit 2
	fi
fi

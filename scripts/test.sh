#!/usr/bin/env bash
# The one test command: everything CI runs, on a fresh clone, with no set-up
# beyond Go (the module proxy fetches the pinned dependencies).
#
#   ./scripts/test.sh               # all checks, each fuzzer for FUZZTIME iterations (default 1000x)
#   FUZZTIME=20000x ./scripts/test.sh # fuzz longer
#   FUZZTIME=0 ./scripts/test.sh    # skip the fuzzers
#
# Fuzz budgets are iterations, never seconds: a wall-clock budget fails on a
# busy machine (the fuzzer's warm-up over the corpus alone can outlast it:
# "context deadline exceeded" at 3 execs/s), and it tests less the busier
# the machine is. 1000 iterations of each of the nine targets take about
# 25 s on two idle cores once built.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME="${FUZZTIME:-1000x}"
case "$FUZZTIME" in
0) ;;
*[!0-9x]* | x* | *x*x* | *[0-9]) echo "FUZZTIME=$FUZZTIME: give a number of iterations such as 1000x (or 0 to skip the fuzzers), not a duration" >&2; exit 2 ;;
esac

echo "== go version: $(go version)"
go mod download

echo "== gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))"
if [ -n "$unformatted" ]; then
	echo "gofmt: these files are not formatted:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

if [ "$FUZZTIME" != "0" ]; then
	echo "== fuzz targets, ${FUZZTIME} each"
	# Every Fuzz function in the tree, each run alone for a bounded number
	# of inputs.
	grep -rl --include='*_test.go' '^func Fuzz' . | while read -r file; do
		pkg="./$(dirname "${file#./}")"
		for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2); do
			log="$(mktemp)"
			if go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; then
				echo "fuzz $pkg $fn: $(grep -E 'elapsed' "$log" | tail -n 1)"
			else
				cat "$log"; echo "fuzz $pkg $fn: FAILED (the failing input is under $pkg/testdata/fuzz/)"; exit 1
			fi
			rm -f "$log"
		done
	done
fi

echo "== go test -race"
# Last, so the run ends with go test's summary lines, then the interop
# suite's (./interop writes it to .tools/interop/summary.txt: go test shows a
# passing package's output only with -v).
rm -f .tools/interop/summary.txt
status=0
go test -race -count=1 -timeout 15m ./... || status=$?
if [ -f .tools/interop/summary.txt ]; then
	cat .tools/interop/summary.txt
else
	echo "interop: no summary (./interop did not run to its end)"
fi
exit $status

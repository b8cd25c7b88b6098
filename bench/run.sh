#!/usr/bin/env bash
# Runs the Go classifier benchmarks and the article's Node.js classifier
# benchmark in alternating rounds (so both see the same machine noise), then
# prints medians and the ratios the performance goals are stated in.
#
#   bench/run.sh                 # 5 rounds, 1s per benchmark
#   COUNT=10 BENCHTIME=2s bench/run.sh
#   CPU=1 bench/run.sh           # GOMAXPROCS=1 for the Go side
#   GOBENCH='^BenchmarkClassifySeedSmall$' bench/run.sh   # a subset
#   BASE=e244dc8 bench/run.sh    # also an older commit's classifier, same rounds
#
# Results land in $OUT (default bench/out): go.txt, node.txt, memory.txt,
# report.md, and benchstat.txt when benchstat is installed
# (go install golang.org/x/perf/cmd/benchstat@latest).
set -euo pipefail

cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-1s}
NODE_MS=${NODE_MS:-1000}
CPU=${CPU:-}
GOBENCH=${GOBENCH:-'^(BenchmarkClassify|BenchmarkClassifyReader|BenchmarkJSONValid|BenchmarkWireValid|BenchmarkClassifySeedSmall|BenchmarkClassifySeedSmallInto|BenchmarkResultAlloc)$'}
BASE=${BASE:-}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"

echo "# $(go version); node $(node --version); $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%M:%SZ)" | tee "$OUT/env.txt"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/env.txt"

go test -c -o "$OUT/classify.test" ./classify/
basefile=()
if [[ -n "$BASE" ]]; then
	# The older commit's classify and wire, with today's benchmarks (the
	# same payloads and names; a benchmark it cannot build is its own).
	basedir=$(mktemp -d)
	trap 'rm -rf "$basedir"' EXIT
	git archive "$BASE" | tar -x -C "$basedir"
	cp classify/bench_test.go "$basedir/classify/bench_test.go"
	outabs=$(cd "$OUT" && pwd)
	(cd "$basedir" && go test -c -o "$outabs/classify-base.test" ./classify/)
	: >"$OUT/base.txt"
	basefile=("$OUT/base.txt")
fi
cpuflag=()
if [[ -n "$CPU" ]]; then cpuflag=(-test.cpu "$CPU"); fi

: >"$OUT/go.txt"
: >"$OUT/node.txt"
# The three sides take turns at going first: on this machine the first
# benchmark process of a round was seen to run the same code slower than
# the last (docs/benchmarks.md, classifier2), so a fixed order favours one.
go_side() {
	"$OUT/classify.test" -test.run '^$' \
		-test.bench "$GOBENCH" \
		-test.benchmem -test.benchtime "$BENCHTIME" -test.count 1 "${cpuflag[@]}" >>"$OUT/go.txt"
}
node_side() {
	node bench/node/bench.mjs -count 1 -benchtime "$NODE_MS" >>"$OUT/node.txt"
}
base_side() {
	if [[ -n "$BASE" ]]; then
		"$OUT/classify-base.test" -test.run '^$' \
			-test.bench "$GOBENCH" \
			-test.benchmem -test.benchtime "$BENCHTIME" -test.count 1 "${cpuflag[@]}" >>"$OUT/base.txt"
	fi
}
orders=("go_side node_side base_side" "node_side base_side go_side" "base_side go_side node_side")
for i in $(seq "$COUNT"); do
	order=${orders[$(((i - 1) % 3))]}
	echo "round $i/$COUNT: ${order//_side/}" >&2
	for side in $order; do "$side"; done
done

# Memory against stream length: one run is enough, B/op does not vary.
"$OUT/classify.test" -test.run '^TestStreamMemoryBounded$' -test.v \
	-test.bench '^BenchmarkStreamMemory$' -test.benchmem -test.benchtime 3x "${cpuflag[@]}" >"$OUT/memory.txt"
grep -E 'allocated in total|^Benchmark' "$OUT/memory.txt"

node bench/report.mjs "$OUT/go.txt" "$OUT/node.txt" "$OUT/memory.txt" "${basefile[@]}" | tee "$OUT/report.md"

if [[ -z "${BENCHSTAT:-}" ]]; then
	for b in "$(command -v benchstat || true)" "$(go env GOBIN)/benchstat" "$(go env GOPATH)/bin/benchstat"; do
		if [[ -x "$b" && ! -d "$b" ]]; then BENCHSTAT=$b; break; fi
	done
fi
BENCHSTAT=${BENCHSTAT:-}
if [[ -x "$BENCHSTAT" ]]; then
	"$BENCHSTAT" "$OUT/go.txt" >"$OUT/benchstat.txt"
	"$BENCHSTAT" "$OUT/node.txt" >>"$OUT/benchstat.txt"
	echo "benchstat summary: $OUT/benchstat.txt"
else
	echo "benchstat not found; medians above are computed by bench/report.mjs"
fi

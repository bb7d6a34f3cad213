#!/usr/bin/env bash
# Reproduces the figures of bench/README.md: every benchmark -count=10 times (COUNT to change
# it), the medians with benchstat, the chart and the README's tables. About 8 minutes on the
# 2-core machine. Run it on an otherwise idle machine: the results file records the load.
set -euo pipefail
cd "$(dirname "$0")"

COUNT=${COUNT:-10}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
mkdir -p results
bin=$(mktemp -d)/bench.test
trap 'rm -rf "$(dirname "$bin")"' EXIT

# Other Go builds and tests compete for the 2 cores: count them at the start and every 10 s.
busy() { pgrep -fa 'go-build|\.test|go (test|build|run|vet)' | grep -v -e pgrep -e "$bin" || true; }
others=$(busy)
{
  go version
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
  echo "run: $(date -u +%Y-%m-%dT%H:%MZ), -count=$COUNT; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ -n "$others" ]; then
    echo "other go processes at start: $(echo "$others" | wc -l) (figures taken under contention)"
  else
    echo "other go processes at start: none"
  fi
} > results/machine.txt
cat results/machine.txt

go test -c -o "$bin" .
( while sleep 10; do [ -n "$(busy)" ] && echo busy || echo idle; done ) > "$bin.busy" &
monitor=$!
run() { "$bin" -test.run '^$' -test.benchmem -test.count="$COUNT" "$@"; }
{
  # The patterns: 200ms per sample.
  run -test.bench '^Benchmark(Breaker|Limiter|Bulkhead|Retry|TimeLimiter|Pipeline|Scaling)$' -test.benchtime=200ms
  # Per emission: a million elements per sample, ns/op is per element.
  run -test.bench '^Benchmark(StreamMap|OperatorsMap)$' -test.benchtime=1000000x
  # The time limiter's answer past the deadline: 20 calls per sample.
  run -test.bench '^BenchmarkTimeoutLatency$' -test.benchtime=20x
} | tee results/raw.txt
kill "$monitor"
checks=$(wc -l < "$bin.busy")
contended=$(grep -c busy "$bin.busy" || true)
echo "other go processes during the run: in $contended of $checks checks (every 10 s)" >> results/machine.txt

go run "$BENCHSTAT" -col /impl -table .name results/raw.txt > results/benchstat.txt
go run "$BENCHSTAT" -col /impl -format csv results/raw.txt > results/benchstat.csv 2> /dev/null
go run ./cmd/chart -in results/benchstat.csv -svg chart.svg -readme README.md -machine results/machine.txt
echo "wrote results/, chart.svg and README.md's tables"

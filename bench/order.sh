#!/usr/bin/env bash
# bench/order.sh — the tool order: does `--order rotate` still control position, and what does it
# save against a server that reuses prompt prefixes? (issue 41; results in docs/benchmarks.md)
#
#   bench/order.sh      1. position balance, no router: where each case's expected tool sits
#                          (quarters of its list) under shuffle and rotate, on the calendar, the
#                          three bench suites and the shared server-filesystem suite, over 500 seeds
#                       2. the llama.cpp server (Qwen2.5-Coder-0.5B, `-np 1`), the calendar suite
#                          at base and head, shuffle then rotate, cold caches, one request in
#                          flight: seconds per request and their ratio, accuracy by quarter
#
# Environment:
#   BENCH_LLAMA          0 skips part 2 (default 1)
#   BENCH_ORDER_CASES    cases of the calendar suite in part 2 (default 36: all)
#   DRIFTGATE_LLAMA_URL  use this running server; otherwise .ci/llama.sh starts one (and stops it)
#   DRIFTGATE_LLAMA_THREADS  llama-server -t when started here (default 1)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
LLAMA=${BENCH_LLAMA:-1}
CASES=${BENCH_ORDER_CASES:-36}
SHARED=$REPO/../shared

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init driftgate-order

msg "building the bench helper (release)"
cargo build -q --release --example order_bench
HELPER=${CARGO_TARGET_DIR:-$REPO/target}/release/examples/order_bench

latest() { find "$SHARED/corpus/$1" -name '*.json' | sort -V | tail -1; }

echo "== position balance: the expected tool's quarter of the offered list (seed 0), and Pearson's"
echo "   chi-square against uniformly drawn places over 500 seeds (mean; share above the 5% value)"
echo
echo "| suite | cases | order | quarters at seed 0 | mean chi² (df 3) | above 7.815 |"
echo "| --- | ---: | --- | --- | ---: | ---: |"
"$HELPER" positions examples/calendar/suite.yaml examples/calendar/tools.base.json
for s in playwright-mcp mcp-server-git server-github; do
  "$HELPER" positions "bench/suites/$s.suite.jsonl" "$(latest "$s")"
done
"$HELPER" positions "$SHARED/suites/server-filesystem.suite.jsonl" \
  "$SHARED/corpus/server-filesystem/2025.7.29.json"

[[ $LLAMA == 1 ]] || exit 0

bench_llama
echo
echo "== llama.cpp at $URL: calendar suite ($CASES cases), base then head, one request in flight"
echo
echo "| order | requests | wall s | s/request | base | head | flips | base right by quarter | errors |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
"$HELPER" replay "$URL/v1" examples/calendar/suite.yaml examples/calendar/tools.base.json \
  examples/calendar/tools.head.json "$CASES"

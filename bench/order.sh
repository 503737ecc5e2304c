#!/usr/bin/env bash
# bench/order.sh — the tool order: does `--order rotate` still control position, and what does it
# save against a server that reuses prompt prefixes? (issue 41; results in docs/benchmarks.md)
#
#   bench/order.sh      1. position balance, no router: where each case's expected tool sits
#                          (quarters of its list) under shuffle and rotate, on the calendar, the
#                          three bench suites and the shared server-filesystem suite, over 500 seeds
#                       2. the llama.cpp server (Qwen2.5-Coder-0.5B), the calendar suite
#                          at base and head, shuffle then rotate, cold caches, twice: one slot
#                          and one request in flight (before), then four slots and four requests
#                          in flight, one lane per rotation (after): seconds per request and their
#                          ratios, accuracy by quarter
#                       3. (BENCH_SPEC=1) the one-slot run again with speculative decoding from
#                          n-gram drafts of the context (no draft model): does it shorten the
#                          generated call that rotations leave?
#
# Environment:
#   BENCH_LLAMA          0 skips parts 2 and 3 (default 1)
#   BENCH_SPEC           1 runs part 3 (default 0)
#   BENCH_SPEC_FLAGS     its llama-server flags (default: ngram-map-k, 2-token keys, 4-token drafts)
#   BENCH_ORDER_CASES    cases of the calendar suite in part 2 (default 36: all)
#   DRIFTGATE_LLAMA_URL  use this running server (the one-slot run only); otherwise .ci/llama.sh
#                        starts each (and stops it)
#   DRIFTGATE_LLAMA_THREADS  llama-server -t when started here (default 1)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
LLAMA=${BENCH_LLAMA:-1}
SPEC=${BENCH_SPEC:-0}
SPEC_FLAGS=${BENCH_SPEC_FLAGS:---spec-type ngram-map-k --spec-ngram-map-k-size-n 2 --spec-ngram-map-k-size-m 4}
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

# One server configuration: $1 slots (llama-server -np), $2 requests in flight, $3 a label (default
# the slots) and $4 speculative-decoding flags (default none). Prints the table and leaves the two
# designs' seconds per request in $WORK/spr-LABEL (shuffle, then rotate).
llama_run() {
  local slots=$1 c=$2 label=${3:-$1} spec=${4:-} url dir
  dir=$WORK/llama-$label
  if [[ -n ${DRIFTGATE_LLAMA_URL:-} ]]; then
    url=$DRIFTGATE_LLAMA_URL
  else
    mkdir -p "$dir"
    msg "starting llama-server with $slots slot(s)"
    BENCH_LLAMA_DIRS+=("$dir")
    url=$(DRIFTGATE_LLAMA_SLOTS=$slots DRIFTGATE_LLAMA_SPEC=$spec DRIFTGATE_LLAMA_RUN_DIR=$dir \
      bash .ci/llama.sh start)
    url=${url#DRIFTGATE_LLAMA_URL=}
  fi
  echo
  echo "== llama.cpp ($slots slot(s), $c request(s) in flight${spec:+, $spec}): calendar suite ($CASES cases), base then head"
  echo
  echo "| order | requests | wall s | s/request | base | head | flips | base right by quarter | errors |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
  "$HELPER" replay "$url/v1" examples/calendar/suite.yaml examples/calendar/tools.base.json \
    examples/calendar/tools.head.json "$CASES" "$c" | tee "$WORK/table-$label"
  if [[ -n $spec ]]; then
    awk '/draft acceptance/ { for (i = 2; i <= NF; i++) { if ($i == "accepted") a += $(i - 1)
        if ($i == "generated),") g += $(i - 1) } }
      END { if (g) printf "\ndrafted tokens accepted: %d of %d (%.1f%%)\n", a, g, 100 * a / g }' \
      "$dir/llama-server.log"
  fi
  awk -F'|' '/^\| (shuffle|rotate) /{ gsub(/ /, "", $5); print $5 }' "$WORK/table-$label" >"$WORK/spr-$label"
  if [[ -z ${DRIFTGATE_LLAMA_URL:-} ]]; then
    DRIFTGATE_LLAMA_RUN_DIR=$dir bash .ci/llama.sh stop || true
  fi
}
BENCH_LLAMA_DIRS=()
stop_all() {
  local d
  for d in "${BENCH_LLAMA_DIRS[@]+"${BENCH_LLAMA_DIRS[@]}"}"; do
    DRIFTGATE_LLAMA_RUN_DIR=$d bash .ci/llama.sh stop >/dev/null 2>&1 || true
  done
  bench_cleanup
}
trap stop_all EXIT

# Before: one slot, one request in flight (the server and client as CI ran them). After: a slot
# per rotation and a request in flight per lane (`--concurrency` = `--rotations` = 4).
llama_run 1 1
[[ -n ${DRIFTGATE_LLAMA_URL:-} ]] && exit 0
llama_run 4 4
read -r -d '' before_shuffle before_rotate <"$WORK/spr-1" || true
read -r -d '' after_shuffle after_rotate <"$WORK/spr-4" || true
echo
awk -v bs="$before_shuffle" -v br="$before_rotate" -v as="$after_shuffle" -v ar="$after_rotate" 'BEGIN {
  printf "seconds per request, shuffle on 1 slot ÷ rotate on 4 slots (before ÷ after): **%.2f×**\n", bs / ar
  printf "same server, 4 slots: shuffle ÷ rotate %.2f×; 1 slot: shuffle ÷ rotate %.2f×\n", as / ar, bs / br
}'

[[ $SPEC == 1 ]] || exit 0
# Part 3: the before configuration (one slot, one in flight) with drafts from the context. Greedy
# verification keeps the tokens the model would have chosen; whether it saves time depends on how
# many drafted tokens it accepts against what verifying them costs on this CPU.
llama_run 1 1 spec "$SPEC_FLAGS"
read -r -d '' spec_shuffle spec_rotate <"$WORK/spr-spec" || true
echo
awk -v bs="$before_shuffle" -v br="$before_rotate" -v ss="$spec_shuffle" -v sr="$spec_rotate" 'BEGIN {
  printf "with drafts ÷ without (seconds per request, one slot): shuffle %.2f×, rotate %.2f×\n", ss / bs, sr / br
  printf "shuffle without ÷ rotate with drafts: %.2f×\n", bs / sr
}'

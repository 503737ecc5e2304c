#!/usr/bin/env bash
# bench/replay.sh — what a `driftgate check` replay costs, and how much of its wall time is the
# router's own latency. Numbers are read from the JSON report's per-side run counters
# (routing.base_stats / head_stats: requests_sent, cache_hits, reused, retries,
# request_latency_ms_sum, prepare_ms, wall_ms).
# overhead = wall_ms ÷ (request_latency_ms_sum ÷ concurrency + prepare_ms): the router's prepare
# step (the semantic router embeds a chunk's prompts there) runs before the chunk's requests.
#
#   bench/replay.sh                 semantic router on the calendar example (cold, then cached),
#                                   then the llama.cpp server on a generated suite
#
# Environment:
#   BENCH_PROFILE        cargo profile of the driftgate binary: dev (default) or release
#   BENCH_LLAMA          0 skips the llama.cpp part (default 1)
#   BENCH_LLAMA_CASES    generated cases for the llama.cpp part (default 200)
#   BENCH_CONCURRENCY    concurrency values for the llama.cpp part (default "1 2")
#   DRIFTGATE_LLAMA_URL  use this running server; otherwise .ci/llama.sh starts one (and stops it)
#   CARGO_TARGET_DIR     honoured as usual
# Results for this machine are in docs/benchmarks.md.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
PROFILE=${BENCH_PROFILE:-dev}
LLAMA=${BENCH_LLAMA:-1}
CASES=${BENCH_LLAMA_CASES:-200}
CONCS=${BENCH_CONCURRENCY:-1 2}

ms() { date +%s%3N; }

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init driftgate-bench

msg "building driftgate and the bench helper (profile $PROFILE)"
profile_flag=()
[[ $PROFILE == release ]] && profile_flag=(--release)
cargo build -q "${profile_flag[@]}" --bin driftgate --example bench_replay
TARGET=${CARGO_TARGET_DIR:-$REPO/target}/$([[ $PROFILE == release ]] && echo release || echo debug)
DG=$TARGET/driftgate
HELPER=$TARGET/examples/bench_replay
[[ -x $DG && -x $HELPER ]] || { msg "binaries not found under $TARGET"; exit 1; }

# run LABEL CONCURRENCY CACHE_DIR -- driftgate check args…: one check, then its table rows.
run() {
  local label=$1 conc=$2 cache=$3 t0 t1 rc=0
  shift 4
  t0=$(ms)
  NO_COLOR=1 CI=1 "$DG" check "$@" --concurrency "$conc" --cache-dir "$cache" \
    --format json -o "$WORK/report.json" 2>"$WORK/stderr" || rc=$?
  t1=$(ms)
  if [[ $rc -ge 2 ]]; then
    msg "$label: driftgate exited $rc"
    cat "$WORK/stderr" >&2
    [[ $rc == 3 ]] || exit 1
  fi
  "$HELPER" summary "$label" "$conc" "$((t1 - t0))" "$WORK/report.json"
}

CAL=(--base examples/calendar/tools.base.json --head examples/calendar/tools.head.json)

echo "== semantic router, examples/calendar (36 cases), $(nproc) cores, profile $PROFILE"
"$HELPER" header
for conc in 4 1; do
  run "semantic c=$conc cold" "$conc" "$WORK/cache-sem-$conc" -- "${CAL[@]}" --suite examples/calendar/suite.yaml
  run "semantic c=$conc cached" "$conc" "$WORK/cache-sem-$conc" -- "${CAL[@]}" --suite examples/calendar/suite.yaml
done

[[ $LLAMA == 1 ]] || exit 0

bench_llama

"$HELPER" suite examples/calendar/suite.yaml "$CASES" >"$WORK/suite.jsonl"
echo
echo "== llama.cpp server at $URL, generated suite ($CASES cases), model qwen2.5-coder-0.5b Q4_K_M"
"$HELPER" header
for conc in $CONCS; do
  cache=$WORK/cache-llama-$conc
  run "llama c=$conc cold" "$conc" "$cache" -- "${CAL[@]}" --suite "$WORK/suite.jsonl" \
    --router openai --base-url "$URL/v1" --model qwen --no-embed
  run "llama c=$conc cached" "$conc" "$cache" -- "${CAL[@]}" --suite "$WORK/suite.jsonl" \
    --router openai --base-url "$URL/v1" --model qwen --no-embed
done

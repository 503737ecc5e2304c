#!/usr/bin/env bash
# bench/router.sh — the offline semantic router under each of its options, on every suite we ship
# (calendar, server-filesystem, and the hand-written playwright-mcp, server-github and
# mcp-server-git suites), with the real bundled embedder; with BENCH_LLAMA=1 also each variant's
# agreement with a real LLM router (llama.cpp) asked the same cases. Prints Markdown tables;
# the numbers for this machine are in docs/router.md.
#
#   bench/router.sh                 accuracy and no-call precision/recall per variant and suite
#   BENCH_LLAMA=1 bench/router.sh   + agreement with llama.cpp (.ci/llama.sh starts one unless
#                                   DRIFTGATE_LLAMA_URL names a running server); its answers are
#                                   kept under target/router-bench/, so a rerun sends nothing
#
# Environment: BENCH_LLAMA (default 0), BENCH_LLAMA_SUITES (comma-separated labels, default all),
# DRIFTGATE_LLAMA_URL, CARGO_TARGET_DIR (honoured as usual).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
LLAMA=${BENCH_LLAMA:-0}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init driftgate-router

msg "building the router_bench example (release)"
cargo build --quiet --release --example router_bench
BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/examples/router_bench

ARGS=()
if [[ $LLAMA == 1 ]]; then
  bench_llama
  ARGS+=(--llm-url "$URL/v1" --llm-model qwen2.5-coder-0.5b-q4_k_m)
  [[ -n ${BENCH_LLAMA_SUITES:-} ]] && ARGS+=(--llm-suites "$BENCH_LLAMA_SUITES")
fi
"$BIN" "${ARGS[@]}"

# shellcheck shell=bash
# bench/lib.sh — sourced by the bench scripts that need a scratch directory and may need a
# llama.cpp server (bench/replay.sh, bench/router.sh): one place that starts the server with
# .ci/llama.sh, and one EXIT trap that stops what was started and removes the scratch directory.
#
#   bench_init NAME   WORK = a fresh temp directory named after NAME; installs the EXIT trap
#   bench_llama       URL = DRIFTGATE_LLAMA_URL, or the URL of a server started here (stopped on
#                     exit, its pid and log under $WORK/llama)

msg() { printf 'bench: %s\n' "$*" >&2; }

bench_init() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  BENCH_STARTED_LLAMA=0
  trap bench_cleanup EXIT
}

bench_cleanup() {
  if [[ ${BENCH_STARTED_LLAMA:-0} == 1 ]]; then
    DRIFTGATE_LLAMA_RUN_DIR=$WORK/llama bash .ci/llama.sh stop || true
  fi
  rm -rf -- "$WORK"
}

bench_llama() {
  URL=${DRIFTGATE_LLAMA_URL:-}
  [[ -z $URL ]] || return 0
  msg "starting llama-server (.ci/llama.sh start)"
  mkdir -p "$WORK/llama"
  local line
  # Marked before the start, so a start that fails half-way is still stopped.
  BENCH_STARTED_LLAMA=1
  line=$(DRIFTGATE_LLAMA_RUN_DIR=$WORK/llama bash .ci/llama.sh start)
  URL=${line#DRIFTGATE_LLAMA_URL=}
}

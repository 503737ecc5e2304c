#!/usr/bin/env bash
# .ci/fuzz.sh — bounded, coverage-guided fuzzing of driftgate's hostile-input surfaces (issue 14):
# the tools loaders, the suite parser and the Markdown / annotations / terminal renderers. The
# targets are in fuzz/ (cargo-fuzz, libFuzzer), their seeds in fuzz/corpus/<target>/.
#
#   .ci/fuzz.sh              install cargo-fuzz if needed, build every target, run each for
#                            DRIFTGATE_FUZZ_SECONDS, fail on a crash, a hang or an OOM
#   .ci/fuzz.sh TARGET...    only these targets (see `ls fuzz/fuzz_targets`)
#
# Runs on the stable toolchain: no sanitizer (`--sanitizer none`, which is what needs nightly),
# libFuzzer's coverage instrumentation only (-Cpasses=sancov-module, stable). A crash's reproducer
# is written to fuzz/artifacts/<target>/ and its path printed; fuzz/README.md says how to run it.
#
# Environment:
#   DRIFTGATE_CACHE           cache root (default $HOME/.cache/driftgate), outside the work tree:
#                             cargo-fuzz-<version>/ (the tool), fuzz-target/ (the build, warm across
#                             runs), fuzz-corpus/<target>/ (the corpus grown by earlier runs)
#   DRIFTGATE_FUZZ_SECONDS    seconds of fuzzing per target (default 45)
#   DRIFTGATE_FUZZ_TIMEOUT    seconds one input may take before it is a hang (default 10)
#   DRIFTGATE_FUZZ_PARALLEL   targets fuzzed at once, one core each (default: nproc)
#   DRIFTGATE_BUILD_JOBS      parallel compile jobs (default: nproc)
set -euo pipefail

readonly CARGO_FUZZ_VERSION=0.13.2

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly CACHE_ROOT=${DRIFTGATE_CACHE:-${HOME:?HOME is not set}/.cache/driftgate}
readonly TOOL_HOME=$CACHE_ROOT/cargo-fuzz-$CARGO_FUZZ_VERSION
readonly CARGO_FUZZ=$TOOL_HOME/bin/cargo-fuzz
readonly TARGET_DIR=$CACHE_ROOT/fuzz-target
readonly WORK_CORPUS=$CACHE_ROOT/fuzz-corpus
readonly SECONDS_PER_TARGET=${DRIFTGATE_FUZZ_SECONDS:-45}
readonly INPUT_TIMEOUT=${DRIFTGATE_FUZZ_TIMEOUT:-10}
PARALLEL=${DRIFTGATE_FUZZ_PARALLEL:-$(nproc)}
readonly JOBS=${DRIFTGATE_BUILD_JOBS:-$(nproc)}
readonly TRIPLE=x86_64-unknown-linux-gnu

msg() { printf 'fuzz.sh: %s\n' "$*" >&2; }
die() {
  msg "ERROR: $*"
  exit 1
}
now() { printf '%s' "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[[ $SECONDS_PER_TARGET =~ ^[0-9]+$ && $SECONDS_PER_TARGET -gt 0 ]] ||
  die "DRIFTGATE_FUZZ_SECONDS must be a positive number of seconds, got '$SECONDS_PER_TARGET'"
[[ $INPUT_TIMEOUT =~ ^[0-9]+$ && $INPUT_TIMEOUT -gt 0 ]] ||
  die "DRIFTGATE_FUZZ_TIMEOUT must be a positive number of seconds, got '$INPUT_TIMEOUT'"
[[ $PARALLEL =~ ^[0-9]+$ && $PARALLEL -gt 0 ]] || PARALLEL=1

TMP_PATHS=()
cleanup() {
  local p
  for p in "${TMP_PATHS[@]+"${TMP_PATHS[@]}"}"; do rm -rf -- "$p"; done
}
trap cleanup EXIT

# ---- install cargo-fuzz from crates.io into the cache (idempotent) ------------------------------
install_cargo_fuzz() {
  if [[ -x $CARGO_FUZZ ]]; then
    msg "cargo-fuzz $CARGO_FUZZ_VERSION: cached at $TOOL_HOME"
    return 0
  fi
  mkdir -p "$TOOL_HOME"
  exec 9>"$TOOL_HOME/.install.lock"
  flock 9
  if [[ -x $CARGO_FUZZ ]]; then
    return 0
  fi
  rm -rf "$TOOL_HOME"/.build.*
  local t0 tmp
  t0=$(now)
  tmp=$(mktemp -d "$TOOL_HOME/.build.XXXXXX")
  TMP_PATHS+=("$tmp")
  msg "installing cargo-fuzz $CARGO_FUZZ_VERSION from crates.io into $TOOL_HOME"
  cargo install --locked --quiet "cargo-fuzz@$CARGO_FUZZ_VERSION" --root "$tmp/root" \
    --target-dir "$tmp/target" -j "$JOBS" || die "cargo install cargo-fuzz failed"
  mkdir -p "$TOOL_HOME/bin"
  # The binary appears only by an atomic rename, after a complete install.
  mv -f "$tmp/root/bin/cargo-fuzz" "$CARGO_FUZZ"
  msg "cargo-fuzz installed in $(elapsed "$t0") s"
}

# ---- build ---------------------------------------------------------------------------------------
# `cargo fuzz build` builds every target, or the one named.
build() {
  local t0 names=("$@")
  t0=$(now)
  msg "building fuzz targets: ${names[*]:-all} (target dir $TARGET_DIR)"
  [[ ${#names[@]} -gt 0 ]] || names=("")
  local t
  for t in "${names[@]}"; do
    # --sanitizer none: AddressSanitizer needs a nightly rustc; the targets test safe Rust.
    # --debug-assertions: overflow checks and debug_assert! count as crashes.
    # --codegen-units 16: cargo-fuzz's default of 1 makes the build several times slower.
    (cd "$REPO" && CARGO_TERM_COLOR=never CARGO_BUILD_JOBS=$JOBS "$CARGO_FUZZ" build \
      --sanitizer none --debug-assertions --codegen-units 16 --target-dir "$TARGET_DIR" ${t:+"$t"}) ||
      die "cargo fuzz build failed"
  done
  msg "built in $(elapsed "$t0") s"
}

dict_of() {
  case $1 in
  load_tools) echo "$REPO/fuzz/dict/tools.dict" ;;
  suite_parse) echo "$REPO/fuzz/dict/suite.dict" ;;
  render_*) echo "$REPO/fuzz/dict/render.dict" ;;
  *) echo "" ;;
  esac
}

# One target: libFuzzer writes what it learns into the cache corpus (first directory) and reads the
# committed seeds (second, never written). Exit status 0 when it ran its time without a crash.
run_one() {
  local target=$1 log=$2 bin dict artifacts work seeds
  bin=$TARGET_DIR/$TRIPLE/release/$target
  dict=$(dict_of "$target")
  artifacts=$REPO/fuzz/artifacts/$target
  work=$WORK_CORPUS/$target
  # The renderer targets read their bytes through fuzz/src/input.rs: a corpus grown under another
  # version of it means other inputs, so it gets a directory of its own.
  if [[ $target == render_* ]]; then
    work=$work-$(sha256sum "$REPO/fuzz/src/input.rs" | cut -c1-12)
  fi
  seeds=$REPO/fuzz/corpus/$target
  mkdir -p "$artifacts" "$work"
  [[ -x $bin ]] || {
    echo "fuzz.sh: $bin was not built" >"$log"
    return 1
  }
  local args=(
    -max_total_time="$SECONDS_PER_TARGET"
    -timeout="$INPUT_TIMEOUT"
    -rss_limit_mb=4096
    -malloc_limit_mb=4096
    -print_final_stats=1
    -artifact_prefix="$artifacts/"
  )
  [[ -n $dict && -f $dict ]] && args+=(-dict="$dict")
  # No stdin: a target must never wait on it.
  "$bin" "${args[@]}" "$work" "$seeds" </dev/null >"$log" 2>&1
}

# The coverage libFuzzer started with (after reading the corpus) and ended with.
summary() {
  local target=$1 log=$2 inited final execs
  inited=$(grep -m1 -E '^#[0-9]+[[:space:]]+INITED' "$log" | grep -oE 'cov: [0-9]+ ft: [0-9]+' || true)
  final=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' || true)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | grep -oE '[0-9]+$' || true)
  local rate
  rate=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1 | grep -oE 'exec/s: [0-9]+' || true)
  printf 'fuzz.sh: %-20s start %-22s end %-40s %s execs, %s\n' "$target" "${inited:-?}" \
    "${final:-?}" "${execs:-?}" "${rate:-?}" >&2
}

main() {
  local targets=("$@") t0
  t0=$(now)
  if [[ ${#targets[@]} -eq 0 ]]; then
    local f
    for f in "$REPO"/fuzz/fuzz_targets/*.rs; do
      targets+=("$(basename "$f" .rs)")
    done
  fi
  command -v cargo >/dev/null || die "cargo not found"
  command -v flock >/dev/null || die "flock not found"
  install_cargo_fuzz
  if [[ $# -eq 0 ]]; then
    build
  else
    build "${targets[@]}"
  fi

  local logs
  logs=$(mktemp -d)
  TMP_PATHS+=("$logs")
  msg "fuzzing ${#targets[@]} target(s), ${SECONDS_PER_TARGET} s each, $PARALLEL at a time, -timeout=${INPUT_TIMEOUT} s"
  local -A pids=() failed=()
  local t running
  for t in "${targets[@]}"; do
    while running=$(jobs -rp | wc -l) && ((running >= PARALLEL)); do
      wait -n || true
    done
    run_one "$t" "$logs/$t.log" &
    pids[$t]=$!
  done
  for t in "${targets[@]}"; do
    if ! wait "${pids[$t]}"; then
      failed[$t]=1
    fi
  done

  local bad=0
  for t in "${targets[@]}"; do
    summary "$t" "$logs/$t.log"
  done
  for t in "${targets[@]}"; do
    [[ -n ${failed[$t]:-} ]] || continue
    bad=1
    msg "FAILED: $t — libFuzzer's report:"
    grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)' "$logs/$t.log" | tail -n 60 >&2
    local a
    while read -r a; do
      msg "reproducer: $a"
      msg "  replay: $TARGET_DIR/$TRIPLE/release/$t $a"
      msg "  or:     cargo fuzz run --sanitizer none $t $a"
    done < <(grep -oE "(Test unit|artifact) written to [^ ]+" "$logs/$t.log" | awk '{print $NF}')
  done
  msg "total $(elapsed "$t0") s"
  ((bad == 0)) || die "a fuzz target failed (reproducers under fuzz/artifacts/)"
}

main "$@"

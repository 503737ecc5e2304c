#!/usr/bin/env bash
# bench/scale.sh — how `diff` and `lint` scale with the number of tools. Synthetic tool sets are
# recombined from the real descriptions and schemas in tests/fixtures/corpus: base has N tools,
# head edits every tenth description, removes 5% and adds 5%. Prints wall seconds per size, the
# fitted exponent between sizes (1 = linear, 2 = quadratic), and, with a reference binary, the
# ratio reference ÷ ours measured in the same run.
#
#   bench/scale.sh                      sizes 1000 10000 50000 (diff) and 500 1000 2000 (lint)
#   DRIFTGATE_BIN=path                  the binary to measure (default: target/release/driftgate,
#                                       built if missing)
#   DRIFTGATE_REF_BIN=path              a reference binary, e.g. one built from an older commit
#   BENCH_DIFF_SIZES / BENCH_LINT_SIZES override the sizes; BENCH_TIMEOUT (s, default 300) bounds
#                                       one run (a run that hits it prints "timeout")
# Results for this machine are in docs/benchmarks.md.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
BIN=${DRIFTGATE_BIN:-target/release/driftgate}
REF=${DRIFTGATE_REF_BIN:-}
DIFF_SIZES=${BENCH_DIFF_SIZES:-1000 10000 50000}
LINT_SIZES=${BENCH_LINT_SIZES:-500 1000 2000}
TIMEOUT=${BENCH_TIMEOUT:-300}
if [ ! -x "$BIN" ]; then cargo build --release --quiet; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" $DIFF_SIZES $LINT_SIZES <<'PY'
import json, random, sys, glob, os
work, sizes = sys.argv[1], sorted({int(x) for x in sys.argv[2:]})
pool = []
for f in sorted(glob.glob("tests/fixtures/corpus/*/*.json")):
    try:
        doc = json.load(open(f))
    except Exception:
        continue
    items = doc if isinstance(doc, list) else doc.get("tools", [])
    pool += [t for t in items if isinstance(t, dict) and "name" in t]
rng = random.Random(7)
for n in sizes:
    base = []
    for i in range(n):
        t = dict(rng.choice(pool))
        t["name"] = f"{t['name']}_{i}"
        base.append(t)
    head = [dict(t) for t in base[: n - n // 20]]
    for i, t in enumerate(head):
        if i % 10 == 0:
            t["description"] = (t.get("description") or "") + " Now faster."
    for i in range(n // 20):
        t = dict(rng.choice(pool))
        t["name"] = f"added_{t['name']}_{i}"
        head.append(t)
    json.dump(base, open(os.path.join(work, f"base{n}.json"), "w"))
    json.dump(head, open(os.path.join(work, f"head{n}.json"), "w"))
PY

# Seconds for one run of "$@" (or "timeout"); the exit code of a gate that fails is fine.
secs() {
  local start end
  start=$(date +%s.%N)
  if timeout "$TIMEOUT" "$@" >/dev/null 2>&1 || [ $? -lt 124 ]; then
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l | xargs printf '%.2f'
  else
    echo timeout
  fi
}

exponent() { # t1 t2 n1 n2
  if [ "$1" = timeout ] || [ "$2" = timeout ]; then echo "-"; return; fi
  python3 -c "import math,sys; t1,t2,n1,n2=map(float,sys.argv[1:]); print(f'{math.log(max(t2,0.01)/max(t1,0.01))/math.log(n2/n1):.2f}')" "$@"
}

run() { # label sizes command-template (SIZE replaced)
  local label=$1 sizes=$2 template=$3
  printf '\n%s\n%-8s %10s %10s %10s %8s\n' "$label" tools ours ref "ref/ours" exponent
  local prev_t="" prev_n=""
  for n in $sizes; do
    local cmd=${template//SIZE/$n}
    # shellcheck disable=SC2086
    local t; t=$(secs "$BIN" $cmd)
    local r="-" ratio="-"
    if [ -n "$REF" ]; then
      # shellcheck disable=SC2086
      r=$(secs "$REF" $cmd)
      if [ "$r" != timeout ] && [ "$t" != timeout ]; then
        ratio=$(python3 -c "import sys; print(f'{max(float(sys.argv[1]),0.01)/max(float(sys.argv[2]),0.01):.1f}x')" "$r" "$t")
      fi
    fi
    local e="-"
    if [ -n "$prev_t" ]; then e=$(exponent "$prev_t" "$t" "$prev_n" "$n"); fi
    printf '%-8s %10s %10s %10s %8s\n' "$n" "$t" "$r" "$ratio" "$e"
    prev_t=$t prev_n=$n
  done
}

run "diff --no-embed (base N tools vs head: 10% edited, 5% removed, 5% added)" "$DIFF_SIZES" \
  "diff $work/baseSIZE.json $work/headSIZE.json --no-embed --format json --no-cache"
run "lint --no-embed (N tools)" "$LINT_SIZES" "lint $work/baseSIZE.json --no-embed --format json"

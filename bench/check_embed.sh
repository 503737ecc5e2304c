#!/usr/bin/env bash
# bench/check_embed.sh — an offline `check` on a real 25-tool server with long descriptions
# (playwright-mcp 0.0.76 → 0.0.83, bench/suites/playwright-mcp.suite.jsonl) against the time the
# same process spent embedding its distinct texts once (the bundled model, its load included,
# read from `--verbose`). Goal: check wall ÷ embed ≤ 2, i.e. everything that is not the model
# (loading, diff, lint, drift, both replays, the report) costs no more than the model does.
#
# And against the floor (issue 41, item 5): a process that only loads the model and embeds the
# check's distinct texts in one call (`check --embedded-texts` writes them; `driftgate embed
# --json-lines` embeds them), timed alternately with the check. Goal: check ÷ floor ≤ 1.2.
#
#   bench/check_embed.sh               5 runs, no disk cache (every distinct text embedded)
#   BENCH_RUNS=N DRIFTGATE_BIN=path    other run count / binary (default target/release/driftgate)
# Results for this machine are in docs/benchmarks.md.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
BIN=$(realpath -m "${DRIFTGATE_BIN:-target/release/driftgate}")
RUNS=${BENCH_RUNS:-5}
BASE=tests/fixtures/corpus/playwright-mcp/0.0.76.json
HEAD=tests/fixtures/corpus/playwright-mcp/0.0.83.json
if [ ! -x "$BIN" ]; then cargo build --release --quiet; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-4s %9s %9s %7s %10s %9s %9s %7s\n' run "wall s" "embed s" ratio "distinct" "peak MiB" \
  "floor s" "÷ floor"
for i in $(seq 1 "$RUNS"); do
  code=0
  /usr/bin/time -f '%e %M' -o "$work/time" "$BIN" check --base "$BASE" --head "$HEAD" \
    --suite bench/suites/playwright-mcp.suite.jsonl --no-cache --verbose --format json \
    --embedded-texts "$work/texts.jsonl" \
    --output "$work/report.json" 2>"$work/err" >/dev/null || code=$?
  # The gate may fail (exit 1): a real drift between these versions. Anything else is a failure.
  if [ "$code" != 0 ] && [ "$code" != 1 ]; then cat "$work/err" >&2; exit "$code"; fi
  read -r wall kib < <(tail -1 "$work/time")
  line=$(grep '^embeddings:' "$work/err")
  distinct=$(sed -E 's/.* ([0-9]+) distinct.*/\1/' <<<"$line")
  embed=$(sed -E 's/.* embedded by the model in ([0-9.]+) s.*/\1/' <<<"$line")
  ratio=$(python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "$wall" "$embed")
  # The floor: the same texts, one call, a fresh process (its model load included).
  [[ $(wc -l <"$work/texts.jsonl") == "$distinct" ]] || { echo "texts written ≠ distinct" >&2; exit 1; }
  /usr/bin/time -f '%e' -o "$work/ftime" "$BIN" embed --json-lines <"$work/texts.jsonl" >/dev/null
  floor=$(tail -1 "$work/ftime")
  fratio=$(python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "$wall" "$floor")
  echo "$wall $embed $ratio $floor $fratio" >>"$work/rows"
  printf '%-4s %9s %9s %7s %10s %9d %9s %7s\n' "$i" "$wall" "$embed" "$ratio" "$distinct" $((kib / 1024)) \
    "$floor" "$fratio"
done
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
w, e, r, f, fr = (statistics.median(c) for c in zip(*rows))
print(f"median: wall {w:.2f} s, embedding {e:.2f} s, check ÷ embed {r:.2f} (goal ≤ 2.00)")
print(f"median: floor {f:.2f} s, check ÷ floor {fr:.2f} (goal ≤ 1.20)")
PY

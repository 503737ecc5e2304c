#!/usr/bin/env bash
# bench/offline.sh — the offline diff against mcplock's, whole process against whole process, in
# one run (issue 41, item 5): `driftgate diff OLD NEW --no-embed` on server-filesystem
# 2025.7.1 → 2025.7.29 against mcplock 1.0.3's `check` of the same two captures
# (bench/mcplock_files.py: its CLI as published, the one network call replaced by reading the
# capture). Runs alternate (driftgate, mcplock, driftgate, …) so both see the same machine.
#
# Environment:
#   BENCH_RUNS          paired runs (default 21); the medians and their ratio are printed
#   DRIFTGATE_CACHE     where mcplock's virtualenv is kept (default $HOME/.cache/driftgate)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
RUNS=${BENCH_RUNS:-21}
CACHE=${DRIFTGATE_CACHE:-$HOME/.cache/driftgate}
VENV=$CACHE/mcplock-1.0.3
F=$REPO/../shared/corpus/server-filesystem
OLD=$F/2025.7.1.json
NEW=$F/2025.7.29.json

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init driftgate-offline

msg "building driftgate (release)"
cargo build -q --release --bin driftgate
DG=${CARGO_TARGET_DIR:-$REPO/target}/release/driftgate
if [[ ! -x $VENV/bin/python ]]; then
  msg "installing mcplock 1.0.3 from PyPI into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q mcplock==1.0.3
fi
export MCPLOCK_HOME=$WORK/mcplock
"$VENV/bin/python" bench/mcplock_files.py snapshot "$OLD" >/dev/null

ns() { date +%s%N; }
dg=() ml=()
for ((i = 0; i < RUNS; i++)); do
  t=$(ns)
  "$DG" diff "$OLD" "$NEW" --no-embed >/dev/null || [[ $? == 1 ]]
  dg+=($(($(ns) - t)))
  t=$(ns)
  "$VENV/bin/python" bench/mcplock_files.py check "$NEW" >/dev/null || [[ $? == 1 ]]
  ml+=($(($(ns) - t)))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
d=$(median "${dg[@]}")
m=$(median "${ml[@]}")
echo "| tool | runs | median ms |"
echo "| --- | ---: | ---: |"
awk -v d="$d" -v m="$m" -v n="$RUNS" 'BEGIN {
  printf "| driftgate diff --no-embed | %d | %.1f |\n", n, d / 1e6
  printf "| mcplock 1.0.3 check (capture) | %d | %.1f |\n", n, m / 1e6
  printf "\nmcplock ÷ driftgate: **%.1f×**\n", m / d
}'

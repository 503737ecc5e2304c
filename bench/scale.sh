#!/usr/bin/env bash
# bench/scale.sh — how `diff`, `lint` and `check` scale. Synthetic tool sets are recombined from
# the real descriptions and schemas in tests/fixtures/corpus: base has N tools, head edits every
# tenth description, removes 5% and adds 5%. Prints wall seconds and peak RSS per size, the fitted
# exponent between sizes (1 = linear, 2 = quadratic), and, with a reference binary, the ratio
# reference ÷ ours measured in the same run.
#
# - diff --no-embed: N tools.
# - lint --no-embed on the recombined set: its pairs that pass the schema gate grow as N² (the
#   corpus has 418 distinct definitions, so copies share their arguments, and a fifth require
#   nothing): output-bound, so the pairs emitted are printed; past lint's cap it is refused.
# - lint --no-embed on a gateway set: the same tools as servers of 50 behind one gateway, each
#   server's parameters named for it and each tool taking a server argument, so pairs stay
#   within a server and the output grows as N.
# - check (semantic router, bundled embedder, no cache) of N cases over 20 tools: the case count
#   is what scales there; and one row of 1,000 tools × 50 cases.
#
#   bench/scale.sh                      diff and lint at 100 1000 10000 50000 tools, check at
#                                       100 1000 100000 cases and 1,000 tools × 50 cases
#   DRIFTGATE_BIN=path                  the binary to measure (default: target/release/driftgate,
#                                       built if missing)
#   DRIFTGATE_REF_BIN=path              a reference binary, e.g. one built from an older commit
#   BENCH_DIFF_SIZES / BENCH_LINT_SIZES / BENCH_CHECK_SIZES override the sizes (an empty
#                                       BENCH_CHECK_SIZES skips check, BENCH_CHECK_WIDE=0 the
#                                       1,000-tool row); BENCH_TIMEOUT (s, default 300) bounds
#                                       one run (a run that hits it prints "timeout")
# Results for this machine are in docs/benchmarks.md.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
BIN=$(realpath -m "${DRIFTGATE_BIN:-target/release/driftgate}")
REF=${DRIFTGATE_REF_BIN:+$(realpath -m "$DRIFTGATE_REF_BIN")}
DIFF_SIZES=${BENCH_DIFF_SIZES-100 1000 10000 50000}
LINT_SIZES=${BENCH_LINT_SIZES-100 1000 10000 50000}
CHECK_SIZES=${BENCH_CHECK_SIZES-100 1000 100000}
CHECK_WIDE=${BENCH_CHECK_WIDE:-1}
TIMEOUT=${BENCH_TIMEOUT:-300}
if [ ! -x "$BIN" ]; then cargo build --release --quiet; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$DIFF_SIZES $LINT_SIZES" "$CHECK_SIZES" "$CHECK_WIDE" <<'PY'
import json, random, sys, glob, os
work = sys.argv[1]
sizes = sorted({int(x) for x in sys.argv[2].split()})
check_sizes = sorted({int(x) for x in sys.argv[3].split()})
wide = sys.argv[4] != "0"
pool = []
for f in sorted(glob.glob("tests/fixtures/corpus/*/*.json")):
    try:
        doc = json.load(open(f))
    except Exception:
        continue
    items = doc if isinstance(doc, list) else doc.get("tools", [])
    pool += [t for t in items if isinstance(t, dict) and "name" in t]

def tools(n, rng):
    out = []
    for i in range(n):
        t = dict(rng.choice(pool))
        t["name"] = f"{t['name']}_{i}"
        out.append(t)
    return out

def edited(base, rng, drop=True):
    n = len(base)
    head = [dict(t) for t in base[: n - n // 20 if drop else n]]
    for i, t in enumerate(head):
        if i % 10 == 0:
            t["description"] = (t.get("description") or "") + " Now faster."
    if drop:
        for i in range(n // 20):
            t = dict(rng.choice(pool))
            t["name"] = f"added_{t['name']}_{i}"
            head.append(t)
    return head

def gateway(base, per=50):
    out = []
    for i, t in enumerate(base):
        g = i // per
        t = json.loads(json.dumps(t))
        s = t.get("inputSchema") if isinstance(t.get("inputSchema"), dict) else {"type": "object"}
        props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
        s["properties"] = {f"{k}_{g}": v for k, v in props.items()}
        req = s.get("required") if isinstance(s.get("required"), list) else []
        s["properties"][f"server_{g}"] = {"type": "string"}
        s["required"] = [f"{k}_{g}" for k in req if isinstance(k, str)] + [f"server_{g}"]
        t["inputSchema"] = s
        out.append(t)
    return out

def dump(obj, name):
    json.dump(obj, open(os.path.join(work, name), "w"))

rng = random.Random(7)
for n in sizes:
    base = tools(n, rng)
    dump(base, f"base{n}.json")
    dump(edited(base, rng), f"head{n}.json")
    dump(gateway(base), f"gateway{n}.json")

def suite(ts, cases, name):
    with open(os.path.join(work, name), "w") as f:
        f.write("version: 1\ncases:\n")
        for k in range(cases):
            t = ts[rng.randrange(len(ts))]
            d = (t.get("description") or t["name"]).split(".")[0][:100]
            # Every prompt is its own text: nothing is embedded once for many cases.
            p = json.dumps(f"{d} (ticket {k})")
            f.write(f"  - {{id: c{k}, prompt: {p}, expect: {t['name']}}}\n")

small = tools(20, rng)
dump(small, "check_base.json")
dump(edited(small, rng, drop=False), "check_head.json")
for n in check_sizes:
    suite(small, n, f"suite{n}.yaml")
if wide:
    big = tools(1000, rng)
    dump(big, "wide_base.json")
    dump(edited(big, rng, drop=False), "wide_head.json")
    suite(big, 50, "wide_suite.yaml")
PY

# One run of "$@": "seconds peak-KiB" (or "timeout -"); a gate that fails (exit 1) or a refusal
# (exit 2) still counts, and $work/out holds its stdout.
measure() {
  local code=0
  /usr/bin/time -f '%e %M' -o "$work/time" timeout "$TIMEOUT" "$@" >"$work/out" 2>/dev/null || code=$?
  if [ "$code" = 124 ] || [ "$code" -gt 128 ]; then echo "timeout -"; else tail -1 "$work/time"; fi
}

exponent() { # t1 t2 n1 n2
  if ! [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]]; then echo "-"; return; fi
  python3 -c "import math,sys; t1,t2,n1,n2=map(float,sys.argv[1:]); print(f'{math.log(max(t2,0.01)/max(t1,0.01))/math.log(n2/n1):.2f}')" "$@"
}

# What the last run emitted: lint's scored pairs, or "refused" when it wrote no report.
pairs() {
  python3 -c "
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print('refused'); sys.exit()
print(len(r['lint']['pairs']['scored']))" "$work/out"
}

run() { # label sizes command-template (SIZE replaced) [pairs]
  local label=$1 sizes=$2 template=$3 count=${4:-}
  [ -n "$sizes" ] || return 0
  printf '\n%s\n%-8s %9s %9s %9s %9s %9s %8s' "$label" N "ours s" "ours MiB" "ref s" "ref MiB" "ref/ours" exponent
  [ -n "$count" ] && printf ' %9s %9s' pairs "ref pairs"
  printf '\n'
  local prev_t="" prev_n=""
  for n in $sizes; do
    local cmd=${template//SIZE/$n}
    local t m p="-" r="-" rm="-" rp="-" ratio="-"
    # shellcheck disable=SC2086
    read -r t m < <(measure "$BIN" $cmd)
    [ -n "$count" ] && p=$(pairs)
    if [ -n "$REF" ]; then
      # shellcheck disable=SC2086
      read -r r rm < <(measure "$REF" $cmd)
      [ -n "$count" ] && rp=$(pairs)
      if [[ $r =~ ^[0-9.]+$ && $t =~ ^[0-9.]+$ ]]; then
        ratio=$(python3 -c "import sys; print(f'{max(float(sys.argv[1]),0.01)/max(float(sys.argv[2]),0.01):.1f}x')" "$r" "$t")
      fi
    fi
    local e="-"
    if [ -n "$prev_t" ]; then e=$(exponent "$prev_t" "$t" "$prev_n" "$n"); fi
    mib() { [[ $1 =~ ^[0-9]+$ ]] && echo $(($1 / 1024)) || echo "-"; }
    printf '%-8s %9s %9s %9s %9s %9s %8s' "$n" "$t" "$(mib "$m")" "$r" "$(mib "$rm")" "$ratio" "$e"
    [ -n "$count" ] && printf ' %9s %9s' "$p" "$rp"
    printf '\n'
    prev_t=$t prev_n=$n
  done
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
run "diff --no-embed (base N tools vs head: 10% edited, 5% removed, 5% added)" "$DIFF_SIZES" \
  "diff $work/baseSIZE.json $work/headSIZE.json --no-embed --format json --no-cache"
run "lint --no-embed, recombined set (N tools; pairs grow as N²)" "$LINT_SIZES" \
  "lint $work/baseSIZE.json --no-embed --format json" pairs
run "lint --no-embed, gateway set (N tools as servers of 50)" "$LINT_SIZES" \
  "lint $work/gatewaySIZE.json --no-embed --format json" pairs
run "check, semantic router, no cache (N cases over 20 tools)" "$CHECK_SIZES" \
  "check --base $work/check_base.json --head $work/check_head.json --suite $work/suiteSIZE.yaml --no-cache --format json"
if [ "$CHECK_WIDE" != 0 ]; then
  run "check, semantic router, no cache (1,000 tools x N cases)" "50" \
    "check --base $work/wide_base.json --head $work/wide_head.json --suite $work/wide_suite.yaml --no-cache --format json"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Re-run driftgate over every consecutive release pair of the corpus (issue 11: the before/after
# table in docs/corpus-verdicts.md).
#
#   bench/corpus_verdicts.sh DRIFTGATE OUT.jsonl [REPORT_DIR]
#
# For each server directory of $CORPUS, the versions are paired in the release order of
# $CORPUS/INDEX.md (its "Servers" table, not file-name order) and every pair is run with
#   DRIFTGATE diff OLD.json NEW.json --format json
# and, for servers that have a routing suite (below), also with
#   DRIFTGATE check --base OLD.json --head NEW.json --suite SUITE --format json
# at default settings (semantic router, bundled MiniLM embedder, offline). Every run writes one
# JSON line to OUT.jsonl:
#   server, from, to, command, suite, exit, status, reason, detail
# status/reason are the report's verdict; a run with no JSON report (exit 2) has status "error"
# and the last line of its stderr as reason. detail is read from the report where present
# (fields an older build does not write are null): the applied cosine floor, the descriptions
# (and parameter descriptions) below it, the count of schema changes rated high or breaking,
# introduced scan findings, the routing summary and per-tool drops, and for check how many suite
# cases had no expected tool offered at base (the "suite vs base tools" notes; driftgate checks
# the suite against base's tools only).
# With REPORT_DIR, each run's full JSON report and stderr are kept there.
#
# Environment: CORPUS (default /work/shared/corpus), FS_SUITE (default
# /work/shared/suites/server-filesystem.suite.jsonl), SQLITE_SUITE (default
# tests/fixtures/check/sqlite.suite.yaml of this checkout). Runs happen in an empty temporary
# directory (no driftgate.toml is picked up) with a fresh cache directory, outside GitHub mode.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 DRIFTGATE OUT.jsonl [REPORT_DIR]" >&2
  exit 2
fi
command -v jq >/dev/null || { echo "$0: jq is required" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dg=$(realpath "$1")
out=$(realpath -m "$2")
reports=${3:+$(realpath -m "$3")}
corpus=$(realpath "${CORPUS:-/work/shared/corpus}")
fs_suite=$(realpath "${FS_SUITE:-/work/shared/suites/server-filesystem.suite.jsonl}")
sqlite_suite=$(realpath "${SQLITE_SUITE:-$here/tests/fixtures/check/sqlite.suite.yaml}")
index=$corpus/INDEX.md

[[ -x $dg ]] || { echo "$0: $dg is not executable" >&2; exit 2; }
[[ -f $index ]] || { echo "$0: $index not found" >&2; exit 2; }

# Suites by server: the routing suites that exist for corpus servers.
declare -A suite_of=(
  [server-filesystem]=$fs_suite
  [mcp-server-sqlite]=$sqlite_suite
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=$work/cache
mkdir -p "$work/cwd" "$cache"
[[ -n $reports ]] && mkdir -p "$reports"
mkdir -p "$(dirname "$out")"
: >"$out"

# No GitHub mode, no comment, no inherited config.
unset GITHUB_ACTIONS GITHUB_EVENT_PATH GITHUB_STEP_SUMMARY GITHUB_OUTPUT GITHUB_TOKEN DRIFTGATE_CACHE_DIR

# The release order of a server's versions: the "versions captured" list of INDEX.md's Servers
# table, e.g. "0.5.1:9, 0.6.2:9, 2025.1.14:11" -> 0.5.1 0.6.2 2025.1.14.
versions_of() {
  awk -F'|' -v s="$1" '
    /^## Servers/ { on = 1; next }
    /^## / { on = 0 }
    on && $2 ~ "^ *" s " *$" {
      n = split($6, a, ",")
      for (i = 1; i <= n; i++) { v = a[i]; sub(/:[0-9]+ *$/, "", v); gsub(/ /, "", v); print v }
    }' "$index"
}

# The same pairs as INDEX.md's "Consecutive version pairs" table states them (a cross-check).
index_pairs_of() {
  awk -F'|' -v s="$1" '
    /^## Consecutive version pairs/ { on = 1; next }
    /^## / { on = 0 }
    on && $2 ~ "^ *" s " *$" { p = $3; gsub(/ /, "", p); sub(/→/, " ", p); print p }' "$index"
}

detail='{
  floor: (.drift.floor // null),
  floor_source: (.drift.floor_source // null),
  below_floor: ([.drift.tools[]? | select(.below_floor == true)
                 | "\(.tool) \(.description_cosine)"]
              + [.drift.tools[]? | .tool as $t | .params[]? | select(.below_floor == true)
                 | "\($t).\(.name) \(.cosine)"]),
  schema_high: ([.diff.tools[]?.changes[]? | select(.severity == "high" or .severity == "breaking")] | length),
  scan_introduced: [.scan.introduced[]? | "\(.level) \(.rule) `\(.tool)` \(.field)"],
  routing: (.routing.summary // null | if . == null then null else
             {n_cases, base_accuracy, head_accuracy, delta, p_value_worse,
              regressed: .discordant_right_to_wrong, fixed: .discordant_wrong_to_right} end),
  tool_drops: [.routing.per_tool[]? | select(.delta < 0)
               | "\(.tool) \(.base_accuracy) -> \(.head_accuracy) over \(.cases) p=\(.p_value_worse)"],
  unoffered_base: (if .routing == null then null
                   else [.notes[]? | strings | select(startswith("suite vs base tools"))] | length end)
}'

run() { # server from to command suite-or-empty
  local server=$1 from=$2 to=$3 cmd=$4 suite=$5
  local old=$corpus/$server/$from.json new=$corpus/$server/$to.json
  local tag=$server.$from.$to.$cmd
  local rep=$work/$tag.json err=$work/$tag.err
  local args rc=0
  if [[ $cmd == diff ]]; then
    args=(diff "$old" "$new")
  else
    args=(check --base "$old" --head "$new" --suite "$suite")
  fi
  (cd "$work/cwd" && "$dg" "${args[@]}" --format json --cache-dir "$cache" >"$rep" 2>"$err") || rc=$?
  if jq -e '.verdict.status' "$rep" >/dev/null 2>&1; then
    jq -c --arg server "$server" --arg from "$from" --arg to "$to" --arg cmd "$cmd" \
      --arg suite "${suite:+$(basename "$suite")}" --argjson exit "$rc" \
      "{server: \$server, from: \$from, to: \$to, command: \$cmd,
        suite: (if \$suite == \"\" then null else \$suite end), exit: \$exit,
        status: .verdict.status, reason: .verdict.reason, detail: $detail}" "$rep" >>"$out"
  else
    local msg
    msg=$(grep -v '^[[:space:]]*$' "$err" | tail -n 1 || true)
    jq -nc --arg server "$server" --arg from "$from" --arg to "$to" --arg cmd "$cmd" \
      --arg suite "${suite:+$(basename "$suite")}" --argjson exit "$rc" --arg reason "$msg" \
      '{server: $server, from: $from, to: $to, command: $cmd,
        suite: (if $suite == "" then null else $suite end), exit: $exit,
        status: "error", reason: $reason, detail: null}' >>"$out"
  fi
  if [[ -n $reports ]]; then
    cp "$rep" "$reports/$tag.json"
    cp "$err" "$reports/$tag.err"
  fi
  printf '%-28s %-11s -> %-11s %-5s exit %s\n' "$server" "$from" "$to" "$cmd" "$rc" >&2
}

pairs=0
for dir in "$corpus"/*/; do
  server=$(basename "$dir")
  mapfile -t vs < <(versions_of "$server")
  listed=1
  if [[ ${#vs[@]} -eq 0 ]]; then
    # A server directory INDEX.md does not list: version-sort its files, and say so.
    listed=0
    echo "$0: warning: $server is not in INDEX.md; pairing its files in sort -V order" >&2
    mapfile -t vs < <(find "$dir" -maxdepth 1 -name '*.json' -printf '%f\n' | sed 's/\.json$//' | sort -V)
  fi
  # Every file is a listed version and every listed version has a file.
  while read -r f; do
    printf '%s\n' "${vs[@]}" | grep -qxF "$f" || echo "$0: warning: $server/$f.json is not in INDEX.md's version list; skipped" >&2
  done < <(find "$dir" -maxdepth 1 -name '*.json' -printf '%f\n' | sed 's/\.json$//')
  present=()
  for v in "${vs[@]}"; do
    if [[ -f $dir/$v.json ]]; then present+=("$v"); else echo "$0: warning: $server/$v.json listed but missing" >&2; fi
  done
  mine=$(for ((i = 1; i < ${#present[@]}; i++)); do echo "${present[i - 1]} ${present[i]}"; done)
  theirs=$(index_pairs_of "$server")
  [[ $listed == 0 || $mine == "$theirs" ]] || echo "$0: warning: $server: pairs differ from INDEX.md's pair table" >&2
  for ((i = 1; i < ${#present[@]}; i++)); do
    from=${present[i - 1]} to=${present[i]}
    pairs=$((pairs + 1))
    run "$server" "$from" "$to" diff ""
    if [[ -n ${suite_of[$server]:-} ]]; then
      run "$server" "$from" "$to" check "${suite_of[$server]}"
    fi
  done
done

echo "$0: $pairs pairs, $(wc -l <"$out") runs -> $out" >&2

#!/usr/bin/env bash
# GitHub Action entrypoint: map the action's inputs (INPUT_* variables with underscores, set in
# action.yml's runs.env) to driftgate flags, then run `check` when there is a suite (the input, or
# a [suite] table in the config file) and `diff` otherwise; with `report`, post that report. Inputs never carry API keys: those
# arrive as environment variables from the workflow's `env:`. The exit code is driftgate's.
set -eu

# `uses: docker://…` passes inputs as the runner names them, INPUT_BASE-REF and so on (no
# action.yml maps them): read those where the underscore name is unset. (bash, not sh: dash
# drops such names from the environment it passes on.)
for name in BASE-REF SERVER-CMD SERVER-ENV BASE-URL COSINE-FLOOR REQUIRE-SIGNIFICANCE FAIL-ON SCAN-FAIL-ON GITHUB-TOKEN; do
  var=INPUT_$(printf '%s' "$name" | tr - _)
  eval "current=\${$var:-}"
  if [ -z "$current" ] && value=$(printenv "INPUT_$name"); then
    export "$var=$value"
  fi
done

if [ -n "${INPUT_GITHUB_TOKEN:-}" ]; then
  GITHUB_TOKEN="$INPUT_GITHUB_TOKEN"
  export GITHUB_TOKEN
fi

# The workflow_run job of a fork PR: post the report the PR's job left as an artifact.
if [ -n "${INPUT_REPORT:-}" ]; then
  if [ -n "${INPUT_COMMENT:-}" ]; then
    exec driftgate comment --report "$INPUT_REPORT" --comment "$INPUT_COMMENT"
  fi
  exec driftgate comment --report "$INPUT_REPORT"
fi

# The job after a matrix of shard jobs: merge their parts into one report, and gate on it.
if [ -n "${INPUT_MERGE:-}" ]; then
  set -- merge --github --annotations
  if [ -n "${INPUT_COMMENT:-}" ]; then set -- "$@" --comment "$INPUT_COMMENT"; fi
  if [ -n "${INPUT_REPORT_ARTIFACT:-}" ]; then
    set -- "$@" --report-artifact "$INPUT_REPORT_ARTIFACT"
  fi
  newline='
'
  old_ifs=$IFS
  IFS=$newline
  # One pattern per line, globbed (a path with spaces stays one); a glob that matches nothing
  # stays as written, and driftgate then names the missing file.
  for pattern in $INPUT_MERGE; do
    for part in $pattern; do set -- "$@" "$part"; done
  done
  IFS=$old_ifs
  exec driftgate "$@"
fi

tools="${INPUT_TOOLS:?the tools input is required}"
config="${INPUT_CONFIG:-}"
if [ -z "$config" ] && [ -f driftgate.toml ]; then
  config="driftgate.toml"
fi

cmd="diff"
if [ -n "${INPUT_SUITE:-}" ]; then
  cmd="check"
elif [ -n "$config" ] && grep -q '^[[:space:]]*\[suite\]' "$config"; then
  cmd="check"
fi

# Each input becomes one argument, spaces included (a server command stays one argument).
set -- "$cmd" --tools "$tools" --github --annotations
if [ -n "$config" ]; then set -- "$@" --config "$config"; fi
if [ -n "${INPUT_BASE_REF:-}" ]; then set -- "$@" --base-ref "$INPUT_BASE_REF"; fi
if [ -n "${INPUT_SERVER_CMD:-}" ]; then set -- "$@" --head-server-cmd "$INPUT_SERVER_CMD"; fi
# One --server-env per non-empty line (values may hold spaces; they stay one argument).
if [ -n "${INPUT_SERVER_ENV:-}" ]; then
  newline='
'
  old_ifs=$IFS
  IFS=$newline
  set -f # a value with * must not glob
  for kv in $INPUT_SERVER_ENV; do
    IFS=$old_ifs
    if [ -n "$kv" ]; then set -- "$@" --server-env "$kv"; fi
    IFS=$newline
  done
  set +f
  IFS=$old_ifs
fi
if [ -n "${INPUT_COSINE_FLOOR:-}" ]; then set -- "$@" --cosine-floor "$INPUT_COSINE_FLOOR"; fi
if [ -n "${INPUT_TOLERANCE:-}" ]; then set -- "$@" --tolerance "$INPUT_TOLERANCE"; fi
if [ -n "${INPUT_ARGS_TOLERANCE:-}" ]; then
  set -- "$@" --args-tolerance "$INPUT_ARGS_TOLERANCE"
fi
if [ -n "${INPUT_REQUIRE_SIGNIFICANCE:-}" ]; then
  set -- "$@" --require-significance "$INPUT_REQUIRE_SIGNIFICANCE"
fi
if [ -n "${INPUT_FAIL_ON:-}" ]; then set -- "$@" --fail-on "$INPUT_FAIL_ON"; fi
if [ -n "${INPUT_SCAN_FAIL_ON:-}" ]; then set -- "$@" --scan-fail-on "$INPUT_SCAN_FAIL_ON"; fi
if [ -n "${INPUT_COMMENT:-}" ]; then set -- "$@" --comment "$INPUT_COMMENT"; fi
# The next step uploads the reports under this name; the comment says where the charts are.
if [ -n "${INPUT_REPORT_ARTIFACT:-}" ]; then
  set -- "$@" --report-artifact "$INPUT_REPORT_ARTIFACT"
fi

# A boolean input: true (pass its flag) or false/empty (do not); anything else is refused.
is_true() { # input-value input-name
  case "$1" in
    true) return 0 ;;
    false | "") return 1 ;;
    # The name only: the value is the workflow author's text, and a line break in it would
    # start a second workflow command.
    *) echo "::error::driftgate: $2 takes true or false"; exit 2 ;;
  esac
}

replay="${INPUT_SUITE:-}${INPUT_ROUTER:-}${INPUT_MODEL:-}${INPUT_BASE_URL:-}${INPUT_REPEATS:-}${INPUT_SHARD:-}${INPUT_REPLAY:-}${INPUT_BATCH:-}${INPUT_BATCH_WAIT:-}${INPUT_LINT_LLM:-}${INPUT_ALLOW_UNREVIEWED:-}"
if [ "$cmd" = "check" ]; then
  if [ -n "${INPUT_SUITE:-}" ]; then set -- "$@" --suite "$INPUT_SUITE"; fi
  if [ -n "${INPUT_ROUTER:-}" ]; then set -- "$@" --router "$INPUT_ROUTER"; fi
  if [ -n "${INPUT_MODEL:-}" ]; then set -- "$@" --model "$INPUT_MODEL"; fi
  if [ -n "${INPUT_BASE_URL:-}" ]; then set -- "$@" --base-url "$INPUT_BASE_URL"; fi
  if [ -n "${INPUT_REPEATS:-}" ]; then set -- "$@" --repeats "$INPUT_REPEATS"; fi
  if [ -n "${INPUT_SHARD:-}" ]; then set -- "$@" --shard "$INPUT_SHARD"; fi
  if [ -n "${INPUT_REPLAY:-}" ]; then set -- "$@" --replay "$INPUT_REPLAY"; fi
  if is_true "${INPUT_BATCH:-}" batch; then set -- "$@" "--batch"; fi
  if [ -n "${INPUT_BATCH_WAIT:-}" ]; then set -- "$@" --batch-wait "$INPUT_BATCH_WAIT"; fi
  if is_true "${INPUT_LINT_LLM:-}" lint-llm; then set -- "$@" "--lint-llm"; fi
  if is_true "${INPUT_ALLOW_UNREVIEWED:-}" allow-unreviewed; then set -- "$@" "--allow-unreviewed"; fi
elif [ -n "$replay" ]; then
  echo "::warning::driftgate: router, model, base-url, repeats, shard, replay, batch, batch-wait, lint-llm and allow-unreviewed need a suite; running diff without a routing replay"
fi

exec driftgate "$@"

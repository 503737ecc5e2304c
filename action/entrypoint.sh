#!/usr/bin/env bash
# GitHub Action entrypoint: map the action's inputs (INPUT_* variables with underscores, set in
# action.yml's runs.env) to driftgate flags, then run `check` with the suite input, or with the
# one the config at the PR's base names, or the diff alone without either (--suite-optional);
# with `report`, post that report. The config is never read here: the PR's checkout is
# untrusted, so driftgate reads driftgate.toml at the base commit itself. Inputs never carry API
# keys: those arrive as environment variables from the workflow's `env:`. The exit code is
# driftgate's.
set -eu

# `uses: docker://…` passes inputs as the runner names them, INPUT_BASE-REF and so on (no
# action.yml maps them): read those where the underscore name is unset. (bash, not sh: dash
# drops such names from the environment it passes on.)
for name in BASE-REF SERVER-CMD SERVER-ENV BASE-URL COSINE-FLOOR REQUIRE-SIGNIFICANCE FAIL-ON SCAN-FAIL-ON GITHUB-TOKEN TRUST-HEAD-POLICY VERSION-ATTRIBUTE; do
  var=INPUT_$(printf '%s' "$name" | tr - _)
  eval "current=\${$var:-}"
  if [ -z "$current" ] && value=$(printenv "INPUT_$name"); then
    export "$var=$value"
  fi
done

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

# The gate's thresholds and policy, shared by a check and a merge (both judge a verdict).
gate_flags() {
  if [ -n "${INPUT_CONFIG:-}" ]; then set -- "$@" --config "$INPUT_CONFIG"; fi
  if is_true "${INPUT_TRUST_HEAD_POLICY:-}" trust-head-policy; then set -- "$@" "--trust-head-policy"; fi
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
  # `cache: false` means no cache at all, read or written.
  if [ "${INPUT_CACHE:-}" = "false" ]; then set -- "$@" "--no-cache"; fi
  gate_args=("$@")
}

# One --server-env per non-empty line of server-env (values may hold spaces; they stay one
# argument).
env_args=()
if [ -n "${INPUT_SERVER_ENV:-}" ]; then
  newline='
'
  old_ifs=$IFS
  IFS=$newline
  set -f # a value with * must not glob
  for kv in $INPUT_SERVER_ENV; do
    IFS=$old_ifs
    if [ -n "$kv" ]; then env_args+=(--server-env "$kv"); fi
    IFS=$newline
  done
  set +f
  IFS=$old_ifs
fi

# The capture job of the two-job pattern (docs/hardening.md, "Governance"): list the PR's
# server's tools into a lockfile, in a job that holds no secret, and stop. The gate job compares
# that artifact with the base and never runs the PR's code.
if [ -n "${INPUT_CAPTURE:-}" ]; then
  set -- lock --server-cmd "${INPUT_SERVER_CMD:?capture needs server-cmd}" -o "$INPUT_CAPTURE"
  if [ ${#env_args[@]} -gt 0 ]; then set -- "$@" "${env_args[@]}"; fi
  exec driftgate "$@"
fi

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

# After the merge, a scheduled job: judge a rollout stage from production logs (driftgate watch).
if [ -n "${INPUT_ROLLOUT:-}" ]; then
  set -- watch --github --rollout "$INPUT_ROLLOUT" --stage "${INPUT_STAGE:?rollout needs stage}"
  if [ -n "${INPUT_VERSION_ATTRIBUTE:-}" ]; then set -- "$@" --version-attribute "$INPUT_VERSION_ATTRIBUTE"; fi
  if [ -n "${INPUT_ALIASES:-}" ]; then set -- "$@" --aliases "$INPUT_ALIASES"; fi
  set -- "$@" --logs
  newline='
'
  old_ifs=$IFS
  IFS=$newline
  # One path or glob per line, as merge reads its parts.
  for pattern in ${INPUT_LOGS:?rollout needs logs}; do
    for log in $pattern; do set -- "$@" "$log"; done
  done
  IFS=$old_ifs
  exec driftgate "$@"
fi

# The job after a matrix of shard jobs: merge their parts into one report, and gate on it.
if [ -n "${INPUT_MERGE:-}" ]; then
  gate_flags
  set -- merge --github --annotations ${gate_args[@]+"${gate_args[@]}"}
  if [ -n "${INPUT_BASE_REF:-}" ]; then set -- "$@" --base-ref "$INPUT_BASE_REF"; fi
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

# Each input becomes one argument, spaces included (a server command stays one argument).
gate_flags
set -- check --tools "$tools" --github --annotations ${gate_args[@]+"${gate_args[@]}"}
# Whether there is a suite is the base revision's config's to say, not the PR's.
if [ -z "${INPUT_SUITE:-}" ]; then set -- "$@" "--suite-optional"; fi
if [ -n "${INPUT_BASE_REF:-}" ]; then set -- "$@" --base-ref "$INPUT_BASE_REF"; fi
if [ -n "${INPUT_SERVER_CMD:-}" ]; then set -- "$@" --head-server-cmd "$INPUT_SERVER_CMD"; fi
if [ ${#env_args[@]} -gt 0 ]; then set -- "$@" "${env_args[@]}"; fi
if [ -n "${INPUT_COMMENT:-}" ]; then set -- "$@" --comment "$INPUT_COMMENT"; fi
# The next step uploads the reports under this name; the comment says where the charts are.
if [ -n "${INPUT_REPORT_ARTIFACT:-}" ]; then
  set -- "$@" --report-artifact "$INPUT_REPORT_ARTIFACT"
fi

# Without a suite (none in the input or the base's config) these are unused: the diff runs.
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

exec driftgate "$@"

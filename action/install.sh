#!/usr/bin/env bash
# The composite action's install steps (action.yml), on the runner itself.
#
#   action/install.sh plan      resolve the action's own ref: a release tag (v1, v1.2, v1.2.3)
#                               downloads that release; anything else (main, a branch, a SHA, a
#                               local `uses: ./`) builds from source. Writes step outputs: mode,
#                               version, target, src-root, src-key, responses-key,
#                               responses-prefix.
#   action/install.sh install   download + verify against SHA256SUMS + unpack (release), or
#                               `cargo install --locked` into src-root unless the cache restored
#                               it (source); puts driftgate on GITHUB_PATH; output bin.
#
# Reads the runner's environment: RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_ACTION_PATH,
# GITHUB_SERVER_URL, GITHUB_OUTPUT, GITHUB_PATH, GITHUB_EVENT_PATH, GITHUB_SHA, and the action's
# inputs for the response-cache key. The action's own ref and repository: a composite action's
# run steps get no GITHUB_ACTION_REF/GITHUB_ACTION_REPOSITORY (actions/runner#2473), so
# action.yml passes github.action_ref/action_repository as DRIFTGATE_ACTION_REF/_REPOSITORY, and
# the checkout path (…/_actions/OWNER/REPO/REF) is read when those are empty too. Never reads or prints a
# token: releases are public downloads. Fails closed: a checksum that does not match, a missing
# checksum line or a missing asset stops the job before anything runs.
set -euo pipefail

action=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: run this as a step of the action}
# shellcheck source=action/lib.sh
. "$action/action/lib.sh"

say() { echo "driftgate-action: $*" >&2; }
die() {
  # A workflow error annotation, then the exit; the message never holds a secret (none is read).
  echo "::error title=driftgate install::$(dg_command_data "$*")"
  say "$*"
  exit 1
}
output() { echo "$1=$2" >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"; }

version=$(dg_version "$action/Cargo.toml")
[ -n "$version" ] || die "no version in $action/Cargo.toml"
ref=${DRIFTGATE_ACTION_REF:-${GITHUB_ACTION_REF:-}}
repository=${DRIFTGATE_ACTION_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-}}
# The runner checks a remote action out at <work>/_actions/OWNER/REPO/REF; a local `uses: ./`
# is the workspace itself (no ref: a source build).
case "$action" in
*/_actions/*/*/*)
  at=${action##*/_actions/}
  if [ -z "$ref" ]; then ref=${at#*/*/}; fi
  if [ -z "$repository" ]; then repository=${at%/"${at#*/*/}"}; fi
  ;;
esac

# A release tag for this version: v<version> itself, or a moving major/minor tag (v1, v1.2) whose
# tree is that release. Anything else builds from source.
mode=source
tag_re='^v[0-9]+(\.[0-9]+){0,2}$'
if [[ $ref =~ $tag_re ]]; then
  mode=release
  case "v$version." in
  "$ref".*) ;;
  *) die "the action's ref $ref is a release tag, but its Cargo.toml says version $version: the tag and the release disagree" ;;
  esac
fi

# Sets `target` for this runner (not in a subshell: die must reach the job's log).
target=""
resolve_target() {
  target=$(dg_target "${RUNNER_OS:-}" "${RUNNER_ARCH:-}") ||
    die "no driftgate release is built for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?} (releases: $dg_targets); pin the action to a commit SHA to build from source"
}

# Identity of the source the action would build: the ref and the content of what is compiled.
src_key() {
  local list
  list=$(mktemp)
  (cd "$action" && find Cargo.toml Cargo.lock src models prompts -type f | LC_ALL=C sort) |
    while IFS= read -r f; do echo "$(dg_sha256 "$action/$f")  $f"; done >"$list"
  echo "$ref" >>"$list"
  dg_sha256 "$list" | cut -c1-32
  rm -f "$list"
}

# The response cache key: the suite's bytes, the router's identity, both tool sets' content.
# Its prefix (suite + router) restores an older run's cache for partial reuse: entries are
# content-addressed, so ones for other tool text are never read.
responses_keys() {
  local parts router base head suite config
  parts=$(mktemp)
  suite=none
  if [ -n "${INPUT_SUITE:-}" ] && [ -f "$INPUT_SUITE" ]; then suite=$(dg_sha256 "$INPUT_SUITE" | cut -c1-16); fi
  # The config as the entrypoint resolves it (./driftgate.toml when the input is empty); the
  # version, since the router prompt and request shape are compiled in.
  config=${INPUT_CONFIG:-}
  if [ -z "$config" ] && [ -f driftgate.toml ]; then config=driftgate.toml; fi
  printf '%s\n' "$version" "${INPUT_ROUTER:-semantic}" "${INPUT_MODEL:-}" "${INPUT_BASE_URL:-}" "${INPUT_REPEATS:-}" "$config" >"$parts"
  if [ -n "$config" ] && [ -f "$config" ]; then dg_sha256 "$config" >>"$parts"; fi
  router=$(dg_sha256 "$parts" | cut -c1-16)
  head=none
  if [ -n "${INPUT_TOOLS:-}" ] && [ -f "$INPUT_TOOLS" ]; then head=$(dg_sha256 "$INPUT_TOOLS" | cut -c1-16); fi
  # The commit too: a suite named in the config, a live head server (--head-server-cmd) or a
  # changed suite file can change the answers while the files above stay; keyed per commit, every
  # push saves what it got, and the prefix restores the newest earlier cache (a re-run of the
  # same commit restores its own exactly).
  head="$head-${GITHUB_SHA:-unknown}"
  base=${INPUT_BASE_REF:-}
  if [ -z "$base" ] && [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] && command -v jq >/dev/null 2>&1; then
    base=$(jq -r '.pull_request.base.sha // empty' "$GITHUB_EVENT_PATH")
  fi
  if [ -n "$base" ] && [ -n "${INPUT_TOOLS:-}" ] && git show "$base:$INPUT_TOOLS" >"$parts" 2>/dev/null; then
    base=$(dg_sha256 "$parts" | cut -c1-16)
  else
    base=none
  fi
  rm -f "$parts"
  output responses-prefix "driftgate-responses-v1-$suite-$router-"
  output responses-key "driftgate-responses-v1-$suite-$router-$base-$head"
}

plan() {
  if [ "$mode" = release ]; then resolve_target; fi
  output mode "$mode"
  output version "$version"
  output target "$target"
  if [ "$mode" = source ]; then
    local key
    key=$(src_key)
    # Command substitution runs without errexit: a failed hash must not give a weak key.
    [[ $key =~ ^[0-9a-f]{32}$ ]] || die "could not hash the action's source for its cache key (got '$key')"
    output src-key "driftgate-src-${RUNNER_OS:-os}-${RUNNER_ARCH:-arch}-$key"
    output src-root "${RUNNER_TEMP:?RUNNER_TEMP is not set}/driftgate-src-$key"
  else
    output src-key ""
    output src-root ""
  fi
  responses_keys
  say "ref '${ref:-(local)}': $mode${target:+ $target} v$version"
}

fetch() {
  # Quiet on success, curl's reason on failure; retried for transient errors.
  if ! curl --fail --silent --show-error --location --retry 3 --retry-delay 2 --connect-timeout 20 \
    --max-time 600 --output "$2" "$1" 2>"$2.err"; then
    say "$(tr -d '\r' <"$2.err" | tail -n 1)"
    rm -f "$2" "$2.err"
    return 1
  fi
  rm -f "$2.err"
}

install_release() {
  local archive base dir started want got exe
  started=$(date +%s)
  resolve_target
  archive=$(dg_archive "$version" "$target")
  base="${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/v$version"
  [ -n "$repository" ] || die "the action's repository is unknown (no DRIFTGATE_ACTION_REPOSITORY, GITHUB_ACTION_REPOSITORY or _actions path)"
  dir="${RUNNER_TEMP:?RUNNER_TEMP is not set}/driftgate-v$version-$target"
  rm -rf "$dir"
  mkdir -p "$dir"
  fetch "$base/$dg_sums" "$dir/$dg_sums" ||
    die "could not download $base/$dg_sums (is v$version released with its $dg_sums?)"
  fetch "$base/$archive" "$dir/$archive" ||
    die "the release v$version has no asset $archive for ${RUNNER_OS:-}/${RUNNER_ARCH:-} ($base/$archive could not be downloaded)"
  want=$(awk -v n="$archive" '$2 == n || $2 == "*" n { print $1; exit }' "$dir/$dg_sums")
  [ -n "$want" ] || die "$dg_sums of v$version has no line for $archive: refusing to run an unverified binary"
  got=$(dg_sha256 "$dir/$archive")
  if [ "$got" != "$want" ]; then
    rm -f "$dir/$archive"
    die "checksum mismatch for $archive: $dg_sums says $want, the download is $got; refusing to run it"
  fi
  # From inside the directory: GNU tar on Windows reads "D:\a\..." as host:path, and bsdtar has
  # no --force-local; a bare file name suits both.
  (cd "$dir" && tar -xzf "$archive")
  exe="$dir/$(dg_stem "$version" "$target")/$(dg_exe "$target")"
  [ -x "$exe" ] || die "$archive holds no $(dg_exe "$target") at $(dg_stem "$version" "$target")/"
  finish "$exe" "release v$version $target, sha256 $got" "$started"
}

install_source() {
  local root started exe
  started=$(date +%s)
  root=${DRIFTGATE_SRC_ROOT:?DRIFTGATE_SRC_ROOT is not set (the src-root output of the plan step)}
  case "${RUNNER_OS:-}" in
  Windows) exe="$root/bin/driftgate.exe" ;;
  *) exe="$root/bin/driftgate" ;;
  esac
  if [ -x "$exe" ]; then
    finish "$exe" "source build of '${ref:-(local)}', restored from the cache" "$started"
    return
  fi
  command -v cargo >/dev/null 2>&1 ||
    die "building driftgate from source ('${ref:-(local)}' is not a release tag) needs cargo on the runner; install a Rust toolchain first, or pin the action to a release tag (v$version)"
  say "building from source (ref '${ref:-(local)}' is not a release tag; cached for the next run)"
  cargo install --locked --path "$action" --root "$root" --bin driftgate
  [ -x "$exe" ] || die "cargo install left no binary at $exe"
  finish "$exe" "source build of '${ref:-(local)}'" "$started"
}

finish() {
  local exe=$1 what=$2 started=$3 v
  v=$("$exe" --version) || die "$exe does not run on this runner"
  dirname "$exe" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"
  output bin "$exe"
  say "$v ready ($what) in $(($(date +%s) - started)) s"
}

case "${1:-}" in
plan) plan ;;
install)
  if [ "$mode" = release ]; then install_release; else install_source; fi
  ;;
*)
  echo "usage: install.sh plan | install" >&2
  exit 2
  ;;
esac

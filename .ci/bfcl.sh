#!/usr/bin/env bash
# BFCL's data (bfcl-eval on PyPI, Apache-2.0; downloaded here by name, never copied into the
# repository): the question files and their ground truth, for the evidence bench's BFCL tables and
# the floor pinned in tests/it/evidence.rs.
#
#   export DRIFTGATE_BFCL=$(bash .ci/bfcl.sh)   # fetch if needed, print bfcl_eval/data
#   cargo test --test it evidence::bfcl -- --include-ignored
#
# Cached at $DRIFTGATE_CACHE/evidence/bfcl-<version> (the wheel is unpacked, nothing installed).
set -euo pipefail

VERSION=2026.3.23
DIR="${DRIFTGATE_CACHE:-$HOME/.cache/driftgate}/evidence/bfcl-$VERSION"

if [[ ! -d $DIR/bfcl_eval/data ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --dest "$tmp" \
    "bfcl-eval==$VERSION" >&2
  python3 -m zipfile -e "$tmp"/bfcl_eval-"$VERSION"-*.whl "$tmp/x"
  mkdir -p "$DIR"
  rm -rf "$DIR/bfcl_eval"
  mv "$tmp/x/bfcl_eval" "$DIR/"
fi
echo "$DIR/bfcl_eval/data"

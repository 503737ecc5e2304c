#!/usr/bin/env bash
# The reference implementation the canary's anytime-valid tests are cross-checked against:
# `expectation` (PyPI, GPL-3.0; installed here by name, never copied into the repository), whose
# sequential proportion test is the beta-binomial mixture boundary of Howard et al. (2021).
#
#   export DRIFTGATE_EXPECTATION_PYTHON=$(.ci/expectation.sh)   # install if needed, print python
#   cargo test --test canary_reference -- --include-ignored --nocapture
#
# expectation 0.6.1 needs Python >= 3.12: the first python3.12/python3.13 found is used. The venv
# is cached at $HOME/.cache/driftgate/expectation-<version>, so only the first run downloads.
set -euo pipefail

VERSION=0.6.1
VENV="$HOME/.cache/driftgate/expectation-$VERSION"

if [ ! -f "$VENV/.installed" ]; then
  py=""
  for c in python3.13 python3.12 "$HOME/.pyenv/versions/3.12.1/bin/python" "$HOME/.pyenv/versions/3.13.0/bin/python"; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      py=$c
      break
    fi
  done
  [ -n "$py" ] || { echo "expectation.sh: expectation $VERSION needs Python >= 3.12; none found" >&2; exit 1; }
  rm -rf "$VENV"
  "$py" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "expectation==$VERSION" >&2
  touch "$VENV/.installed"
fi
echo "$VENV/bin/python"

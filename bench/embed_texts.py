"""Workloads of bench/embed.sh, written as JSON arrays of strings (descriptions may span lines).

    python3 bench/embed_texts.py OUT_DIR

- ref100.json: tests/fixtures/embeddings/texts100.txt (agreement against ref100.json).
- real300.json, real3000.json: the distinct top-level tool descriptions of
  tests/fixtures/corpus/*/*.json (stripped, deduplicated, in file order: 193 of them), cycled to
  N texts; the k-th repetition of a description gets the suffix " (k)" so no two texts are equal
  and nothing downstream can deduplicate them. The real length mix (median 9 words, a few cut at
  256 tokens) is kept.
"""
import glob
import json
import os
import sys

out = sys.argv[1]
distinct, seen = [], set()
for path in sorted(glob.glob("tests/fixtures/corpus/*/*.json")):
    doc = json.load(open(path, encoding="utf-8"))
    for tool in doc.get("tools", []) if isinstance(doc, dict) else doc:
        d = tool.get("description")
        if isinstance(d, str) and d.strip() and d.strip() not in seen:
            seen.add(d.strip())
            distinct.append(d.strip())
assert len(distinct) > 100, len(distinct)


def cycled(n):
    return [
        distinct[i % len(distinct)] + (f" ({i // len(distinct)})" if i >= len(distinct) else "")
        for i in range(n)
    ]


texts100 = open("tests/fixtures/embeddings/texts100.txt", encoding="utf-8").read().splitlines()
for name, texts in [("ref100", texts100), ("real300", cycled(300)), ("real3000", cycled(3000))]:
    with open(os.path.join(out, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump(texts, f)
print(f"{len(distinct)} distinct corpus descriptions", file=sys.stderr)

"""Cisco mcp-scanner's YARA rules (PyPI `cisco-ai-mcp-scanner`, fetched by bench/evidence/run,
never committed) over the evidence bench's texts: the anchor a user would pick instead of driftgate.

    python cisco_yara.py RULES_DIR < texts.jsonl > hits.jsonl

Each input line is {"id", "name", "text"}. mcp-scanner's YARA analyzer calls `rules.match(data=…)`
on a tool's description and on its parameters; here it runs once on the definition's whole text
(name, description, parameter names and descriptions), which can only add matches. Every rule of
the set is classified "harmful": any match counts.
"""

import json
import pathlib
import sys

import yara  # yara-python, installed from PyPI in the bench's cached venv

rules_dir = pathlib.Path(sys.argv[1])
sources = {p.stem: p.read_text() for p in sorted(rules_dir.glob("*.yara"))}
rules = yara.compile(sources=sources)
for line in sys.stdin:
    if not line.strip():
        continue
    item = json.loads(line)
    matches = rules.match(data=item["text"].encode("utf-8"))
    names = sorted({m.rule for m in matches})
    print(json.dumps({"id": item["id"], "hit": bool(names), "rules": names}))

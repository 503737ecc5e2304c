import json, sys, re, math, subprocess, yaml, numpy as np
BIN = "/work/main/target/release/driftgate"
SETS = [
 ("calendar", "/work/main/examples/calendar/suite.yaml", "/work/main/examples/calendar/tools.base.json"),
 ("filesystem", "/work/shared/suites/server-filesystem.suite.jsonl", "/work/shared/corpus/server-filesystem/2025.7.1.json"),
 ("playwright", "/work/main/bench/suites/playwright-mcp.suite.jsonl", "/work/shared/corpus/playwright-mcp/0.0.83.json"),
]
import os
for name, s, t in [("github","/work/main/bench/suites/server-github.suite.jsonl","/work/shared/corpus/server-github/2025.4.8.json"),
                   ("git","/work/main/bench/suites/mcp-server-git.suite.jsonl","/work/shared/corpus/mcp-server-git/2026.10.19.json")]:
    if os.path.exists(s): SETS.append((name, s, t))
def load_suite(p):
    if p.endswith(".jsonl"):
        cs = [json.loads(l) for l in open(p) if l.strip()]
    else:
        cs = yaml.safe_load(open(p))["cases"]
    out = []
    for c in cs:
        e = c["expect"]
        if e == "none": e = None
        elif isinstance(e, str): e = [e]
        out.append((c["id"], c["prompt"], e))
    return out
def load_tools(p):
    d = json.load(open(p))
    return d if isinstance(d, list) else d["tools"]
def params(t):
    s = t.get("inputSchema") or {}
    pr = s.get("properties") or {}
    return [(k, (v or {}).get("description") if isinstance(v, dict) else None) for k, v in pr.items()]
def text_today(t):
    s = t["name"]
    if t.get("title"): s += f" ({t['title']})"
    s += ": " + (t.get("description") or "")
    for p, d in params(t):
        s += f"\n- {p}" + (f": {d}" if d else "")
    return s
def words(n): return " ".join(re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", n)).lower()
def text_words(t):
    s = words(t["name"])
    if t.get("title"): s += f" ({t['title']})"
    s += ": " + (t.get("description") or "")
    ps = [words(p) for p, _ in params(t)]
    if ps: s += "\nparameters: " + ", ".join(ps)
    return s
def text_desc(t):
    return words(t["name"]) + ": " + (t.get("description") or "")
_cache = {}
def embed(texts, model="minilm"):
    need = [x for x in dict.fromkeys(texts) if (model, x) not in _cache]
    if need:
        # one text per line: newlines replaced
        inp = "\n".join(x.replace("\n", " ") for x in need) + "\n"
        out = subprocess.run([BIN, "embed"], input=inp.encode(), capture_output=True, check=True).stdout
        vs = json.loads(out)
        for x, v in zip(need, vs): _cache[(model, x)] = np.array(v, dtype=np.float32)
    return np.stack([_cache[(model, x)] for x in texts])
TOK = re.compile(r"[a-z0-9]+")
STOP = set("a an the of to in on for and or is are be with by from this that it as at can you me my i please".split())
def toks(s): return [w for w in TOK.findall(s.lower()) if w not in STOP]
def bm25(prompt, docs, k1=1.2, b=0.75):
    D = [toks(d) for d in docs]; N = len(D); avg = sum(map(len, D)) / N
    df = {}
    for d in D:
        for w in set(d): df[w] = df.get(w, 0) + 1
    q = toks(prompt); sc = []
    for d in D:
        s = 0
        for w in set(q):
            f = d.count(w)
            if not f: continue
            idf = math.log(1 + (N - df[w] + .5) / (df[w] + .5))
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avg))
        sc.append(s)
    return np.array(sc)

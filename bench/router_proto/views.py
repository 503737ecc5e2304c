from eval import *
SENT = re.compile(r"(?<=[.!?])\s+|\n+")
def sentences(t):
    d = t.get("description") or ""
    ss = [x.strip() for x in SENT.split(d) if len(x.strip()) > 3]
    return ss or [d]
def run_views(viewf, agg="max", w_bm25=0.0, bmtext=text_words, thr=None):
    res = {}
    for name, sp, tp in SETS:
        cases = load_suite(sp); tools = load_tools(tp)
        views = [viewf(t) for t in tools]
        flat = [v for vs in views for v in vs]
        V = embed(flat); PV = embed([c[1] for c in cases])
        S_all = PV @ V.T
        idx = np.cumsum([0] + [len(v) for v in views])
        S = np.stack([S_all[:, idx[k]:idx[k+1]].max(1) if agg == "max" else S_all[:, idx[k]:idx[k+1]].mean(1) for k in range(len(tools))], 1)
        bt = [bmtext(t) for t in tools]
        ok = 0; nn = 0; npred = 0; ntp = 0; miss = []
        for i, (cid, p, e) in enumerate(cases):
            s = S[i].copy()
            if w_bm25:
                b = bm25(p, bt)
                if b.max() > 0: s = s + w_bm25 * b / b.max()
            j = int(np.argmax(s)); pred = tools[j]["name"]
            if thr is not None and S[i][j] < thr: pred = None
            good = (pred is None and e is None) or (pred is not None and e is not None and pred in e)
            ok += good; nn += e is None; npred += pred is None; ntp += (pred is None and e is None)
            if not good: miss.append((cid, pred, e))
        res[name] = (ok, len(cases), nn, npred, ntp, miss)
    return res
V1 = lambda t: [text_today(t)]
V2 = lambda t: [text_words(t)] + [words(t["name"]) + ": " + s for s in sentences(t)]
V3 = lambda t: [words(t["name"]) + ": " + s for s in sentences(t)]
V4 = lambda t: [words(t["name"]) + ": " + sentences(t)[0]]
V5 = lambda t: [text_today(t), words(t["name"]) + ": " + sentences(t)[0]]
if __name__ == "__main__":
    for lab, v in [("full", V1), ("full+sents", V2), ("sents", V3), ("first", V4), ("full+first", V5)]:
        for w in (0, 0.2, 0.3):
            show(f"{lab} bm25={w}", run_views(v, w_bm25=w))

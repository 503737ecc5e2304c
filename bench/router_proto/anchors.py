from views import *
ANCHORS = ["Thanks, that's all.", "Hello, how are you today?", "Tell me a joke.",
 "Write a short poem about the sea.", "What is the capital of France?",
 "Explain the difference between two concepts in general terms.", "Translate this sentence into Spanish.",
 "What's your opinion on this?", "Summarize what we discussed.", "Good morning!"]
def run_anchor(viewf, w_bm25=0.2, margin=0.0, anchors=ANCHORS, none_only_if_suite=False):
    res = {}
    AV = embed(anchors)
    for name, sp, tp in SETS:
        cases = load_suite(sp); tools = load_tools(tp)
        views = [viewf(t) for t in tools]; flat = [v for vs in views for v in vs]
        V = embed(flat); PV = embed([c[1] for c in cases]); S_all = PV @ V.T
        idx = np.cumsum([0] + [len(v) for v in views])
        S = np.stack([S_all[:, idx[k]:idx[k+1]].max(1) for k in range(len(tools))], 1)
        A = (PV @ AV.T).max(1)
        bt = [text_words(t) for t in tools]
        has_none = any(c[2] is None for c in cases)
        ok = nn = npred = ntp = 0; miss = []
        for i, (cid, p, e) in enumerate(cases):
            s = S[i].copy()
            if w_bm25:
                b = bm25(p, bt)
                if b.max() > 0: s = s + w_bm25 * b / b.max()
            j = int(np.argmax(s)); pred = tools[j]["name"]
            if (has_none or not none_only_if_suite) and A[i] > S[i].max() + margin: pred = None
            good = (pred is None and e is None) or (pred is not None and e is not None and pred in e)
            ok += good; nn += e is None; npred += pred is None; ntp += (pred is None and e is None)
            if not good: miss.append((cid, pred, e))
        res[name] = (ok, len(cases), nn, npred, ntp, miss)
    return res
if __name__ == "__main__":
    for lab, v in [("full", V1), ("full+sents", V2)]:
        for w in (0, 0.2):
            for m in (-0.05, 0.0, 0.05):
                show(f"{lab} bm25={w} anchors m={m}", run_anchor(v, w, m))

import sys; sys.path.insert(0, "/tmp/rb")
from proto import *
def run(textf, w_bm25=0.0, thr=None, rel=None, qpre=""):
    res = {}
    for name, sp, tp in SETS:
        cases = load_suite(sp); tools = load_tools(tp)
        tt = [textf(t) for t in tools]
        TV = embed(tt); PV = embed([qpre + c[1] for c in cases])
        S = PV @ TV.T
        ok = 0; nn = 0; ntp = 0; npred = 0; miss = []
        for i, (cid, p, e) in enumerate(cases):
            s = S[i].copy()
            if w_bm25:
                b = bm25(p, tt)
                if b.max() > 0: s = s + w_bm25 * b / b.max()
            j = int(np.argmax(s)); best = S[i][j]
            none = thr is not None and best < thr
            pred = None if none else tools[j]["name"]
            good = (pred is None and e is None) or (pred is not None and e is not None and pred in e)
            ok += good
            if e is None: nn += 1
            if pred is None: npred += 1
            if pred is None and e is None: ntp += 1
            if not good: miss.append((cid, pred, e, round(float(best),3)))
        res[name] = (ok, len(cases), nn, npred, ntp, miss)
    return res
def show(label, r):
    print(f"{label:40s}", "  ".join(f"{n}:{ok}/{tot}" + (f"(none {ntp}/{npred}p {ntp}/{nn}r)" if nn else "") for n,(ok,tot,nn,npred,ntp,_) in r.items()))
if __name__ == "__main__":
    show("today thr.25", run(text_today, thr=0.25))
    show("argmax today", run(text_today))
    show("argmax words", run(text_words))
    show("argmax desc", run(text_desc))
    for w in (0.05, 0.1, 0.2, 0.3):
        show(f"words+bm25 {w}", run(text_words, w_bm25=w))

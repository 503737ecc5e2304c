from eval import *
for name, sp, tp in SETS:
    cases = load_suite(sp); tools = load_tools(tp)
    TV = embed([text_today(t) for t in tools]); PV = embed([c[1] for c in cases])
    S = PV @ TV.T
    rows = []
    for i,(cid,p,e) in enumerate(cases):
        s = np.sort(S[i])[::-1]
        rows.append((e is None, s[0], s[0]-s[1], s[0]-np.mean(s), (s[0]-np.mean(s))/ (np.std(s)+1e-6)))
    for k, lab in [(1,"best"),(2,"gap"),(3,"best-mean"),(4,"z")]:
        nn = sorted(round(float(r[k]),2) for r in rows if r[0]); tc = sorted(round(float(r[k]),2) for r in rows if not r[0])
        print(name, lab, "none:", nn, "tool lowest8:", tc[:8])

import proto
def stem(w):
    for suf in ('ing','ed','es','s'):
        if len(w) > len(suf)+2 and w.endswith(suf): return w[:-len(suf)]
    return w
orig = proto.toks
proto.toks = lambda s: [stem(w) for w in orig(s)]
import anchors
anchors.bm25.__globals__['toks'] = proto.toks
from anchors import *

from eval import *
for tf in (text_today, text_words):
    for w in (0.1, 0.2, 0.3, 0.4, 0.5):
        show(f"{tf.__name__}+bm25 {w}", run(tf, w_bm25=w))

//! The bundled MiniLM against sentence-transformers 6.2.0 run on the same model
//! (fixtures in tests/fixtures/embeddings/, copied from shared/embeddings/).

use driftgate::embed::{Embedder, MAX_SEQ_LEN, MiniLm, cosine};
use ndarray::{Array1, ArrayView1};
use tokenizers::Tokenizer;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/embeddings");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap()
}

#[tokio::test]
async fn matches_sentence_transformers_on_100_texts() {
    let texts: Vec<String> = fixture("texts100.txt").lines().map(String::from).collect();
    let reference: Vec<Vec<f32>> = serde_json::from_str(&fixture("ref100.json")).unwrap();
    assert_eq!(texts.len(), 100);
    assert_eq!(reference.len(), 100);

    let ours = MiniLm::new().embed(&texts).await.unwrap();
    assert_eq!(ours.shape(), &[100, 384]);
    let mut worst = (1.0f32, 0);
    for (i, r) in reference.iter().enumerate() {
        let c = cosine(ours.row(i), ArrayView1::from(r));
        if c < worst.0 {
            worst = (c, i);
        }
        let norm = ours.row(i).dot(&ours.row(i)).sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "row {i} not unit length: {norm}");
    }
    assert!(worst.0 >= 0.9999, "text {} has cosine {}", worst.1, worst.0);
}

/// A 456-token text must be cut to 256 tokens ([CLS] + 254 wordpieces + [SEP]) exactly as
/// sentence-transformers does, not at the 128 that the bundled tokenizer.json declares.
#[tokio::test]
async fn long_text_is_truncated_like_sentence_transformers() {
    let fx: serde_json::Value = serde_json::from_str(&fixture("long.json")).unwrap();
    let text = fx["text"].as_str().unwrap().to_string();
    let reference: Vec<f32> = serde_json::from_value(fx["embedding"].clone()).unwrap();

    // An untruncated tokenisation, independent of the embedder's own configuration.
    let mut tok = Tokenizer::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/all-MiniLM-L6-v2/tokenizer.json"
    ))
    .unwrap();
    tok.with_truncation(None).unwrap();
    tok.with_padding(None);
    let full = tok.encode(text.as_str(), false).unwrap();
    assert!(
        full.get_ids().len() > MAX_SEQ_LEN,
        "fixture text must be long"
    );
    // Cut the text right after wordpiece n, so its whole tokenisation is those n pieces.
    let prefix = |n: usize| {
        let end = full.get_offsets()[n - 1].1;
        let p = text[..end].to_string();
        assert_eq!(
            tok.encode(p.as_str(), false).unwrap().get_ids(),
            &full.get_ids()[..n]
        );
        p
    };
    let kept = MAX_SEQ_LEN - 2;
    let texts = vec![text.clone(), prefix(kept), prefix(kept + 1), prefix(126)];

    let e = MiniLm::new().embed(&texts).await.unwrap();
    let c = |i: usize, j: usize| cosine(e.row(i), e.row(j));
    let vs_reference = cosine(e.row(0), Array1::from(reference).view());
    assert!(
        vs_reference >= 0.9999,
        "vs sentence-transformers: {vs_reference}"
    );
    assert!(c(0, 1) > 0.999_999, "254-piece prefix differs: {}", c(0, 1));
    assert!(c(0, 2) > 0.999_999, "255th piece must be cut: {}", c(0, 2));
    assert!(
        c(0, 3) < 0.99,
        "128-token truncation would look like this: {}",
        c(0, 3)
    );
}

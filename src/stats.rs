//! Paired statistics for the routing replay: pure maths, no I/O.
//!
//! Base and head are replayed on the same frozen cases, so every comparison here is *paired*
//! and the unit of analysis is the case (one prompt). Repeats of one prompt are correlated draws
//! of the router's noise, not independent samples of the prompt population, so every interval
//! here is taken over cases, never over individual repeats.

pub mod seq;

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Two-sided 95% standard-normal quantile, Φ⁻¹(0.975).
pub const Z_95: f64 = 1.959963984540054;

/// Bootstrap resamples used by [`paired_summary`].
pub const DEFAULT_RESAMPLES: u32 = 10_000;

/// Label used in [`Confusion`] for "no tool call" (chosen) and "no call expected" (expected).
/// MCP's tool-name rules allow only letters, digits, `_`, `-` and `.`, so it cannot pass for a tool.
pub const NO_CALL: &str = "(none)";

/// Outcome of one case over K repeats at base and at head.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseOutcome {
    pub id: String,
    /// Repeats routed correctly at base, out of `repeats`.
    pub base_correct: u32,
    /// Repeats routed correctly at head, out of `repeats`.
    pub head_correct: u32,
    /// K, the number of repeats at each side; must be at least 1.
    pub repeats: u32,
}

impl CaseOutcome {
    pub fn new(id: impl Into<String>, base_correct: u32, head_correct: u32, repeats: u32) -> Self {
        CaseOutcome {
            id: id.into(),
            base_correct,
            head_correct,
            repeats,
        }
    }

    /// `repeats >= 1` and neither side has more correct than `repeats`.
    ///
    /// The statistics functions panic on an invalid case (it is a bug in whoever counted);
    /// call this first on outcomes that come from outside the process, e.g. a results file.
    pub fn validate(&self) -> crate::Result<()> {
        if self.repeats == 0 {
            return Err(crate::Error::Usage(format!(
                "case {}: repeats must be at least 1",
                self.id
            )));
        }
        if self.base_correct > self.repeats || self.head_correct > self.repeats {
            return Err(crate::Error::Usage(format!(
                "case {}: correct count ({} base, {} head) exceeds repeats ({})",
                self.id, self.base_correct, self.head_correct, self.repeats
            )));
        }
        Ok(())
    }

    /// Fraction of base repeats that were correct.
    pub fn base_accuracy(&self) -> f64 {
        f64::from(self.base_correct) / f64::from(self.repeats)
    }

    /// Fraction of head repeats that were correct.
    pub fn head_accuracy(&self) -> f64 {
        f64::from(self.head_correct) / f64::from(self.repeats)
    }

    /// Whether the case is "right" at base for the sign test: see [`majority_right`].
    pub fn base_right(&self) -> bool {
        majority_right(self.base_correct, self.repeats)
    }

    /// Whether the case is "right" at head for the sign test: see [`majority_right`].
    pub fn head_right(&self) -> bool {
        majority_right(self.head_correct, self.repeats)
    }

    /// Repeats disagree at base: the prompt is flaky before any change, so a flip on it at head
    /// says little about the change.
    pub fn unstable_at_base(&self) -> bool {
        self.base_correct > 0 && self.base_correct < self.repeats
    }

    fn assert_valid(&self) {
        if let Err(e) = self.validate() {
            panic!("invalid CaseOutcome: {e}");
        }
    }
}

/// A case counts as right when *strictly more than half* of its repeats are correct.
///
/// An exact tie (K even, K/2 correct) counts as **wrong**: the gate must not credit a coin flip
/// as a success, and treating both sides the same way keeps the sign test symmetric.
pub fn majority_right(correct: u32, repeats: u32) -> bool {
    2 * u64::from(correct) > u64::from(repeats)
}

/// A closed interval `[lo, hi]`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }
}

/// Wilson score interval for a proportion `successes / n` at normal quantile `z`
/// (use [`Z_95`] for 95%).
///
/// `successes` may be fractional (a sum of per-case accuracies). With `n <= 0` (or not finite)
/// there is no information and the whole `[0, 1]` is returned. Endpoints are clamped to `[0, 1]`
/// and pinned to exactly 0 / 1 at `successes == 0` / `successes == n`, where the formula is exact
/// but floating point is not.
pub fn wilson(successes: f64, n: f64, z: f64) -> Interval {
    if !(n > 0.0 && n.is_finite()) {
        return Interval { lo: 0.0, hi: 1.0 };
    }
    let p = (successes / n).clamp(0.0, 1.0);
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let lo = if p <= 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if p >= 1.0 {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Interval { lo, hi }
}

/// P(X ≥ k) for X ~ Binomial(n, 1/2), summed exactly in log-space.
///
/// Each term C(n, j) / 2ⁿ is built by the ratio recurrence C(n, j+1) = C(n, j)·(n−j)/(j+1) on
/// logarithms and accumulated with a running log-sum-exp, so neither C(n, j) (overflow) nor 2⁻ⁿ
/// (underflow) is ever formed. O(n), which is cheap for any realistic number of discordant cases.
fn binom_half_upper_tail(n: u64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    // ln C(n, k) = Σ_{i=1..k} ln((n − k + i) / i).
    let mut ln_term: f64 = (1..=k).map(|i| ((n - k + i) as f64 / i as f64).ln()).sum();
    // Running log-sum-exp: total = exp(max) · scaled.
    let mut max = ln_term;
    let mut scaled = 1.0_f64;
    for j in k..n {
        ln_term += ((n - j) as f64 / (j + 1) as f64).ln();
        if ln_term > max {
            scaled = scaled * (max - ln_term).exp() + 1.0;
            max = ln_term;
        } else {
            scaled += (ln_term - max).exp();
        }
    }
    let ln_p = max + scaled.ln() - n as f64 * std::f64::consts::LN_2;
    ln_p.exp().min(1.0)
}

/// Exact one-sided sign test (exact McNemar) for "head is worse".
///
/// `b` = cases right at base and wrong at head, `c` = wrong at base and right at head.
/// Returns P(X ≥ b) for X ~ Binomial(b + c, 1/2); 1.0 when there are no discordant cases.
pub fn mcnemar_exact_one_sided(b: u64, c: u64) -> f64 {
    if b + c == 0 {
        return 1.0;
    }
    binom_half_upper_tail(b + c, b)
}

/// Exact two-sided sign test (exact McNemar): no direction assumed.
///
/// Under p = 1/2 the binomial is symmetric, so the "sum of outcomes no more likely than the
/// observed one" rule reduces to twice the tail beyond max(b, c), capped at 1 (this matches
/// `scipy.stats.binomtest(..., alternative='two-sided')`). 1.0 when `b + c == 0`.
pub fn mcnemar_exact_two_sided(b: u64, c: u64) -> f64 {
    if b + c == 0 {
        return 1.0;
    }
    (2.0 * binom_half_upper_tail(b + c, b.max(c))).min(1.0)
}

/// Standard normal CDF (Abramowitz–Stegun 7.1.26 for erf; |error| < 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The standard normal quantile for the upper tail `alpha` (bisection on [`normal_cdf`]).
fn z_upper(alpha: f64) -> f64 {
    let (mut lo, mut hi) = (-10.0, 10.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if 1.0 - normal_cdf(mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The smallest true accuracy drop that a suite of `n` cases detects with probability `power`:
/// the gate fails when the observed drop exceeds `tolerance` and (with `alpha`) the one-sided sign
/// test is significant. Model: a noisy router, right on each case with probability
/// `base_accuracy` at base and `base_accuracy - drop` at head, independently per side — the
/// harshest case, since every case can flip; a deterministic router that only re-answers edited
/// questions sees smaller drops. Normal approximation of b − c; `None` when no drop up to the
/// whole base accuracy is detectable.
pub fn min_detectable_drop(
    n: usize,
    base_accuracy: f64,
    tolerance: f64,
    alpha: Option<f64>,
    power: f64,
) -> Option<f64> {
    if n == 0 || base_accuracy <= 0.0 {
        return None;
    }
    let n = n as f64;
    let a = base_accuracy.clamp(0.0, 1.0);
    let z = alpha.map(z_upper);
    let power_at = |d: f64| -> f64 {
        let pb = a * (1.0 - a + d); // right → wrong
        let pc = (1.0 - a) * (a - d); // wrong → right
        let mean = n * d; // E[b − c]
        let sd = (n * (pb + pc - d * d)).max(1e-12).sqrt();
        let significant = z.map_or(0.0, |z| z * (n * (pb + pc)).sqrt());
        let threshold = significant.max(tolerance * n);
        1.0 - normal_cdf((threshold - mean) / sd)
    };
    if power_at(a) < power {
        return None;
    }
    let (mut lo, mut hi) = (0.0, a);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if power_at(mid) >= power {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The fewest cases on which a true drop of `drop` from `base_accuracy` is detected with
/// probability `power` ([`min_detectable_drop`]'s model and rule); `None` when no suite up to
/// 100,000 cases does (a drop within the tolerance, or a base too weak to fall that far).
pub fn cases_to_detect(
    drop: f64,
    base_accuracy: f64,
    tolerance: f64,
    alpha: f64,
    power: f64,
) -> Option<usize> {
    let sees = |n: usize| {
        min_detectable_drop(n, base_accuracy, tolerance, Some(alpha), power)
            .is_some_and(|d| d <= drop)
    };
    let mut hi = 1;
    while !sees(hi) {
        hi *= 2;
        if hi > 100_000 {
            return None;
        }
    }
    let mut lo = hi / 2;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if sees(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Paired bootstrap percentile interval (95%) for mean(head accuracy) − mean(base accuracy).
///
/// Whole cases are resampled with replacement (keeping each case's base and head together is
/// what makes it paired), `resamples` times, from a ChaCha8 stream seeded with `seed`, so the
/// result is reproducible across runs and platforms. Percentiles use linear interpolation between
/// order statistics (numpy's default). With no cases, or `resamples == 0`, nothing is known and
/// the whole range `[-1, 1]` is returned, which no gate can mistake for "no change".
///
/// # Panics
/// If a case fails [`CaseOutcome::validate`].
pub fn bootstrap_delta_ci(cases: &[CaseOutcome], resamples: u32, seed: u64) -> Interval {
    let deltas: Vec<f64> = cases
        .iter()
        .map(|c| {
            c.assert_valid();
            c.head_accuracy() - c.base_accuracy()
        })
        .collect();
    if deltas.is_empty() || resamples == 0 {
        return Interval { lo: -1.0, hi: 1.0 };
    }
    let n = deltas.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let sum: f64 = (0..n).map(|_| deltas[rng.random_range(0..n)]).sum();
            sum / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    Interval {
        lo: percentile_sorted(&means, 0.025),
        hi: percentile_sorted(&means, 0.975),
    }
}

/// Quantile `q` of non-empty sorted data, linear interpolation (Hyndman–Fan type 7).
fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let i = h.floor() as usize;
    let frac = h - i as f64;
    match sorted.get(i + 1) {
        Some(next) if frac > 0.0 => sorted[i] + frac * (next - sorted[i]),
        _ => sorted[i],
    }
}

/// Everything the gate and the report need about one paired replay.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct PairedSummary {
    pub n_cases: usize,
    /// Mean over cases of per-case accuracy (correct / repeats); 0.0 with no cases.
    pub base_accuracy: f64,
    pub head_accuracy: f64,
    /// 95% Wilson interval with n = number of cases and successes = Σ per-case accuracy:
    /// the case, not the repeat, is the independent unit (see module docs).
    pub base_ci: Interval,
    pub head_ci: Interval,
    /// `head_accuracy − base_accuracy`.
    pub delta: f64,
    /// Paired bootstrap 95% interval of `delta` ([`DEFAULT_RESAMPLES`] resamples).
    pub delta_ci: Interval,
    /// b: cases right at base and wrong at head (majority rule, see [`majority_right`]).
    pub discordant_right_to_wrong: u64,
    /// c: cases wrong at base and right at head.
    pub discordant_wrong_to_right: u64,
    /// [`mcnemar_exact_one_sided`]`(b, c)`: evidence that head is worse.
    pub p_value_worse: f64,
    /// [`mcnemar_exact_two_sided`]`(b, c)`.
    pub p_value_two_sided: f64,
    /// Ids of cases whose repeats disagree at base (0 < base_correct < repeats), in input order.
    pub unstable_cases: Vec<String>,
}

/// Summarise a paired replay; `seed` drives the bootstrap.
///
/// # Panics
/// If a case fails [`CaseOutcome::validate`].
pub fn paired_summary(cases: &[CaseOutcome], seed: u64) -> PairedSummary {
    paired_summary_with(cases, seed, DEFAULT_RESAMPLES)
}

/// [`paired_summary`] with `resamples` bootstrap resamples (0: no interval, `[-1, 1]`), for
/// summaries whose interval nobody reads (per tool) and for simulations.
pub fn paired_summary_with(cases: &[CaseOutcome], seed: u64, resamples: u32) -> PairedSummary {
    let n = cases.len();
    let mut base_sum = 0.0;
    let mut head_sum = 0.0;
    let mut b = 0u64;
    let mut c = 0u64;
    let mut unstable_cases = Vec::new();
    for case in cases {
        case.assert_valid();
        base_sum += case.base_accuracy();
        head_sum += case.head_accuracy();
        match (case.base_right(), case.head_right()) {
            (true, false) => b += 1,
            (false, true) => c += 1,
            _ => {}
        }
        if case.unstable_at_base() {
            unstable_cases.push(case.id.clone());
        }
    }
    let mean = |sum: f64| if n == 0 { 0.0 } else { sum / n as f64 };
    let base_accuracy = mean(base_sum);
    let head_accuracy = mean(head_sum);
    PairedSummary {
        n_cases: n,
        base_accuracy,
        head_accuracy,
        base_ci: wilson(base_sum, n as f64, Z_95),
        head_ci: wilson(head_sum, n as f64, Z_95),
        delta: head_accuracy - base_accuracy,
        delta_ci: bootstrap_delta_ci(cases, resamples, seed),
        discordant_right_to_wrong: b,
        discordant_wrong_to_right: c,
        p_value_worse: mcnemar_exact_one_sided(b, c),
        p_value_two_sided: mcnemar_exact_two_sided(b, c),
        unstable_cases,
    }
}

/// Per-tool routing metrics.
///
/// An observation may accept several tools; it counts toward the `support` of each of them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ToolMetrics {
    pub tool: String,
    /// Observations that list this tool as acceptable.
    pub support: u32,
    /// Calls to this tool that were acceptable (precision numerator).
    pub correct: u32,
    /// Observations that list this tool and were routed to *any* acceptable tool (recall
    /// numerator). Equals the calls to this tool when it is the only acceptable one; counting
    /// an equally acceptable sibling as a hit keeps recall from punishing a legitimate choice.
    pub served: u32,
    /// Calls to this tool, acceptable or not.
    pub predicted: u32,
    /// `correct / predicted`; `None` if the tool was never called.
    pub precision: Option<f64>,
    /// `served / support`, i.e. routing accuracy on the prompts meant for this tool;
    /// `None` if no observation expects it.
    pub recall: Option<f64>,
}

/// One kind of misroute and how often it happened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Confusion {
    /// The acceptable tool; several are joined with `|` in name order; [`NO_CALL`] when the
    /// prompt expected no call.
    pub expected: String,
    /// The tool called, or [`NO_CALL`].
    pub chosen: String,
    pub count: u32,
    /// The suite cases misrouted this way, by id, each once (a case asked `--repeats` times
    /// counts each time in `count`).
    #[serde(default)]
    pub cases: Vec<String>,
}

/// One routed prompt: its case id, the acceptable tool names, the tool called (`None`: no call).
pub type Observation = (String, Vec<String>, Option<String>);

/// Per-tool metrics and misroutes for `(acceptable tool names, chosen tool)` observations.
///
/// An empty acceptable set means "no call expected", so `None` is then the right answer.
/// Duplicate names in a set count once. Tools are returned in name order (every tool that is
/// expected or chosen anywhere); confusions hold misroutes only (correct routes are already in
/// the metrics), sorted by count descending, then expected, then chosen.
pub fn tool_metrics(observations: &[Observation]) -> (Vec<ToolMetrics>, Vec<Confusion>) {
    #[derive(Default)]
    struct Counts {
        support: u32,
        correct: u32,
        served: u32,
        predicted: u32,
    }
    let mut per_tool: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut misroutes: BTreeMap<(String, &str), (u32, Vec<&str>)> = BTreeMap::new();

    for (case, expected, chosen) in observations {
        let acceptable: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
        let chosen = chosen.as_deref();
        let ok = match chosen {
            None => acceptable.is_empty(),
            Some(tool) => acceptable.contains(tool),
        };
        for &tool in &acceptable {
            let counts = per_tool.entry(tool).or_default();
            counts.support += 1;
            counts.served += u32::from(ok);
        }
        if let Some(tool) = chosen {
            let counts = per_tool.entry(tool).or_default();
            counts.predicted += 1;
            counts.correct += u32::from(ok);
        }
        if !ok {
            let expected_label = if acceptable.is_empty() {
                NO_CALL.to_string()
            } else {
                acceptable.iter().copied().collect::<Vec<_>>().join("|")
            };
            let (count, cases) = misroutes
                .entry((expected_label, chosen.unwrap_or(NO_CALL)))
                .or_default();
            *count += 1;
            if !cases.contains(&case.as_str()) {
                cases.push(case);
            }
        }
    }

    let ratio = |num: u32, den: u32| (den > 0).then(|| f64::from(num) / f64::from(den));
    let metrics = per_tool
        .into_iter()
        .map(|(tool, c)| ToolMetrics {
            tool: tool.to_string(),
            support: c.support,
            correct: c.correct,
            served: c.served,
            predicted: c.predicted,
            precision: ratio(c.correct, c.predicted),
            recall: ratio(c.served, c.support),
        })
        .collect();
    let mut confusions: Vec<Confusion> = misroutes
        .into_iter()
        .map(|((expected, chosen), (count, cases))| Confusion {
            expected,
            chosen: chosen.to_string(),
            count,
            cases: cases.into_iter().map(String::from).collect(),
        })
        .collect();
    // The map already orders by (expected, chosen); a stable sort by count keeps that as the tie-break.
    confusions.sort_by_key(|c| std::cmp::Reverse(c.count));
    (metrics, confusions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, rel: f64) -> bool {
        (actual - expected).abs() <= rel * expected.abs().max(f64::MIN_POSITIVE)
    }

    #[track_caller]
    fn assert_close(actual: f64, expected: f64, rel: f64) {
        assert!(
            close(actual, expected, rel),
            "{actual} != {expected} (rel {rel})"
        );
    }

    // Reference values: statsmodels 0.15.0
    // `proportion_confint(k, n, alpha=0.05, method='wilson')` (which uses z = norm.ppf(0.975)).
    #[test]
    fn wilson_matches_statsmodels() {
        let cases = [
            (81.0, 100.0, 0.7222115462093562, 0.8748524849023126),
            (3.0, 7.0, 0.15821985525146964, 0.7495416354723428),
            (0.0, 10.0, 0.0, 0.27753279986288926),
            (10.0, 10.0, 0.7224672001371106, 1.0),
            (0.0, 1.0, 0.0, 0.7934506856227627),
            (1.0, 1.0, 0.2065493143772374, 1.0),
        ];
        for (k, n, lo, hi) in cases {
            let ci = wilson(k, n, Z_95);
            assert!((ci.lo - lo).abs() < 1e-12, "{k}/{n}: lo {} vs {lo}", ci.lo);
            assert!((ci.hi - hi).abs() < 1e-12, "{k}/{n}: hi {} vs {hi}", ci.hi);
        }
        // The brief's 4-dp figure at z = 1.96.
        let ci = wilson(81.0, 100.0, 1.96);
        assert_eq!(
            (format!("{:.4}", ci.lo), format!("{:.4}", ci.hi)),
            ("0.7222".into(), "0.8749".into())
        );
    }

    #[test]
    fn wilson_edges_are_exact() {
        assert_eq!(wilson(0.0, 0.0, Z_95), Interval { lo: 0.0, hi: 1.0 });
        assert_eq!(wilson(0.0, 37.0, Z_95).lo, 0.0);
        assert_eq!(wilson(37.0, 37.0, Z_95).hi, 1.0);
        let ci = wilson(1e6, 1e6, Z_95);
        assert!(ci.lo > 0.99999 && ci.hi == 1.0);
    }

    // Reference values: scipy 1.17.1 `binomtest(b, b + c, 0.5, alternative=...).pvalue`,
    // columns (b, c, 'greater', 'two-sided').
    #[test]
    fn the_minimum_detectable_drop_shrinks_with_the_suite() {
        assert!((normal_cdf(1.959_963_984_540_054) - 0.975).abs() < 1e-6);
        assert!((z_upper(0.05) - 1.644_853_626_951_472_2).abs() < 1e-5);
        let d300 = min_detectable_drop(300, 0.8, 0.02, Some(0.05), 0.8).unwrap();
        let d36 = min_detectable_drop(36, 0.8, 0.02, Some(0.05), 0.8).unwrap();
        // 300 cases at 80%: about 9 points (the gate simulation measures 86% power at 10).
        assert!((0.08..0.10).contains(&d300), "{d300}");
        assert!(d36 > 0.2, "{d36}");
        assert!(min_detectable_drop(0, 0.8, 0.02, Some(0.05), 0.8).is_none());
    }

    const SCIPY_BINOMTEST: [(u64, u64, f64, f64); 17] = [
        (5, 0, 0.03125, 0.0625),
        (10, 2, 0.019287109375, 0.03857421875),
        (2, 10, 0.996826171875, 0.03857421875),
        (30, 25, 0.2950266658883177, 0.5900533317766354),
        (25, 30, 0.7906229058654923, 0.5900533317766354),
        (400, 350, 0.03675388702921742, 0.07350777405843484),
        (350, 400, 0.9687525388189347, 0.07350777405843484),
        (5, 5, 0.623046875, 1.0),
        (1, 0, 0.5, 1.0),
        (0, 1, 1.0, 1.0),
        (3, 1, 0.3125, 0.625),
        (1000, 1200, 0.9999909920966393, 2.1817026407914194e-05),
        (2000, 1500, 1.4711819161266746e-17, 2.942363832253349e-17),
        // Pure powers of two, exact by hand: (0.5)^n and sums thereof.
        (1, 1, 0.75, 1.0),
        (2, 0, 0.25, 0.5),
        (0, 2, 1.0, 0.5),
        (2, 1, 0.5, 1.0),
    ];

    #[test]
    fn mcnemar_matches_scipy_binomtest() {
        for (b, c, greater, two_sided) in SCIPY_BINOMTEST {
            let one = mcnemar_exact_one_sided(b, c);
            let two = mcnemar_exact_two_sided(b, c);
            assert!(
                close(one, greater, 1e-9),
                "({b},{c}) one-sided {one} vs {greater}"
            );
            assert!(
                close(two, two_sided, 1e-9),
                "({b},{c}) two-sided {two} vs {two_sided}"
            );
        }
    }

    #[test]
    fn mcnemar_no_discordance_is_no_evidence() {
        assert_eq!(mcnemar_exact_one_sided(0, 0), 1.0);
        assert_eq!(mcnemar_exact_two_sided(0, 0), 1.0);
    }

    #[test]
    fn mcnemar_extreme_counts_stay_finite() {
        // 2^-2000 underflows f64 on its own; the log-space sum must still give a valid probability.
        let p = mcnemar_exact_one_sided(2000, 0);
        assert!(p.is_finite() && (0.0..1e-300).contains(&p));
        let p = mcnemar_exact_one_sided(0, 100_000);
        assert_eq!(p, 1.0);
        let p = mcnemar_exact_one_sided(50_000, 50_000);
        assert!(p > 0.5 && p < 0.51, "{p}");
    }

    fn case(id: &str, base: u32, head: u32, k: u32) -> CaseOutcome {
        CaseOutcome::new(id, base, head, k)
    }

    /// 40 single-repeat cases: 30 right at both, 2 wrong at both, 6 right→wrong, 2 wrong→right.
    fn regression_suite() -> Vec<CaseOutcome> {
        let mut cases = Vec::new();
        for i in 0..40 {
            let (b, h) = match i {
                0..30 => (1, 1),
                30..32 => (0, 0),
                32..38 => (1, 0),
                _ => (0, 1),
            };
            cases.push(case(&format!("c{i}"), b, h, 1));
        }
        cases
    }

    #[test]
    fn bootstrap_is_reproducible_and_contains_point() {
        let cases = regression_suite();
        let a = bootstrap_delta_ci(&cases, DEFAULT_RESAMPLES, 7);
        let b = bootstrap_delta_ci(&cases, DEFAULT_RESAMPLES, 7);
        assert_eq!(a, b);
        assert!(a.contains(-0.1), "{a:?}");
        assert!(a.lo < a.hi);
        // A different seed gives a (slightly) different interval: the seed is really used.
        assert_ne!(bootstrap_delta_ci(&cases, DEFAULT_RESAMPLES, 8), a);
    }

    // Reference intervals: a numpy 2.4.6 reimplementation of the same percentile bootstrap on the
    // same per-case deltas (200 000 resamples, `np.percentile` linear, stable over seeds 0–3).
    // The RNG streams differ, so agreement is only up to Monte Carlo error, hence the 0.01 slack.
    #[test]
    fn bootstrap_matches_python_reimplementation() {
        // 200 single-repeat cases: deltas 20 × −1, 10 × +1, 170 × 0; numpy: [-0.105, 0.005].
        let mut big: Vec<_> = (0..170).map(|i| case(&format!("s{i}"), 1, 1, 1)).collect();
        big.extend((0..20).map(|i| case(&format!("r{i}"), 1, 0, 1)));
        big.extend((0..10).map(|i| case(&format!("w{i}"), 0, 1, 1)));
        let ci = bootstrap_delta_ci(&big, DEFAULT_RESAMPLES, 20_240_601);
        assert!((ci.lo - -0.105).abs() <= 0.01, "{ci:?}");
        assert!((ci.hi - 0.005).abs() <= 0.01, "{ci:?}");

        // Fractional per-case accuracies at K = 3; numpy: [-14/36, 4/36] = [-0.3889, 0.1111].
        let k3: Vec<_> = [
            (3, 3),
            (3, 2),
            (2, 0),
            (3, 3),
            (1, 1),
            (0, 1),
            (3, 1),
            (2, 2),
            (3, 3),
            (3, 0),
            (1, 3),
            (3, 3),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(b, h))| case(&format!("k{i}"), b, h, 3))
        .collect();
        let ci = bootstrap_delta_ci(&k3, DEFAULT_RESAMPLES, 1);
        assert!((ci.lo - -14.0 / 36.0).abs() <= 0.01, "{ci:?}");
        assert!((ci.hi - 4.0 / 36.0).abs() <= 0.01, "{ci:?}");
    }

    #[test]
    fn bootstrap_degenerate_and_empty() {
        let same: Vec<_> = (0..25).map(|i| case(&i.to_string(), 2, 1, 3)).collect();
        let ci = bootstrap_delta_ci(&same, 1000, 3);
        assert_eq!(ci.lo, ci.hi);
        assert_close(ci.lo, -1.0 / 3.0, 1e-12);
        let unchanged: Vec<_> = (0..25).map(|i| case(&i.to_string(), 1, 1, 1)).collect();
        assert_eq!(
            bootstrap_delta_ci(&unchanged, 1000, 3),
            Interval { lo: 0.0, hi: 0.0 }
        );
        let ignorance = Interval { lo: -1.0, hi: 1.0 };
        assert_eq!(bootstrap_delta_ci(&[], 1000, 3), ignorance);
        assert_eq!(bootstrap_delta_ci(&same, 0, 3), ignorance);
    }

    #[test]
    fn majority_rule_ties_count_as_wrong() {
        assert!(majority_right(1, 1));
        assert!(!majority_right(0, 1));
        assert!(majority_right(2, 3));
        assert!(!majority_right(1, 3));
        assert!(!majority_right(2, 4), "exact tie is wrong");
        assert!(majority_right(3, 4));
        assert!(majority_right(u32::MAX, u32::MAX), "no overflow");
    }

    #[test]
    fn paired_summary_hand_example() {
        // K = 4. Majority right means ≥ 3 of 4; 2 of 4 is a tie and counts as wrong.
        let cases = vec![
            case("stable-right", 4, 4, 4), // right → right
            case("r2w-a", 4, 1, 4),        // right → wrong            (b)
            case("r2w-b", 3, 0, 4),        // right → wrong, unstable  (b)
            case("r2w-tie", 4, 2, 4),      // right → tie = wrong      (b)
            case("tie-to-tie", 2, 2, 4),   // tie → tie: concordant, unstable
            case("tie-to-right", 2, 4, 4), // tie (wrong) → right     (c)
            case("stable-wrong", 0, 0, 4), // wrong → wrong
        ];
        let s = paired_summary(&cases, 42);
        assert_eq!(s.n_cases, 7);
        assert_eq!(s.discordant_right_to_wrong, 3);
        assert_eq!(s.discordant_wrong_to_right, 1);
        // Base correct 4+4+3+4+2+2+0 = 19 of 28; head 4+1+0+2+2+4+0 = 13 of 28.
        assert_close(s.base_accuracy, 19.0 / 28.0, 1e-12);
        assert_close(s.head_accuracy, 13.0 / 28.0, 1e-12);
        assert_close(s.delta, -6.0 / 28.0, 1e-9);
        assert!(s.delta_ci.contains(s.delta));
        // Wilson over cases: successes = Σ per-case accuracy = 19/4, n = 7.
        assert_eq!(s.base_ci, wilson(19.0 / 4.0, 7.0, Z_95));
        // scipy 1.17.1 binomtest(3, 4, 0.5): greater 0.3125, two-sided 0.625.
        assert_close(s.p_value_worse, 0.3125, 1e-12);
        assert_close(s.p_value_two_sided, 0.625, 1e-12);
        assert_eq!(
            s.unstable_cases,
            vec!["r2w-b", "tie-to-tie", "tie-to-right"]
        );
    }

    #[test]
    fn paired_summary_b3_c1() {
        let mut cases = vec![
            case("a", 1, 0, 1),
            case("b", 1, 0, 1),
            case("c", 1, 0, 1),
            case("d", 0, 1, 1),
        ];
        cases.extend((0..6).map(|i| case(&format!("same{i}"), 1, 1, 1)));
        let s = paired_summary(&cases, 1);
        assert_eq!(
            (s.discordant_right_to_wrong, s.discordant_wrong_to_right),
            (3, 1)
        );
        // scipy 1.17.1 binomtest(3, 4, 0.5): greater 0.3125, two-sided 0.625.
        assert_close(s.p_value_worse, 0.3125, 1e-12);
        assert_close(s.p_value_two_sided, 0.625, 1e-12);
        assert!(s.unstable_cases.is_empty(), "K = 1 cannot be unstable");
        assert_close(s.base_accuracy, 0.9, 1e-12);
        assert_close(s.head_accuracy, 0.7, 1e-12);
        assert_eq!(s.head_ci, wilson(7.0, 10.0, Z_95));
    }

    #[test]
    fn paired_summary_empty() {
        let s = paired_summary(&[], 1);
        assert_eq!(s.n_cases, 0);
        assert_eq!(s.base_ci, Interval { lo: 0.0, hi: 1.0 });
        assert_eq!(s.delta_ci, Interval { lo: -1.0, hi: 1.0 });
        assert_eq!(s.p_value_worse, 1.0);
    }

    #[test]
    fn summary_serialises_with_stable_field_names() {
        let s = paired_summary(&regression_suite(), 5);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["discordant_right_to_wrong"], 6);
        assert_eq!(json["delta_ci"]["lo"], s.delta_ci.lo);
        // Not compared with `==`: serde_json's default float parser may be 1 ulp off
        // (exact round-trips need its `float_roundtrip` feature).
        let back: PairedSummary = serde_json::from_value(json).unwrap();
        assert_close(back.base_ci.hi, s.base_ci.hi, 1e-15);
        assert_eq!(back.unstable_cases, s.unstable_cases);
    }

    #[test]
    fn invalid_cases_are_reported() {
        assert!(case("ok", 3, 0, 3).validate().is_ok());
        assert!(case("zero", 0, 0, 0).validate().is_err());
        assert!(case("over", 4, 0, 3).validate().is_err());
        assert!(case("over", 0, 4, 3).validate().is_err());
    }

    #[test]
    #[should_panic(expected = "invalid CaseOutcome")]
    fn invalid_case_panics_in_summary() {
        paired_summary(&[case("zero", 0, 0, 0)], 1);
    }

    #[test]
    fn tool_metrics_hand_example() {
        let mut n = 0;
        let mut obs = |expected: &[&str], chosen: Option<&str>| {
            n += 1;
            (
                format!("c{n}"),
                expected.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                chosen.map(str::to_string),
            )
        };
        let observations = vec![
            obs(&["search"], Some("search")),
            obs(&["search"], Some("search")),
            obs(&["search"], Some("fetch")),
            obs(&["search"], None),
            obs(&["fetch"], Some("fetch")),
            obs(&["fetch"], Some("search")),
            obs(&["fetch"], Some("search")),
            obs(&["fetch", "get"], Some("get")), // acceptable alternative
            obs(&["fetch", "get"], Some("search")),
            obs(&[], None),                    // correctly abstained
            obs(&[], Some("delete")),          // called when nothing was expected
            obs(&["get", "get"], Some("get")), // duplicate names count once
        ];
        let (metrics, confusions) = tool_metrics(&observations);

        let m = |tool: &str| metrics.iter().find(|m| m.tool == tool).unwrap().clone();
        let names: Vec<_> = metrics.iter().map(|m| m.tool.as_str()).collect();
        assert_eq!(names, ["delete", "fetch", "get", "search"]);

        // search: expected 4 times, served 2; called 5 times, 2 of them acceptable.
        let s = m("search");
        assert_eq!((s.support, s.served, s.predicted, s.correct), (4, 2, 5, 2));
        assert_close(s.precision.unwrap(), 0.4, 1e-12);
        assert_close(s.recall.unwrap(), 0.5, 1e-12);
        // fetch: expected 5 times (3 alone, 2 with get), served 2 (one by fetch, one by get).
        let f = m("fetch");
        assert_eq!((f.support, f.served, f.predicted, f.correct), (5, 2, 2, 1));
        assert_close(f.precision.unwrap(), 0.5, 1e-12);
        assert_close(f.recall.unwrap(), 0.4, 1e-12);
        let g = m("get");
        assert_eq!((g.support, g.served, g.predicted, g.correct), (3, 2, 2, 2));
        assert_eq!(g.precision, Some(1.0));
        // delete: never expected, called once wrongly.
        let d = m("delete");
        assert_eq!((d.support, d.predicted, d.correct), (0, 1, 0));
        assert_eq!((d.precision, d.recall), (Some(0.0), None));

        let got: Vec<_> = confusions
            .iter()
            .map(|c| (c.expected.as_str(), c.chosen.as_str(), c.count))
            .collect();
        assert_eq!(
            got,
            [
                ("fetch", "search", 2),
                ("(none)", "delete", 1),
                ("fetch|get", "search", 1),
                ("search", "(none)", 1),
                ("search", "fetch", 1),
            ]
        );
        // Each misroute names its cases.
        assert_eq!(confusions[0].cases, ["c6", "c7"]);
        assert_eq!(confusions[3].cases, ["c4"]);
    }

    #[test]
    fn tool_metrics_empty() {
        let (metrics, confusions) = tool_metrics(&[]);
        assert!(metrics.is_empty() && confusions.is_empty());
    }
}

//! Anytime-valid tests for a canary rollout: e-processes that may be looked at after every event
//! and still hold their false-alarm rate (Ville's inequality), where a fixed-n test peeked at
//! every hour does not.
//!
//! The design is the conditional one behind Lindon & Malek's multinomial counts (2022): sessions
//! are split at random, a fraction `rho` to head. Take any per-session event (the session called
//! a sibling, an invented name, a failed call). If head's rate of it is `lambda` times base's, the
//! arm of each session that had the event is head with probability
//! `theta = rho·lambda / (rho·lambda + 1 − rho)`, independently. Under `lambda = lambda0` that is a
//! Bernoulli(`theta0`) stream, and a mixture of likelihood ratios against other `lambda`s is a
//! nonnegative martingale with mean 1: `P(sup_t E_t ≥ 1/alpha) ≤ alpha`, exactly, at any sample
//! size and however often it is read. The mixture is uniform over a geometric grid of ratios;
//! since the likelihood depends on the counts only, an e-value is a function of the two counts.
//!
//! Only the arm of an event is read, never the number of sessions per arm, so the test does not
//! assume the split came out at `rho` — [`Monitor`] over all sessions (every session an event)
//! is the check that it did (a sample-ratio mismatch).

/// Which alternatives the mixture bets on, relative to `lambda0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Head's rate is higher than `lambda0` times base's.
    Greater,
    /// Lower.
    Less,
    /// Either (half the weight each way).
    Two,
}

/// The mixture's ratios above 1: 40 points, geometric from 1.01 to 4 (a change of 1% to 4×;
/// a larger one is still found through the 4× component). Chosen on the reference cross-check
/// (tests/canary_reference.rs): up to 16× spread the weight thin near the small effects that
/// descriptions make, and lost power to the reference (0.535 vs 0.680 at 1.25×, rho 0.1).
const GRID_POINTS: usize = 40;
const GRID_LOW: f64 = 1.01;
const GRID_HIGH: f64 = 4.0;

fn grid() -> impl Iterator<Item = f64> {
    let (lo, hi) = (GRID_LOW.ln(), GRID_HIGH.ln());
    (0..GRID_POINTS).map(move |j| (lo + (hi - lo) * j as f64 / (GRID_POINTS - 1) as f64).exp())
}

/// The probability that a session with the event is in head, when head's rate is `lambda` times
/// base's and a share `rho` of sessions is in head.
pub fn theta(rho: f64, lambda: f64) -> f64 {
    rho * lambda / (rho * lambda + 1.0 - rho)
}

/// The rate ratio a head share of events `theta` means (the inverse of [`theta`]).
pub fn ratio(rho: f64, theta: f64) -> f64 {
    theta * (1.0 - rho) / (rho * (1.0 - theta))
}

fn log_sum_exp(xs: impl Iterator<Item = f64>) -> f64 {
    let xs: Vec<f64> = xs.collect();
    let m = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// ln E: the e-value against `lambda = lambda0` after `head` events in head's sessions and
/// `base` in base's.
pub fn log_e(head: u64, base: u64, rho: f64, lambda0: f64, side: Side) -> f64 {
    let t0 = theta(rho, lambda0);
    let (h, b) = (head as f64, base as f64);
    let component = |lambda: f64| {
        let t = theta(rho, lambda);
        h * (t / t0).ln() + b * ((1.0 - t) / (1.0 - t0)).ln()
    };
    let (up, down): (Vec<f64>, Vec<f64>) = grid()
        .map(|g| (component(lambda0 * g), component(lambda0 / g)))
        .unzip();
    let n = GRID_POINTS as f64;
    match side {
        Side::Greater => log_sum_exp(up.into_iter()) - n.ln(),
        Side::Less => log_sum_exp(down.into_iter()) - n.ln(),
        Side::Two => log_sum_exp(up.into_iter().chain(down)) - (2.0 * n).ln(),
    }
}

/// One e-process read as events arrive: the counts, and the largest e-value seen on the way, so
/// its p-value (`1 / sup E`) is valid whenever it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Monitor {
    pub rho: f64,
    pub lambda0: f64,
    pub side: Side,
    pub head: u64,
    pub base: u64,
    /// The largest ln E so far (0 before any event: E starts at 1).
    pub max_log_e: f64,
}

impl Monitor {
    pub fn new(rho: f64, lambda0: f64, side: Side) -> Monitor {
        Monitor {
            rho,
            lambda0,
            side,
            head: 0,
            base: 0,
            max_log_e: 0.0,
        }
    }

    /// One event, in head's arm or base's.
    pub fn push(&mut self, in_head: bool) {
        if in_head {
            self.head += 1;
        } else {
            self.base += 1;
        }
        self.max_log_e = self.max_log_e.max(self.log_e());
    }

    pub fn log_e(&self) -> f64 {
        log_e(self.head, self.base, self.rho, self.lambda0, self.side)
    }

    /// The always-valid p-value: `min(1, 1 / sup_t E_t)`.
    pub fn p(&self) -> f64 {
        (-self.max_log_e).exp().min(1.0)
    }

    /// Rejected at `alpha`: some E so far reached `1 / alpha`.
    pub fn rejects(&self, alpha: f64) -> bool {
        self.max_log_e >= (1.0 / alpha).ln()
    }

    /// How many more events until E would reach `1/alpha`, if they arrive in head with
    /// probability `share` (on average: the projection adds them in that proportion to the
    /// counts so far); `None` when that proportion never gets there (it sits on `lambda0`'s side
    /// of the test) or it would take more than a billion.
    pub fn events_to_reject(&self, alpha: f64, share: f64) -> Option<u64> {
        if self.rejects(alpha) {
            return Some(0);
        }
        let target = (1.0 / alpha).ln();
        let at = |more: u64| {
            let h = self.head + (share * more as f64).round() as u64;
            let b = self.base + more - (share * more as f64).round() as u64;
            log_e(h, b, self.rho, self.lambda0, self.side) >= target
        };
        let mut hi = 16u64;
        while !at(hi) {
            hi = hi.checked_mul(2)?;
            if hi > 1_000_000_000 {
                return None;
            }
        }
        let mut lo = hi / 2;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if at(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }
}

/// The confidence sequence for the rate ratio at level `1 − alpha` after these counts: every
/// ratio a two-sided test does not reject, read on a geometric grid from 1/64 to 64 (a bound
/// at the grid's end means "at least that far").
pub fn ratio_interval(head: u64, base: u64, rho: f64, alpha: f64) -> (f64, f64) {
    let target = (1.0 / alpha).ln();
    let kept: Vec<f64> = (0..=480)
        .map(|i| (-(64f64.ln()) + 2.0 * 64f64.ln() * i as f64 / 480.0).exp())
        .filter(|&l| log_e(head, base, rho, l, Side::Two) < target)
        .collect();
    match (kept.first(), kept.last()) {
        (Some(&lo), Some(&hi)) => (lo, hi),
        _ => (f64::NAN, f64::NAN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn theta_and_ratio_invert_each_other_and_no_effect_is_the_split() {
        assert!((theta(0.1, 1.0) - 0.1).abs() < 1e-15);
        for &(rho, l) in &[(0.1, 2.0), (0.5, 0.7), (0.01, 1.3)] {
            assert!((ratio(rho, theta(rho, l)) - l).abs() < 1e-12);
        }
    }

    #[test]
    fn no_events_is_no_evidence_and_a_one_sided_test_ignores_the_other_side() {
        assert_eq!(log_e(0, 0, 0.1, 1.0, Side::Two), 0.0);
        // Every event in base: evidence that head's rate is lower, none that it is higher.
        assert!(log_e(0, 200, 0.5, 1.0, Side::Less) > 20.0);
        assert!(log_e(0, 200, 0.5, 1.0, Side::Greater) < 0.0);
    }

    #[test]
    fn the_mixture_is_the_mean_of_its_components_computed_by_hand() {
        // One event in head at rho = 0.5: each component's ratio is theta(l)/0.5.
        let by_hand: f64 = grid().map(|g| theta(0.5, g) / 0.5).sum::<f64>() / 40.0;
        assert!((log_e(1, 0, 0.5, 1.0, Side::Greater) - by_hand.ln()).abs() < 1e-12);
    }

    #[test]
    fn under_no_effect_e_has_mean_one_exactly() {
        // E[E_n] = 1 under H0, summed over the binomial distribution of the head count.
        let (rho, n) = (0.2f64, 30u64);
        let mut mean = 0.0;
        let mut choose = 1.0f64;
        for h in 0..=n {
            if h > 0 {
                choose *= (n - h + 1) as f64 / h as f64;
            }
            let pr = choose * rho.powi(h as i32) * (1.0 - rho).powi((n - h) as i32);
            mean += pr * log_e(h, n - h, rho, 1.0, Side::Two).exp();
        }
        assert!((mean - 1.0).abs() < 1e-9, "{mean}");
    }

    #[test]
    fn the_interval_covers_the_true_ratio_and_narrows() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let t = theta(0.5, 1.5);
        let (mut h, mut b) = (0, 0);
        for _ in 0..4000 {
            if rng.random_bool(t) { h += 1 } else { b += 1 }
        }
        let (lo, hi) = ratio_interval(h, b, 0.5, 0.05);
        assert!(lo < 1.5 && 1.5 < hi && lo > 1.2 && hi < 1.9, "{lo} {hi}");
    }

    #[test]
    fn events_to_reject_is_where_the_projection_crosses() {
        let mut m = Monitor::new(0.5, 1.0, Side::Greater);
        for i in 0..60 {
            m.push(i % 3 != 0); // two in three in head: ratio 2
        }
        let more = m.events_to_reject(0.05, 2.0 / 3.0).unwrap();
        assert!(more > 0);
        let h = 40 + (2.0 / 3.0 * more as f64).round() as u64;
        let b = 20 + more - (2.0 / 3.0 * more as f64).round() as u64;
        assert!(log_e(h, b, 0.5, 1.0, Side::Greater) >= 20f64.ln());
        // At the null proportion it never gets there.
        let mut flat = Monitor::new(0.5, 1.0, Side::Greater);
        for i in 0..100 {
            flat.push(i % 2 == 0);
        }
        assert_eq!(flat.events_to_reject(0.05, 0.5), None);
        // Non-inferiority at 1.2x, no effect: reachable, and further for a narrower margin.
        let ni = |l0: f64| {
            Monitor::new(0.5, l0, Side::Less)
                .events_to_reject(0.05, 0.5)
                .unwrap()
        };
        assert!(ni(1.2) > ni(1.5));
    }
}

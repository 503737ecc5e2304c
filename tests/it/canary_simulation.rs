//! The canary's statistics, proven by simulation: under no effect, a watch read after every
//! batch of sessions up to 10,000 event sessions raises a false alarm at most `alpha` of the
//! time, while a fixed-n test read the same way does not; and a 5-point shift in a sibling's
//! share is found, with its time to detection. docs/canary.md quotes these numbers.

use driftgate::stats::seq::{Side, log_e, theta};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ALPHA: f64 = 0.05;
const EVENTS: u64 = 10_000;
const BATCH: u64 = 100;
const RUNS: u64 = 600;

/// The score test of "head's share of events is rho", fixed-n, read at every look.
fn naive_rejects(h: u64, n: u64, rho: f64) -> bool {
    let z = (h as f64 - n as f64 * rho) / (n as f64 * rho * (1.0 - rho)).sqrt();
    z.abs() > 1.959963984540054
}

/// Over `RUNS` streams of event arms drawn with head probability `p`, looked at every `BATCH`
/// events: (share of runs the e-process rejected, of runs the naive test did, median events to
/// the e-process's rejection).
fn run(p: f64, rho: f64, alpha: f64, side: Side, seed: u64) -> (f64, f64, Option<u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut e_alarms, mut naive_alarms, mut times) = (0, 0, Vec::new());
    for _ in 0..RUNS {
        let (mut h, mut n) = (0u64, 0u64);
        let (mut e_hit, mut naive_hit) = (None, false);
        while n < EVENTS {
            for _ in 0..BATCH {
                h += rng.random_bool(p) as u64;
            }
            n += BATCH;
            if e_hit.is_none() && log_e(h, n - h, rho, 1.0, side) >= (1.0 / alpha).ln() {
                e_hit = Some(n);
            }
            naive_hit |= naive_rejects(h, n, rho);
        }
        if let Some(t) = e_hit {
            e_alarms += 1;
            times.push(t);
        }
        naive_alarms += naive_hit as u32;
    }
    times.sort();
    let median = (times.len() * 2 > RUNS as usize).then(|| times[RUNS as usize / 2]);
    (
        e_alarms as f64 / RUNS as f64,
        naive_alarms as f64 / RUNS as f64,
        median,
    )
}

#[test]
fn under_no_effect_watching_after_every_batch_keeps_false_alarms_under_alpha() {
    for (rho, seed) in [(0.01, 1), (0.1, 2), (0.5, 3)] {
        let (e, naive, _) = run(rho, rho, ALPHA, Side::Two, seed);
        eprintln!("rho {rho}: anytime-valid {e:.3}, naive fixed-n read at every look {naive:.3}");
        assert!(e <= ALPHA, "rho {rho}: false alarms {e} > {ALPHA}");
        // The same looks with a fixed-n test: far above alpha (that is why this exists).
        assert!(naive > 2.0 * ALPHA, "rho {rho}: naive {naive}");
    }
}

#[test]
fn a_five_point_shift_in_a_siblings_share_is_found() {
    // A sibling reached in 30% of base's sessions and 35% of head's, at a 50% stage; its events
    // are the sessions that reached it. Ten metrics guarded: each test at alpha / 10.
    let (rho, base_share, head_share) = (0.5, 0.30, 0.35);
    let p = theta(rho, head_share / base_share);
    let (power, _, median) = run(p, rho, ALPHA / 10.0, Side::Two, 4);
    let median = median.expect("found in most runs");
    // Events are ~32.5% of sessions: sessions to detection = events / 0.325.
    let sessions = (median as f64 / (0.5 * base_share + 0.5 * head_share)).round();
    eprintln!(
        "5-point shift (30% → 35%) at a 50% stage, alpha 0.05 over 10 metrics: power {power:.3} within {EVENTS} event sessions, median {median} events ≈ {sessions} sessions"
    );
    assert!(power >= 0.8, "power {power}");
    // At a 10% stage the same shift is slower to show: the head arm is small.
    let p10 = theta(0.1, head_share / base_share);
    let (power10, _, _) = run(p10, 0.1, ALPHA / 10.0, Side::Two, 5);
    eprintln!("the same at a 10% stage: power {power10:.3} within {EVENTS} event sessions");
    assert!(power10 < power);
}

//! Confirmation re-runs (`--confirm K`): only the discordant cases are asked K more times at
//! both sides (flips are few, so this is cheap), the answers join the first run's, and a flip
//! counts only if it holds in the majority of all of a case's answers. Each flip says in how many
//! of the K re-asks it happened again; a flip that did not hold is listed as not reproduced.

use std::collections::BTreeSet;

use super::compare::{Confirmation, Direction, Flip, Routing};
use super::runner::SideRun;
use crate::suite::Suite;

/// The cases of `suite` that flipped in `routing`.
pub fn flipped_cases(suite: &Suite, routing: &Routing) -> Suite {
    let ids: BTreeSet<&str> = routing.flips.iter().map(|f| f.id.as_str()).collect();
    Suite {
        cases: suite
            .cases
            .iter()
            .filter(|c| ids.contains(c.id.as_str()))
            .cloned()
            .collect(),
        ..suite.clone()
    }
}

/// `run` with the re-asked samples of `extra` appended to their cases, and its counters summed.
pub fn merge(run: &SideRun, extra: &SideRun) -> SideRun {
    let mut out = run.clone();
    for e in &extra.cases {
        if let Some(c) = out.cases.iter_mut().find(|c| c.id == e.id) {
            c.samples.extend(e.samples.iter().cloned());
        }
    }
    let (s, x) = (&mut out.stats, &extra.stats);
    s.requests_sent += x.requests_sent;
    s.cache_hits += x.cache_hits;
    s.reused += x.reused;
    s.retries += x.retries;
    s.errors += x.errors;
    s.input_tokens += x.input_tokens;
    s.output_tokens += x.output_tokens;
    s.request_latency_ms_sum += x.request_latency_ms_sum;
    s.wall_ms += x.wall_ms;
    out
}

/// In how many re-asks (paired by repeat) did the flip happen again: base right and head wrong
/// for a regression, the other way for a fix.
fn reproduced(flip: &Flip, base: &SideRun, head: &SideRun) -> Confirmation {
    let samples = |run: &SideRun| {
        run.cases
            .iter()
            .find(|c| c.id == flip.id)
            .map(|c| {
                c.samples
                    .iter()
                    .map(|s| s.outcome.is_correct())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let (b, h) = (samples(base), samples(head));
    let again = b
        .iter()
        .zip(&h)
        .filter(|(b, h)| match flip.direction {
            Direction::Regressed => **b && !**h,
            Direction::Fixed => !**b && **h,
        })
        .count();
    Confirmation {
        reproduced: again as u32,
        asked: b.len().min(h.len()) as u32,
    }
}

/// Mark `after` (the pairing of the merged runs) with the confirmation of every flip of `before`
/// (the first run's flips): kept flips say how often they reproduced, dropped ones move to
/// `not_reproduced`.
pub fn annotate(after: &mut Routing, before: &[Flip], base_extra: &SideRun, head_extra: &SideRun) {
    for old in before {
        let c = reproduced(old, base_extra, head_extra);
        match after.flips.iter_mut().find(|f| f.id == old.id) {
            Some(f) => f.confirmed = Some(c),
            None => {
                let mut gone = old.clone();
                gone.confirmed = Some(c);
                after.not_reproduced.push(gone);
            }
        }
    }
}

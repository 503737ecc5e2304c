//! Confirmation re-runs (`--confirm K`): only the discordant cases are asked K more times at
//! both sides (flips are few, so this is cheap), the answers join the first run's, and a flip
//! counts only if it holds in the majority of all of a case's answers. Each flip says in how many
//! of the K re-asks it happened again; a flip that did not hold is listed as not reproduced.
//! Call flips (the arguments moved, routing did not) are re-asked and judged the same way, on
//! call correctness.

use std::collections::BTreeSet;

use super::compare::{Confirmation, Direction, Flip, Routing};
use super::runner::{Sample, SideRun};
use crate::suite::Suite;

/// Whether `routing` has a flip of either metric to confirm.
pub fn has_flips(routing: &Routing) -> bool {
    !routing.paired.flips.is_empty()
        || routing
            .calls
            .as_ref()
            .is_some_and(|c| !c.paired.flips.is_empty())
}

/// The cases of `suite` that flipped in `routing`, routing or call.
pub fn flipped_cases(suite: &Suite, routing: &Routing) -> Suite {
    let call_flips = routing.calls.iter().flat_map(|c| &c.paired.flips);
    let ids: BTreeSet<&str> = routing
        .paired
        .flips
        .iter()
        .chain(call_flips)
        .map(|f| f.id.as_str())
        .collect();
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
    out.stats.add(&extra.stats);
    out
}

/// In how many re-asks (paired by repeat) did the flip happen again: base right and head wrong
/// for a regression, the other way for a fix, "right" as `correct` judges a sample.
fn reproduced(
    flip: &Flip,
    base: &SideRun,
    head: &SideRun,
    correct: fn(&Sample) -> bool,
) -> Confirmation {
    let samples = |run: &SideRun| {
        run.cases
            .iter()
            .find(|c| c.id == flip.id)
            .map(|c| c.samples.iter().map(correct).collect::<Vec<_>>())
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

/// The flips of both metrics before a confirmation, to annotate the pairing after it.
pub struct Before {
    routing: Vec<Flip>,
    calls: Vec<Flip>,
}

impl Before {
    pub fn of(routing: &Routing) -> Before {
        Before {
            routing: routing.paired.flips.clone(),
            calls: routing
                .calls
                .as_ref()
                .map(|c| c.paired.flips.clone())
                .unwrap_or_default(),
        }
    }
}

/// The cases whose first-run flip (either metric) the re-asks reproduced in at most half of
/// them: pooled with the first answer they may still lean the flip's way (3 of 4 right at base,
/// a 2-2 tie at head is "wrong"), but a flip that did not happen again is not evidence. Pass them
/// to [`super::compare_sides`] as excused.
pub fn unreproduced(
    before: &Before,
    base_extra: &SideRun,
    head_extra: &SideRun,
) -> BTreeSet<String> {
    let routing = before.routing.iter().map(|f| {
        (
            f,
            reproduced(f, base_extra, head_extra, |s| s.outcome.is_correct()),
        )
    });
    let calls = before.calls.iter().map(|f| {
        (
            f,
            reproduced(f, base_extra, head_extra, |s| s.call.is_correct()),
        )
    });
    routing
        .chain(calls)
        .filter(|(_, c)| 2 * c.reproduced <= c.asked)
        .map(|(f, _)| f.id.clone())
        .collect()
}

/// Mark `after` (the pairing of the merged runs) with the confirmation of every flip of `before`
/// (the first run's flips, both metrics): kept flips say how often they reproduced, dropped ones
/// move to their metric's `not_reproduced`.
pub fn annotate(after: &mut Routing, before: &Before, base_extra: &SideRun, head_extra: &SideRun) {
    mark(
        &mut after.paired.flips,
        &mut after.paired.not_reproduced,
        &before.routing,
        (base_extra, head_extra),
        |s| s.outcome.is_correct(),
    );
    if let Some(calls) = after.calls.as_mut() {
        mark(
            &mut calls.paired.flips,
            &mut calls.paired.not_reproduced,
            &before.calls,
            (base_extra, head_extra),
            |s| s.call.is_correct(),
        );
    }
}

fn mark(
    flips: &mut [Flip],
    not_reproduced: &mut Vec<Flip>,
    before: &[Flip],
    (base, head): (&SideRun, &SideRun),
    correct: fn(&Sample) -> bool,
) {
    for old in before {
        let c = reproduced(old, base, head, correct);
        match flips.iter_mut().find(|f| f.id == old.id) {
            Some(f) => f.confirmed = Some(c),
            None => {
                let mut gone = old.clone();
                gone.confirmed = Some(c);
                not_reproduced.push(gone);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Outcome, compare_sides};

    fn run(right: &[bool]) -> SideRun {
        let sample = |r: &bool| {
            Sample::routed(if *r {
                Outcome::Correct {
                    chosen: Some("a".into()),
                }
            } else {
                Outcome::NoCall
            })
        };
        SideRun::of([("c".to_string(), right.iter().map(sample).collect())])
    }

    /// Pooled, 3 of 4 right at base and a 2–2 tie ("wrong") at head still lean the flip's way,
    /// though none of the 3 re-asks reproduced it: confirmed 0/3 is not a regression.
    #[test]
    fn a_flip_the_re_asks_did_not_reproduce_no_longer_counts() {
        let suite = crate::suite::parse(
            "- {id: c, prompt: p, expect: a}\n",
            "s.yaml",
            std::path::Path::new("."),
        )
        .unwrap();
        let cmp = |b: &SideRun, h: &SideRun, excused: &BTreeSet<String>| {
            compare_sides(&suite, &suite, b, h, 0, 0, excused)
        };
        let first = cmp(&run(&[true]), &run(&[false]), &BTreeSet::new());
        assert_eq!(first.paired.flips.len(), 1);
        let before = Before::of(&first);
        let (base_extra, head_extra) = (run(&[true, true, false]), run(&[true, true, false]));
        let (base, head) = (
            merge(&run(&[true]), &base_extra),
            merge(&run(&[false]), &head_extra),
        );
        // Without the rule: the pooled majority keeps the flip.
        let pooled = cmp(&base, &head, &BTreeSet::new());
        assert_eq!(pooled.paired.summary.discordant_right_to_wrong, 1);
        let excused = unreproduced(&before, &base_extra, &head_extra);
        assert_eq!(excused, BTreeSet::from(["c".to_string()]));
        let mut after = cmp(&base, &head, &excused);
        annotate(&mut after, &before, &base_extra, &head_extra);
        assert_eq!(after.paired.summary.discordant_right_to_wrong, 0);
        assert!(after.paired.flips.is_empty());
        assert_eq!(after.paired.per_tool[0].regressed, 0);
        assert_eq!(
            after.paired.not_reproduced[0].confirmed,
            Some(Confirmation {
                reproduced: 0,
                asked: 3
            })
        );
        // Reproduced in 2 of 3: it stands.
        let head_extra = run(&[false, false, true]);
        assert!(unreproduced(&before, &base_extra, &head_extra).is_empty());
    }
}

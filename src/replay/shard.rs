//! Sharding a replay past one machine (`check --shard i/n`, `driftgate merge`): each shard replays
//! a stable partition of the suite's cases and writes its raw runs into a partial report; the
//! merge puts the runs of all parts back in suite order and pairs them again, so the statistics
//! are those of one run over every case, not an average of the parts'.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::compare::Flip;
use super::runner::{CaseRun, SideRun};
use crate::suite::{Case, Expect, Suite};

/// The most shards a suite is cut into (a matrix of more jobs than that is a mistake).
pub const MAX_SHARDS: u32 = 256;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad =
            || format!("--shard {s:?}: expected I/N with 1 <= I <= N <= {MAX_SHARDS}, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether case `id` belongs to this shard: by the sha256 of the id alone, so the partition
    /// depends on neither the seed, nor the case order, nor the machine.
    pub fn contains(&self, id: &str) -> bool {
        let h = Sha256::digest(id.as_bytes());
        let n = u64::from_be_bytes(h[..8].try_into().expect("8 bytes"));
        n % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// This shard's cases of `suite`, in suite order, with their positions in the whole suite.
    pub fn select(&self, suite: &Suite) -> (Suite, Vec<usize>) {
        let (positions, cases): (Vec<usize>, Vec<Case>) = suite
            .cases
            .iter()
            .enumerate()
            .filter(|(_, c)| self.contains(&c.id))
            .map(|(i, c)| (i, c.clone()))
            .unzip();
        (
            Suite {
                cases,
                ..suite.clone()
            },
            positions,
        )
    }
}

/// What a case contributes to the pairing (the rest of it was used while replaying).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PartCase {
    /// Position in the whole suite.
    pub position: usize,
    pub id: String,
    pub prompt: String,
    pub expect: Expect,
    /// The expectation at head (a renamed tool carried to its new name).
    pub head_expect: Expect,
    /// Whether the case has expected arguments (counted by call accuracy).
    pub has_args: bool,
}

/// A shard's raw material, carried in its partial report for `driftgate merge`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardPart {
    pub shard: Shard,
    /// Cases in the whole suite (every part must agree, and the parts must add up to it).
    pub suite_cases: usize,
    /// sha256 of the base and head tool sets and the distractor packs as offered, so parts of
    /// different tool sets are refused even when their file names agree.
    pub tools_sha256: [String; 3],
    /// `--confirm K` of the run.
    pub confirm: u32,
    /// The replay's seed (the pairing's bootstrap uses it too).
    pub seed: u64,
    /// The report's notes that do not depend on which cases were replayed.
    pub notes: Vec<String>,
    pub cases: Vec<PartCase>,
    /// The runs of `cases`, in that order (confirmation re-asks merged in).
    pub base_run: SideRun,
    pub head_run: SideRun,
    /// HMAC-SHA256 over the whole partial report (this field left out), under the key of the run
    /// that wrote it (`DRIFTGATE_KEY`): `driftgate merge` refuses a part edited since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

impl ShardPart {
    /// The part's cases as suites again (base's and head's expectations), for the pairing.
    pub fn suites(cases: &[PartCase], sha256: &str, source: &str) -> (Suite, Suite) {
        let suite = |head: bool| Suite {
            cases: cases
                .iter()
                .map(|c| Case {
                    id: c.id.clone(),
                    history: Vec::new(),
                    prompt: c.prompt.clone(),
                    expect: if head {
                        c.head_expect.clone()
                    } else {
                        c.expect.clone()
                    },
                    must_not_call: Vec::new(),
                    distractors: Vec::new(),
                    tags: Vec::new(),
                    args: c.has_args.then(Default::default),
                })
                .collect(),
            sha256: sha256.to_string(),
            source: source.to_string(),
        };
        (suite(false), suite(true))
    }

    /// The cases of `suite` (base) and `head_suite`, at `positions`, as the part carries them.
    pub fn cases_of(suite: &Suite, head_suite: &Suite, positions: &[usize]) -> Vec<PartCase> {
        suite
            .cases
            .iter()
            .zip(&head_suite.cases)
            .zip(positions)
            .map(|((c, h), &position)| PartCase {
                position,
                id: c.id.clone(),
                prompt: c.prompt.clone(),
                expect: c.expect.clone(),
                head_expect: h.expect.clone(),
                has_args: c.args.is_some(),
            })
            .collect()
    }
}

/// The parts' cases and runs as one, in suite order; `Err` names a case two parts both have.
pub fn join(parts: &[&ShardPart]) -> Result<(Vec<PartCase>, SideRun, SideRun), String> {
    let mut rows: Vec<(&PartCase, &CaseRun, &CaseRun)> = Vec::new();
    for p in parts {
        if p.cases.len() != p.base_run.cases.len() || p.cases.len() != p.head_run.cases.len() {
            return Err(format!(
                "shard {} has {} case(s) but {} base and {} head run(s)",
                p.shard,
                p.cases.len(),
                p.base_run.cases.len(),
                p.head_run.cases.len()
            ));
        }
        for ((c, b), h) in p.cases.iter().zip(&p.base_run.cases).zip(&p.head_run.cases) {
            // A case spliced in from elsewhere sits in a part that would never have run it.
            if !p.shard.contains(&c.id) {
                return Err(format!(
                    "shard {}: case {:?} does not belong to it (the split is by case id)",
                    p.shard, c.id
                ));
            }
            if b.id != c.id || h.id != c.id {
                return Err(format!(
                    "shard {}: runs out of order at case {:?}",
                    p.shard, c.id
                ));
            }
            rows.push((c, b, h));
        }
    }
    rows.sort_by_key(|(c, _, _)| c.position);
    if let Some(w) = rows.windows(2).find(|w| w[0].0.position == w[1].0.position) {
        return Err(format!(
            "case {:?} (position {}) is in two parts",
            w[1].0.id, w[1].0.position
        ));
    }
    // Positions 0, 1, 2, … each once: a deleted case leaves a hole, a duplicated one a repeat.
    if let Some((i, (c, _, _))) = rows.iter().enumerate().find(|(i, r)| r.0.position != *i) {
        return Err(format!(
            "case {:?} is at position {} where case {} was expected: a case is missing from the parts",
            c.id, c.position, i
        ));
    }
    let mut ids = std::collections::HashSet::new();
    if let Some((c, _, _)) = rows.iter().find(|r| !ids.insert(r.0.id.as_str())) {
        return Err(format!("case id {:?} is in the parts twice", c.id));
    }
    let mut base = SideRun::default();
    let mut head = SideRun::default();
    for p in parts {
        base.stats.add(&p.base_run.stats);
        head.stats.add(&p.head_run.stats);
    }
    let mut cases = Vec::with_capacity(rows.len());
    for (c, b, h) in rows {
        cases.push(c.clone());
        base.cases.push(b.clone());
        head.cases.push(h.clone());
    }
    Ok((cases, base, head))
}

/// Carry each part's `--confirm` verdicts (confirmed k/K on a flip, or not reproduced) onto the
/// merged pairing: a flip is a property of its case's answers, so it is the same flip.
pub fn carry_confirmations(
    merged: &mut super::compare::Routing,
    parts: &[&super::compare::Routing],
) {
    let find = |id: &str, pick: fn(&super::compare::Routing) -> Vec<&Flip>| {
        parts
            .iter()
            .flat_map(|r| pick(r))
            .find(|f| f.id == id)
            .and_then(|f| f.confirmed)
    };
    for f in &mut merged.paired.flips {
        f.confirmed = find(&f.id, |r| r.paired.flips.iter().collect());
    }
    merged.paired.not_reproduced = parts
        .iter()
        .flat_map(|r| r.paired.not_reproduced.iter().cloned())
        .collect();
    merged.paired.not_reproduced.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(calls) = merged.calls.as_mut() {
        for f in &mut calls.paired.flips {
            f.confirmed = find(&f.id, |r| {
                r.calls.iter().flat_map(|c| &c.paired.flips).collect()
            });
        }
        calls.paired.not_reproduced = parts
            .iter()
            .flat_map(|r| {
                r.calls
                    .iter()
                    .flat_map(|c| c.paired.not_reproduced.iter().cloned())
            })
            .collect();
        calls.paired.not_reproduced.sort_by(|a, b| a.id.cmp(&b.id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_i_of_n_and_refuses_the_rest() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!("1/1".parse::<Shard>().unwrap().to_string(), "1/1");
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "1/257", "-1/4", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("expected I/N"), "{bad}: {e}");
        }
    }

    /// Every case is in exactly one shard; the split is stable (a pinned assignment) and roughly
    /// even.
    #[test]
    fn shards_partition_the_cases_stably() {
        let ids: Vec<String> = (0..1000).map(|i| format!("case-{i}")).collect();
        let n = 4;
        let shards: Vec<Shard> = (1..=n).map(|index| Shard { index, count: n }).collect();
        let mut sizes = vec![0usize; n as usize];
        for id in &ids {
            let owners: Vec<&Shard> = shards.iter().filter(|s| s.contains(id)).collect();
            assert_eq!(owners.len(), 1, "{id}");
            sizes[owners[0].index as usize - 1] += 1;
        }
        assert!(sizes.iter().all(|&s| (200..300).contains(&s)), "{sizes:?}");
        // Pinned: a change of the hash would move cases between machines mid-rollout.
        let owner = |id: &str| shards.iter().find(|s| s.contains(id)).unwrap().index;
        assert_eq!(
            ["sched-05", "sched-01", "sched-02", "resch-03"].map(owner),
            [1, 2, 3, 4]
        );
        let one = Shard { index: 1, count: 1 };
        assert!(ids.iter().all(|id| one.contains(id)));
    }
}

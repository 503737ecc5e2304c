//! The order a case's tools are offered in.
//!
//! Position sways routers (a list's first tools are read first), so no tool may sit in the same
//! place for every case. Two designs control it:
//!
//! - `rotate` (the default): the side's tools and the distractor packs sit on one circle, placed by
//!   sha256(seed, name); K orders start at K equally spaced tools of it (a [`Circle`], taken from
//!   the base side so that head starts at the same tools), and each case takes the order
//!   sha256(seed, case id) picks. Every case of one order sends the same tool block, a
//!   byte-identical prefix that llama.cpp's slot cache and the providers' prompt caches reuse; a
//!   tool sits at the front, the middle and the end of the list in about equally many cases. A
//!   case's own distractors follow the shared block, so they do not break it.
//! - `shuffle`: every case its own order, sorted by sha256(seed, case id, name); no two cases
//!   share a prefix (the design before rotations, kept for comparison).
//!
//! Both give a case the same order at base and head, and a tool present at both sides keeps its
//! place relative to the others, so the paired comparison asks the same question twice.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How each case's offered tools are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "design")]
pub enum Order {
    /// K rotations of one circle of tools, shared by the cases of each rotation.
    Rotate { rotations: u32 },
    /// Every case its own order.
    Shuffle,
}

impl Default for Order {
    fn default() -> Self {
        Order::Rotate {
            rotations: Order::DEFAULT_ROTATIONS,
        }
    }
}

/// Where a tool goes in a case's list: compared as a tuple, smaller first.
pub type Place = (u8, u64, [u8; 32]);

impl Order {
    /// Four: each tool is at the head, in each middle quarter and at the tail of the list in
    /// about a quarter of the cases, for four full tool blocks per side to evaluate or cache.
    pub const DEFAULT_ROTATIONS: u32 = 4;

    /// The rotation `case_id` takes (0 under `shuffle`).
    pub fn rotation(&self, seed: u64, case_id: &str) -> u32 {
        match *self {
            Order::Rotate { rotations } => {
                let h = digest(seed, b"rotation", case_id.as_bytes(), b"");
                (u64::from_le_bytes(h[..8].try_into().expect("8 bytes"))
                    % u64::from(rotations.max(1))) as u32
            }
            Order::Shuffle => 0,
        }
    }

    /// The place of tool `name` in `case_id`'s list, rotations starting where `circle` says.
    /// `shared`: one of the tools every case is offered (the side's and the packs'), as opposed
    /// to the case's own distractors.
    pub fn place(
        &self,
        circle: &Circle,
        seed: u64,
        case_id: &str,
        name: &str,
        shared: bool,
    ) -> Place {
        let per_case = digest(seed, case_id.as_bytes(), b"\0", name.as_bytes());
        match *self {
            Order::Shuffle => (0, 0, per_case),
            Order::Rotate { .. } if !shared => (1, 0, per_case),
            Order::Rotate { .. } => {
                let h = digest(seed, b"tool", b"\0", name.as_bytes());
                let start = circle
                    .starts
                    .get(self.rotation(seed, case_id) as usize)
                    .copied()
                    .unwrap_or(0);
                (0, on_circle(&h).wrapping_sub(start), h)
            }
        }
    }

    /// "rotate (4 orders)" or "shuffle (one order per case)", for reports.
    pub fn describe(&self) -> String {
        match self {
            Order::Rotate { rotations } => format!("rotate ({rotations} orders)"),
            Order::Shuffle => "shuffle (one order per case)".into(),
        }
    }
}

/// Where each rotation starts: on the tools at 0, n/K, 2n/K, … of the circle of `n` shared
/// tools, so that every tool leads, sits in each middle stretch and trails in equally many
/// rotations (equally spaced points of the hash space would leave, for ten tools, a quarter
/// empty about one time in twenty and two rotations identical). Taken from the base side and used
/// at head too: a tool the PR added or removed then shifts no other tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Circle {
    starts: Vec<u64>,
}

impl Circle {
    /// The starts of `order`'s rotations over the shared tools named `names` (duplicates
    /// allowed); empty under `shuffle`.
    pub fn of<'a>(order: Order, seed: u64, names: impl IntoIterator<Item = &'a str>) -> Circle {
        let Order::Rotate { rotations } = order else {
            return Circle::default();
        };
        let mut at: Vec<u64> = names
            .into_iter()
            .map(|n| on_circle(&digest(seed, b"tool", b"\0", n.as_bytes())))
            .collect();
        at.sort_unstable();
        at.dedup();
        if at.is_empty() {
            return Circle::default();
        }
        let k = rotations.max(1) as usize;
        Circle {
            starts: (0..k).map(|i| at[i * at.len() / k]).collect(),
        }
    }
}

fn on_circle(h: &[u8; 32]) -> u64 {
    u64::from_be_bytes(h[..8].try_into().expect("8 bytes"))
}

/// sha256(seed, a, b, c). The shuffle's digest is the one every release before rotations used,
/// so `--order shuffle` asks exactly the questions those releases asked (and hits their cache).
fn digest(seed: u64, a: &[u8], b: &[u8], c: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(a);
    h.update(b);
    h.update(c);
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(order: Order, case: &str, names: &[&str]) -> Vec<String> {
        list_on(
            order,
            &Circle::of(order, 7, names.iter().copied()),
            case,
            names,
        )
    }

    fn list_on(order: Order, circle: &Circle, case: &str, names: &[&str]) -> Vec<String> {
        let mut v: Vec<&str> = names.to_vec();
        v.sort_by_key(|n| order.place(circle, 7, case, n, true));
        v.into_iter().map(String::from).collect()
    }

    const NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

    #[test]
    fn rotations_are_rotations_of_one_circle() {
        let order = Order::Rotate { rotations: 4 };
        let cases: Vec<String> = (0..200).map(|i| format!("case-{i}")).collect();
        let circle = list(order, &cases[0], &NAMES);
        let mut seen = std::collections::BTreeSet::new();
        for c in &cases {
            let l = list(order, c, &NAMES);
            let at = circle
                .iter()
                .position(|n| *n == l[0])
                .expect("on the circle");
            let rotated: Vec<String> = circle[at..].iter().chain(&circle[..at]).cloned().collect();
            assert_eq!(l, rotated, "{c}");
            seen.insert(l);
        }
        assert!(seen.len() > 1 && seen.len() <= 4, "{} orders", seen.len());
    }

    #[test]
    fn a_tool_keeps_its_place_relative_to_the_others_when_one_is_added_or_removed() {
        for order in [Order::Rotate { rotations: 4 }, Order::Shuffle] {
            // The circle is the base side's; head is ordered on it.
            let circle = Circle::of(order, 7, NAMES);
            for c in (0..40).map(|i| format!("case-{i}")) {
                let before = list_on(order, &circle, &c, &NAMES);
                let mut more = NAMES.to_vec();
                more.push("new_tool");
                let after: Vec<String> = list_on(order, &circle, &c, &more)
                    .into_iter()
                    .filter(|n| n != "new_tool")
                    .collect();
                assert_eq!(before, after, "{order:?} {c}");
                let fewer: Vec<&str> = NAMES.iter().copied().filter(|n| *n != before[0]).collect();
                let without: Vec<String> = before
                    .iter()
                    .filter(|n| **n != before[0])
                    .cloned()
                    .collect();
                assert_eq!(
                    list_on(order, &circle, &c, &fewer),
                    without,
                    "{order:?} {c}"
                );
            }
        }
    }

    #[test]
    fn every_tools_places_over_the_rotations_are_evenly_spaced() {
        for n in [4, 7, 10, 40] {
            let names: Vec<String> = (0..n).map(|i| format!("tool_{i}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let order = Order::Rotate { rotations: 4 };
            let circle = Circle::of(order, 7, names.iter().copied());
            let lists: std::collections::BTreeSet<Vec<String>> = (0..400)
                .map(|i| list_on(order, &circle, &format!("c{i}"), &names))
                .collect();
            assert_eq!(lists.len(), 4, "{n} tools");
            // A tool's four places, around the list: n/4 apart, give or take the rounding.
            for t in &names {
                let mut at: Vec<usize> = lists
                    .iter()
                    .map(|l| l.iter().position(|x| x == t).unwrap())
                    .collect();
                at.sort();
                let gaps: Vec<usize> = (0..4).map(|i| (at[(i + 1) % 4] + n - at[i]) % n).collect();
                assert!(
                    gaps.iter().all(|g| (n / 4..=n.div_ceil(4)).contains(g)),
                    "{t} of {n}: at {at:?}"
                );
            }
        }
    }

    #[test]
    fn shuffle_gives_cases_their_own_orders() {
        let distinct: std::collections::BTreeSet<Vec<String>> = (0..50)
            .map(|i| list(Order::Shuffle, &format!("c{i}"), &NAMES))
            .collect();
        assert!(distinct.len() > 40);
    }

    #[test]
    fn a_cases_own_distractors_follow_the_shared_block() {
        let order = Order::default();
        let circle = Circle::of(order, 0, NAMES);
        let d = order.place(&circle, 0, "c", "zz_distractor", false);
        assert!(
            NAMES
                .iter()
                .all(|n| order.place(&circle, 0, "c", n, true) < d)
        );
        assert!(Order::Shuffle.place(&circle, 0, "c", "zz", false).0 == 0);
    }
}

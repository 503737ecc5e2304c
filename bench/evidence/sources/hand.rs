//! Hand-written edits (issue 42): `bench/evidence/hand_edits.toml`, description rewrites of the
//! held-out half's tools written the way a PR author writes them and labelled by hand before any
//! was measured. The generated benchmark (`edits.rs`) applies one template a kind; this set is the
//! check that its held-out numbers are not an artefact of the templates. Nothing is chosen on it.
//!
//! Each edit is judged as the generated ones are: `check` (default settings) of the edited set
//! against the untouched one; *caught* = the verdict is not a pass.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use driftgate::stress::edits::{self as kinds, Edit, Label};
use serde::Deserialize;
use serde_json::Value;

use super::edits::{self, Set};
use super::{Ctx, Rate, Section, cell, clip};

/// One line of the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandEdit {
    pub set: String,
    pub tool: String,
    pub label: String,
    pub kind: String,
    /// The whole new description.
    #[serde(default)]
    pub text: Option<String>,
    /// `[old, new]`, applied to the base description.
    #[serde(default)]
    pub replace: Option<[String; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    edit: Vec<HandEdit>,
}

/// One batch: a file written in one sitting before it was measured.
pub struct Batch {
    pub name: &'static str,
    pub file: &'static str,
    /// What has been chosen on it since.
    pub seen: &'static str,
    /// The section's rate names for it.
    pub recall: &'static str,
    pub false_alarms: &'static str,
}

/// Each batch is the held-out check of the change chosen on the one before it, and seen once a
/// change is chosen on it: `seen` says so, bench/evidence/preamble.md says which change.
pub const BATCHES: &[Batch] = &[
    Batch {
        name: "first",
        file: "hand_edits.toml",
        seen: "seen: two meaning-shift rules and the router's example rule were chosen on its false alarms",
        recall: "hand first recall",
        false_alarms: "hand first false alarms",
    },
    Batch {
        name: "second",
        file: "hand_edits.second.toml",
        seen: "seen: one more rule, and the router's example rule, were chosen on its false alarms",
        recall: "hand second recall",
        false_alarms: "hand second false alarms",
    },
    Batch {
        name: "third",
        file: "hand_edits.third.toml",
        seen: "seen: two more were changed on its false alarms",
        recall: "hand third recall",
        false_alarms: "hand third false alarms",
    },
    Batch {
        name: "fourth",
        file: "hand_edits.fourth.toml",
        seen: "seen: two more rules and the router's example rule were chosen on its false alarms and misses",
        recall: "hand fourth recall",
        false_alarms: "hand fourth false alarms",
    },
    Batch {
        name: "fifth",
        file: "hand_edits.fifth.toml",
        seen: "seen: the router's example rule was chosen on its false alarm",
        recall: "hand fifth recall",
        false_alarms: "hand fifth false alarms",
    },
    Batch {
        name: "sixth",
        file: "hand_edits.sixth.toml",
        seen: "seen: four rule changes were chosen on its false alarms",
        recall: "hand sixth recall",
        false_alarms: "hand sixth false alarms",
    },
    Batch {
        name: "seventh",
        file: "hand_edits.seventh.toml",
        seen: "seen: two rule changes were chosen on its false alarms",
        recall: "hand seventh recall",
        false_alarms: "hand seventh false alarms",
    },
    Batch {
        name: "eighth",
        file: "hand_edits.eighth.toml",
        seen: "unseen: nothing chosen on it",
        recall: "hand eighth recall",
        false_alarms: "hand eighth false alarms",
    },
    Batch {
        name: "ninth",
        file: "hand_edits.ninth.toml",
        seen: "unseen: nothing chosen on it",
        recall: "hand ninth recall",
        false_alarms: "hand ninth false alarms",
    },
];

/// Written and not yet measured, in the order they will be: the first is the held-out check kept
/// for the next change chosen on the last batch, the next for the change after. Only parsed
/// (labels and kinds checked), never judged, until each joins `BATCHES`.
pub const RESERVES: &[&str] = &["hand_edits.tenth.toml"];

pub fn file(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bench/evidence")
        .join(name)
}

/// Every hand-written edit with its batch, in batch and file order.
pub fn load() -> Result<Vec<(&'static str, HandEdit)>> {
    let mut out = Vec::new();
    for b in BATCHES {
        out.extend(read(b.file)?.into_iter().map(|e| (b.name, e)));
    }
    Ok(out)
}

/// One file's edits, each label and kind checked against the benchmark's vocabulary.
pub fn read(name: &str) -> Result<Vec<HandEdit>> {
    let path = file(name);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let f: File = toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
    for e in &f.edit {
        e.kind().with_context(|| format!("{}", path.display()))?;
    }
    Ok(f.edit)
}

impl HandEdit {
    /// Its label and kind, checked against the benchmark's vocabulary.
    fn kind(&self) -> Result<(Label, &'static str)> {
        let (label, list) = match self.label.as_str() {
            "changing" => (Label::Changing, kinds::CHANGING),
            "preserving" => (Label::Preserving, kinds::PRESERVING),
            other => bail!("{}/{}: label {other:?}", self.set, self.tool),
        };
        let kind = *list.iter().find(|k| **k == self.kind).with_context(|| {
            format!(
                "{}/{}: kind {:?} under {}",
                self.set, self.tool, self.kind, self.label
            )
        })?;
        Ok((label, kind))
    }

    /// The edit against its tool's base description: its label and kind checked against the
    /// benchmark's vocabulary, a `replace` checked to apply.
    pub fn resolve(&self, base: &str) -> Result<Edit> {
        let (label, kind) = self.kind()?;
        let new = match (&self.text, &self.replace) {
            (Some(t), None) => t.clone(),
            (None, Some([old, new])) => {
                if !base.contains(old.as_str()) {
                    bail!(
                        "{}/{}: {old:?} is not in the base description",
                        self.set,
                        self.tool
                    );
                }
                base.replacen(old.as_str(), new, 1)
            }
            _ => bail!(
                "{}/{}: give exactly one of `text`, `replace`",
                self.set,
                self.tool
            ),
        };
        if new.trim() == base.trim() {
            bail!("{}/{}: the edit changes nothing", self.set, self.tool);
        }
        Ok(Edit {
            kind,
            label,
            old: base.to_string(),
            new,
            detail: "hand-written".to_string(),
        })
    }
}

/// Every edit of `batches` whose set this run loads (the hermetic slice leaves Azure out),
/// resolved against its tool's base description: (batch, set, tool, edit).
pub fn jobs<'s>(
    sets: &'s [Set],
    batches: &[&str],
) -> Result<Vec<(&'static str, &'s Set, String, Edit)>> {
    let mut jobs = Vec::new();
    for (batch, h) in load()?.into_iter().filter(|(b, _)| batches.contains(b)) {
        if !edits::SETS.contains(&h.set.as_str()) {
            bail!("{batch} batch: no set {:?} in the benchmark", h.set);
        }
        let Some(set) = sets.iter().find(|s| s.name == h.set) else {
            continue;
        };
        let base = set
            .tools
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["name"] == h.tool.as_str())
            .with_context(|| format!("{}: no tool {:?}", h.set, h.tool))?["description"]
            .as_str()
            .unwrap_or("")
            .to_string();
        jobs.push((batch, set, h.tool.clone(), h.resolve(&base)?));
    }
    Ok(jobs)
}

/// Every edit whose set this run loads, judged.
pub fn rows(ctx: &Ctx) -> Result<Vec<Value>> {
    use rayon::prelude::*;
    let sets = edits::sets(ctx)?;
    let halves = edits::split(edits::SETS);
    let batches: Vec<&str> = BATCHES.iter().map(|b| b.name).collect();
    let jobs = jobs(&sets, &batches)?;
    eprintln!("evidence:   {} hand-written edits", jobs.len());
    jobs.par_iter()
        .enumerate()
        .map(|(i, (batch, set, tool, edit))| {
            let head = edits::with_description(&set.tools, tool, &edit.new);
            let run = edits::check(
                ctx,
                &format!("hand/{}/{i}", set.name),
                &set.tools,
                &head,
                &set.suite,
            )?;
            let mut row = edits::row(set.name, halves[set.name], tool, edit, &run);
            row["batch"] = Value::from(*batch);
            Ok(row)
        })
        .collect()
}

fn rate(rows: &[&Value], label: &str) -> Rate {
    let pick: Vec<&&Value> = rows.iter().filter(|r| r["label"] == label).collect();
    Rate::new(pick.iter().filter(|r| edits::caught(r)).count(), pick.len())
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let rows = rows(ctx)?;
    let mut md = String::from(
        "## Hand-written edits: the held-out check of the edit benchmark\n\n\
         Description rewrites of the held-out half's tools, written as a PR author writes them \
         (not by the benchmark's templates) and labelled by hand before any was measured, in \
         batches: `bench/evidence/hand_edits.toml` (the first, 2026-12-06), \
         `hand_edits.second.toml` to `hand_edits.ninth.toml` (2026-12-07, each by a writer \
         who had read neither the rules nor the other batches). Each batch is the held-out check of \
         the rule change chosen on the batch before it, and is seen once a change is chosen on it \
         (bench/evidence/preamble.md says which). `check` at default settings judges each against \
         the untouched set; \
         *caught* = the verdict is not a pass (fail or inconclusive).\n\n\
         | batch | set | meaning-changing caught (recall) | meaning-preserving caught (false alarms) |\n\
         |---|---|---|---|\n",
    );
    let mut rates = Vec::new();
    for b in BATCHES {
        let (batch, seen) = (b.name, b.seen);
        let mine: Vec<&Value> = rows.iter().filter(|r| r["batch"] == batch).collect();
        let mut by_set: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for r in &mine {
            by_set
                .entry(r["set"].as_str().unwrap_or(""))
                .or_default()
                .push(r);
        }
        for (set, rs) in &by_set {
            md.push_str(&format!(
                "| {batch} | {set} | {} | {} |\n",
                rate(rs, "changing").cell(),
                rate(rs, "preserving").cell()
            ));
        }
        md.push_str(&format!(
            "| **{batch}** ({seen}) | **all** | {} | {} |\n",
            rate(&mine, "changing").cell(),
            rate(&mine, "preserving").cell()
        ));
        rates.push((b.recall, rate(&mine, "changing")));
        rates.push((b.false_alarms, rate(&mine, "preserving")));
    }
    let mut reserves = Vec::new();
    for r in RESERVES {
        reserves.push(format!("`bench/evidence/{r}` ({} edits)", read(r)?.len()));
    }
    md.push_str(&format!(
        "\nKept **unmeasured**, written the same way by writers who had seen neither the rules \
         nor the other batches: {}. The first is the held-out check for the next change chosen \
         on the last batch (whose misses are read below), each next one for the change after.\n\n",
        reserves.join(", ")
    ));
    md.push_str(
        "Every edit, with the verdict and what decided it:\n\n\
         | batch | set | tool | label | kind | new description | verdict | decided by | reason |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let d = &r["decided_by"];
        let decided = match (d["metric"].as_str(), d["tool"].as_str()) {
            (Some(m), Some(t)) => format!("{m} of `{t}`"),
            _ => String::new(),
        };
        let right = (r["label"] == "changing") == edits::caught(r);
        md.push_str(&format!(
            "| {} | {} | `{}` | {} | {} | {} | {}{} | {} | {} |\n",
            r["batch"].as_str().unwrap_or(""),
            cell(r["set"].as_str().unwrap_or("")),
            cell(r["tool"].as_str().unwrap_or("")),
            r["label"].as_str().unwrap_or(""),
            r["kind"].as_str().unwrap_or(""),
            cell(&clip(r["new"].as_str().unwrap_or(""), 90)),
            r["verdict"].as_str().unwrap_or(""),
            if right { "" } else { " ✗" },
            cell(&decided),
            cell(&clip(r["reason"].as_str().unwrap_or(""), 110)),
        ));
    }
    md.push_str("\n✗ = the gate disagrees with the hand label.\n\n");
    Ok(vec![Section {
        id: "hand-edits",
        markdown: md,
        rates,
        rows,
    }])
}

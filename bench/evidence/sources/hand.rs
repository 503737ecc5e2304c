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

pub fn file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/evidence/hand_edits.toml")
}

/// Every hand-written edit, in file order.
pub fn load() -> Result<Vec<HandEdit>> {
    let path = file();
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let f: File = toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
    Ok(f.edit)
}

impl HandEdit {
    /// The edit against its tool's base description: its label and kind checked against the
    /// benchmark's vocabulary, a `replace` checked to apply.
    pub fn resolve(&self, base: &str) -> Result<Edit> {
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

/// Every edit whose set this run loads (the hermetic slice leaves Azure out), resolved against
/// its tool's base description: (set, tool, edit).
pub fn jobs(sets: &[Set]) -> Result<Vec<(&Set, String, Edit)>> {
    let mut jobs = Vec::new();
    for h in load()? {
        if !edits::SETS.contains(&h.set.as_str()) {
            bail!("{}: no set {:?} in the benchmark", file().display(), h.set);
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
        jobs.push((set, h.tool.clone(), h.resolve(&base)?));
    }
    Ok(jobs)
}

/// Every edit whose set this run loads, judged.
pub fn rows(ctx: &Ctx) -> Result<Vec<Value>> {
    use rayon::prelude::*;
    let sets = edits::sets(ctx)?;
    let halves = edits::split(edits::SETS);
    let jobs = jobs(&sets)?;
    eprintln!("evidence:   {} hand-written edits", jobs.len());
    jobs.par_iter()
        .enumerate()
        .map(|(i, (set, tool, edit))| {
            let head = edits::with_description(&set.tools, tool, &edit.new);
            let run = edits::check(
                ctx,
                &format!("hand/{}/{i}", set.name),
                &set.tools,
                &head,
                &set.suite,
            )?;
            Ok(edits::row(set.name, halves[set.name], tool, edit, &run))
        })
        .collect()
}

fn rate(rows: &[Value], label: &str) -> Rate {
    let pick: Vec<&Value> = rows.iter().filter(|r| r["label"] == label).collect();
    Rate::new(pick.iter().filter(|r| edits::caught(r)).count(), pick.len())
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let rows = rows(ctx)?;
    let mut md = String::from(
        "## Hand-written edits: the held-out check of the edit benchmark\n\n\
         `bench/evidence/hand_edits.toml`: description rewrites of the held-out half's tools, \
         written as a PR author writes them (not by the benchmark's templates) and labelled by \
         hand before any was measured; nothing was chosen on them. `check` at default settings \
         judges each against the untouched set; *caught* = the verdict is not a pass (fail or \
         inconclusive).\n\n\
         | set | meaning-changing caught (recall) | meaning-preserving caught (false alarms) |\n\
         |---|---|---|\n",
    );
    let mut by_set: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for r in &rows {
        by_set
            .entry(r["set"].as_str().unwrap_or(""))
            .or_default()
            .push(r.clone());
    }
    for (set, rs) in &by_set {
        md.push_str(&format!(
            "| {set} | {} | {} |\n",
            rate(rs, "changing").cell(),
            rate(rs, "preserving").cell()
        ));
    }
    md.push_str(&format!(
        "| **all** | {} | {} |\n\n",
        rate(&rows, "changing").cell(),
        rate(&rows, "preserving").cell()
    ));
    md.push_str(
        "Every edit, with the verdict and what decided it:\n\n\
         | set | tool | label | kind | new description | verdict | decided by | reason |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let d = &r["decided_by"];
        let decided = match (d["metric"].as_str(), d["tool"].as_str()) {
            (Some(m), Some(t)) => format!("{m} of `{t}`"),
            _ => String::new(),
        };
        let right = (r["label"] == "changing") == edits::caught(r);
        md.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {}{} | {} | {} |\n",
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
        rates: vec![
            ("hand recall", rate(&rows, "changing")),
            ("hand false alarms", rate(&rows, "preserving")),
        ],
        rows,
    }])
}

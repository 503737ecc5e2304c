//! A learned reader for the injection scan, tried and measured: a linear probe over the bundled
//! all-MiniLM-L6-v2 vector of each sentence an agent reads, fitted on one source of attacks and
//! measured on another it never saw. It is not shipped: on this evidence it does not separate
//! (docs/scan.md), and a proxy gates only where evidence says it separates.
//!
//! - **Fitted on ATR** (and our own): positives are ATR's true-positive and evasion strings
//!   (every category) and the spans this project's rule fixtures match; negatives are ATR's true
//!   negatives, this project's benign and rule-negative fixtures, and every sentence of the
//!   corpus's *training half* (servers split by sha256 of the directory name). Measured on
//!   MCP-SafetyBench, the corpus's other half, github-mcp-server's history, Azure MCP and
//!   MCPToolBench++'s tool files.
//! - **Fitted on MCP-SafetyBench** (the reverse): positives are the sentences its tasks
//!   introduce, negatives its base sentences and the corpus's training half. Measured on ATR.
//!
//! One procedure for both: class-balanced, L2-regularised logistic regression by full-batch Adam
//! from zero (deterministic); the threshold is the 99th percentile of the scores of the
//! training negatives' units (a definition's best sentence, an ATR string). Nothing is chosen
//! on a measured set.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use driftgate::cache::Cache;
use driftgate::canon::MacKey;
use driftgate::embed::{CachedEmbedder, Embedder, MiniLm};
use driftgate::injection::{ScanSection, normal};
use driftgate::tools::ToolSet;
use ndarray::{Array2, ArrayView1};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::injection::{self, AtrCase, Task};
use super::{Ctx, Rate, cell, read_json};

/// L2 penalty on the weights (not the bias).
const L2: f64 = 1e-3;
/// Gradient steps (Adam, full batch).
const STEPS: usize = 1500;
const LEARNING_RATE: f64 = 0.05;
/// At most this share of the training negatives' units scores at or above the threshold.
const NEGATIVE_QUANTILE: f64 = 0.99;
/// A sentence is cut to this many words (the model reads a bounded window).
const MAX_WORDS: usize = 64;
/// Fewer words is a fragment (a label), not an instruction.
const MIN_WORDS: usize = 3;

/// The bundled MiniLM, memoised on disk when the run has a cache directory.
struct Vectors {
    embedder: CachedEmbedder,
    rt: tokio::runtime::Runtime,
    memo: HashMap<String, Vec<f32>>,
}

impl Vectors {
    fn new(ctx: &Ctx) -> Result<Vectors> {
        let cache = Cache::with_key(
            ctx.cache.clone(),
            MacKey::derive(b"driftgate evidence bench embeddings"),
        );
        Ok(Vectors {
            embedder: CachedEmbedder::new(Box::new(MiniLm::new()), &cache),
            rt: tokio::runtime::Builder::new_current_thread().build()?,
            memo: HashMap::new(),
        })
    }

    /// One row per text, in order.
    fn of(&mut self, texts: &[String]) -> Result<Array2<f32>> {
        let missing: BTreeSet<&String> = texts
            .iter()
            .filter(|t| !self.memo.contains_key(*t))
            .collect();
        let missing: Vec<String> = missing.into_iter().cloned().collect();
        for chunk in missing.chunks(1024) {
            let m = self.rt.block_on(self.embedder.embed(chunk))?;
            for (t, row) in chunk.iter().zip(m.rows()) {
                self.memo.insert(t.clone(), row.to_vec());
            }
        }
        let mut out = Array2::<f32>::zeros((texts.len(), 384));
        for (i, t) in texts.iter().enumerate() {
            out.row_mut(i).assign(&ArrayView1::from(&self.memo[t]));
        }
        Ok(out)
    }
}

/// A fitted probe.
struct Probe {
    weights: Vec<f32>,
    bias: f32,
    threshold: f32,
    provenance: String,
}

impl Probe {
    fn scores(&self, vectors: &mut Vectors, texts: &[String]) -> Result<Vec<f32>> {
        let m = vectors.of(texts)?;
        Ok(m.rows()
            .into_iter()
            .map(|r| {
                let z = self.bias + r.iter().zip(&self.weights).map(|(x, w)| x * w).sum::<f32>();
                1.0 / (1.0 + (-z).exp())
            })
            .collect())
    }

    /// The best score of each unit (a unit is one or more sentences).
    fn unit_scores(&self, vectors: &mut Vectors, units: &[Vec<String>]) -> Result<Vec<f32>> {
        let texts: Vec<String> = units.iter().flatten().cloned().collect();
        let scores = self.scores(vectors, &texts)?;
        let by: HashMap<&str, f32> = texts.iter().map(String::as_str).zip(scores).collect();
        Ok(units
            .iter()
            .map(|u| u.iter().map(|t| by[t.as_str()]).fold(0f32, f32::max))
            .collect())
    }
}

/// Class-balanced, L2-regularised logistic regression, full-batch Adam from zero.
fn fit(x: &Array2<f32>, y: &[bool]) -> (Vec<f32>, f32) {
    let (n, dim) = x.dim();
    let pos = y.iter().filter(|&&b| b).count().max(1) as f64;
    let neg = (n as f64 - pos).max(1.0);
    // Each class weighs half of the loss.
    let weight: Vec<f64> = y
        .iter()
        .map(|&b| if b { 0.5 / pos } else { 0.5 / neg })
        .collect();
    let mut w = vec![0f64; dim + 1];
    let (mut m, mut v) = (vec![0f64; dim + 1], vec![0f64; dim + 1]);
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    for step in 1..=STEPS {
        let mut grad = vec![0f64; dim + 1];
        for (i, row) in x.rows().into_iter().enumerate() {
            let z = w[dim]
                + row
                    .iter()
                    .zip(&w)
                    .map(|(a, b)| f64::from(*a) * b)
                    .sum::<f64>();
            let p = 1.0 / (1.0 + (-z).exp());
            let err = (p - f64::from(u8::from(y[i]))) * weight[i];
            for (g, a) in grad.iter_mut().zip(row.iter()) {
                *g += err * f64::from(*a);
            }
            grad[dim] += err;
        }
        for j in 0..dim {
            grad[j] += L2 * w[j];
        }
        let (c1, c2) = (1.0 - b1.powi(step as i32), 1.0 - b2.powi(step as i32));
        for j in 0..=dim {
            m[j] = b1 * m[j] + (1.0 - b1) * grad[j];
            v[j] = b2 * v[j] + (1.0 - b2) * grad[j] * grad[j];
            w[j] -= LEARNING_RATE * (m[j] / c1) / ((v[j] / c2).sqrt() + eps);
        }
    }
    let bias = w[dim] as f32;
    (w[..dim].iter().map(|&a| a as f32).collect(), bias)
}

/// What a fitting reads: positive texts, and negative units.
#[derive(Default)]
struct Training {
    positives: Vec<String>,
    negatives: Vec<Vec<String>>,
    /// What went in, for the provenance line.
    said: Vec<String>,
}

impl Training {
    /// Every definition of the corpus's training half as a negative; how many.
    fn add_training_half(&mut self, corpus: &[Server]) -> Result<usize> {
        let mut defs = 0;
        for (name, held_out, sets) in corpus {
            if !held_out {
                let d = definitions(sets, name)?;
                defs += d.len();
                self.negatives.extend(d);
            }
        }
        Ok(defs)
    }

    /// Fit, and choose the threshold on the negatives' units.
    fn fit(&self, vectors: &mut Vectors, name: &str) -> Result<Probe> {
        let neg_texts: Vec<String> = self.negatives.iter().flatten().cloned().collect();
        if self.positives.is_empty() || neg_texts.is_empty() {
            bail!("{name}: nothing to fit ({})", self.said.join("; "));
        }
        let mut texts = self.positives.clone();
        texts.extend(neg_texts);
        let x = vectors.of(&texts)?;
        let mut y = vec![true; self.positives.len()];
        y.resize(texts.len(), false);
        let (weights, bias) = fit(&x, &y);
        let mut p = Probe {
            weights,
            bias,
            threshold: 0.5,
            provenance: String::new(),
        };
        let mut units = p.unit_scores(vectors, &self.negatives)?;
        units.sort_by(f32::total_cmp);
        let i = ((units.len() as f64) * NEGATIVE_QUANTILE).ceil() as usize;
        p.threshold = units[i.min(units.len() - 1)] + 1e-4;
        p.provenance = format!(
            "{name}: {}; threshold {:.3} = the {:.0}th percentile of the negatives' units",
            self.said.join("; "),
            p.threshold,
            NEGATIVE_QUANTILE * 100.0
        );
        Ok(p)
    }
}

/// Sentences of a normalised text: cut after `.`, `!`, `?` followed by a space and at line
/// breaks; fragments dropped, long sentences cut.
fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |s: &str| {
        let words: Vec<&str> = s.split_whitespace().collect();
        if words.len() >= MIN_WORDS {
            out.push(words[..words.len().min(MAX_WORDS)].join(" "));
        }
    };
    for line in text.split(['\n', '\r']) {
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|(_, n)| n.is_whitespace()) {
                push(&line[start..i + 1]);
                start = i + 1;
            }
        }
        push(&line[start..]);
    }
    out
}

/// A text as the probe reads it: its sentences, or the whole text when it has none.
fn units(text: &str) -> Vec<String> {
    let n = normal::normalise(text, false);
    let mut s = split(&n);
    if s.is_empty() && !n.trim().is_empty() {
        s.push(
            n.split_whitespace()
                .take(MAX_WORDS)
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    s
}

/// Every sentence of every string an agent reads in one tool (names aside).
fn sentences(tool: &driftgate::tools::Tool) -> Vec<String> {
    driftgate::injection::texts(tool)
        .into_iter()
        .filter(|(_, _, is_name)| !is_name)
        .flat_map(|(_, text, _)| split(&normal::normalise(&text, false)))
        .collect()
}

fn atr_text(c: &AtrCase) -> String {
    c.tool["description"].as_str().unwrap_or("").to_string()
}

/// One corpus server: its name, whether it is in the held-out half, its versions' tool lists.
type Server = (String, bool, Vec<Vec<Value>>);

/// The corpus by server, in directory order.
pub(super) fn corpus(ctx: &Ctx) -> Result<Vec<Server>> {
    let mut servers: Vec<_> = std::fs::read_dir(&ctx.corpus)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('_'))
        .collect();
    servers.sort();
    let mut out = Vec::new();
    for s in servers {
        let name = s.file_name().unwrap().to_string_lossy().into_owned();
        let mut versions: Vec<_> = std::fs::read_dir(&s)?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        versions.sort();
        let mut sets = Vec::new();
        for v in versions {
            if let Some(a) = read_json(&v)?.as_array() {
                sets.push(a.clone());
            }
        }
        let held_out = Sha256::digest(name.as_bytes())[0] % 2 == 1;
        out.push((name, held_out, sets));
    }
    Ok(out)
}

/// Each distinct definition's sentences in `sets` (definitions without one left out).
fn definitions(sets: &[Vec<Value>], label: &str) -> Result<Vec<Vec<String>>> {
    let mut seen = BTreeMap::new();
    for tools in sets {
        let set = ToolSet::from_array(tools, label, "").with_context(|| label.to_string())?;
        for t in &set.tools {
            seen.entry(serde_json::to_string(&t.to_value())?)
                .or_insert_with(|| sentences(t));
        }
    }
    Ok(seen.into_values().filter(|s| !s.is_empty()).collect())
}

/// This project's fixtures: (spans the rules match in the positives, definitions of the
/// negatives and benign fixtures).
fn own_fixtures() -> Result<(Vec<String>, Vec<Vec<String>>)> {
    let root = Path::new("tests/fixtures/scan");
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    let mut files = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("rules"))
        .with_context(|| root.join("rules").display().to_string())?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        files.push((d.join("positive.json"), true));
        files.push((d.join("negative.json"), false));
    }
    let mut benign: Vec<_> = std::fs::read_dir(root.join("benign"))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    benign.sort();
    files.extend(benign.into_iter().map(|b| (b, false)));
    for (p, positive) in files {
        let v = read_json(&p)?;
        let tools = v.get("tools").cloned().unwrap_or(v);
        let Some(a) = tools.as_array() else { continue };
        let set = ToolSet::from_array(a, &p.display().to_string(), "")?;
        if positive {
            pos.extend(
                driftgate::injection::scan(&set)
                    .into_iter()
                    .map(|f| f.matched)
                    .filter(|m| m.split_whitespace().count() >= MIN_WORDS),
            );
        } else {
            neg.extend(set.tools.iter().map(sentences).filter(|s| !s.is_empty()));
        }
    }
    Ok((pos, neg))
}

/// Fitted on ATR and our own, the corpus's training half.
fn on_atr(atr: &[AtrCase], corpus: &[Server]) -> Result<Training> {
    let mut t = Training::default();
    let (mut np, mut nn) = (0, 0);
    for c in atr {
        let u = units(&atr_text(c));
        if c.kind == "tn" {
            nn += 1;
            t.negatives.push(u);
        } else {
            np += 1;
            t.positives.extend(u);
        }
    }
    let (own_pos, own_neg) = own_fixtures()?;
    let (op, on) = (own_pos.len(), own_neg.len());
    t.positives.extend(own_pos);
    t.negatives.extend(own_neg);
    let defs = t.add_training_half(corpus)?;
    t.said = vec![
        format!(
            "positives: the sentences of {np} ATR true-positive and evasion strings, {op} spans \
             the rules match in this project's rule fixtures"
        ),
        format!(
            "negatives: {nn} ATR true-negative strings, {on} fixture definitions, {defs} \
             definitions of the corpus's training half"
        ),
    ];
    Ok(t)
}

/// Sentences a task's head shows that its base did not.
fn introduced(task: &Task) -> Result<Vec<String>> {
    let base = ToolSet::from_array(&task.base, &task.path, "")?;
    let head = ToolSet::from_array(&task.head, &task.path, "")?;
    let old: BTreeSet<String> = base
        .tools
        .iter()
        .flat_map(sentences)
        .map(|s| driftgate::injection::identity(&s))
        .collect();
    Ok(head
        .tools
        .iter()
        .flat_map(sentences)
        .filter(|s| !old.contains(&driftgate::injection::identity(s)))
        .collect())
}

/// Fitted on MCP-SafetyBench, the corpus's training half.
fn on_safetybench(tasks: &[Task], corpus: &[Server]) -> Result<Training> {
    let mut t = Training::default();
    let mut bases = BTreeSet::new();
    for task in tasks {
        t.positives.extend(introduced(task)?);
        let base = ToolSet::from_array(&task.base, &task.path, "")?;
        for tool in &base.tools {
            let s = sentences(tool);
            if !s.is_empty() && bases.insert(s.clone()) {
                t.negatives.push(s);
            }
        }
    }
    let (np, nb) = (t.positives.len(), t.negatives.len());
    let defs = t.add_training_half(corpus)?;
    t.said = vec![
        format!(
            "positives: {np} sentences introduced by {} MCP-SafetyBench tasks",
            tasks.len()
        ),
        format!(
            "negatives: {nb} base definitions of those tasks, {defs} definitions of the \
             corpus's training half"
        ),
    ];
    Ok(t)
}

#[derive(Default, Clone, Copy)]
struct Count {
    n: usize,
    rules: usize,
    probe: usize,
}

impl Count {
    fn add(&mut self, rules: bool, probe: bool) {
        self.n += 1;
        self.rules += usize::from(rules);
        self.probe += usize::from(probe);
    }
    fn row(self, label: &str) -> String {
        format!(
            "| {label} | {} | {} |\n",
            Rate::new(self.rules, self.n).cell(),
            Rate::new(self.probe, self.n).cell()
        )
    }
}

/// The probe's tables (needs ATR: without it, only a note).
pub fn section(ctx: &Ctx, rows: &mut Vec<Value>) -> Result<(String, Vec<(&'static str, Rate)>)> {
    let mut md = String::from(
        "### A learned reader, tried: a MiniLM probe fitted on one source, read on another\n\n\
         Logistic regression over the bundled MiniLM vector of each sentence \
         (`bench/evidence/sources/probe.rs`; fitted in this run, nothing chosen on a measured \
         set). Not shipped: the tables below are why. *Rules* = the scan's rules flag the unit \
         (any level); *probe* = a sentence scores at or above the probe's threshold.\n\n",
    );
    let Some(dir) = &ctx.atr else {
        md.push_str("ATR was not fetched in this run: the probe is fitted on it.\n\n");
        return Ok((md, Vec::new()));
    };
    let mut vectors = Vectors::new(ctx)?;
    let atr = injection::atr_cases(ctx, dir)?;
    let corpus = corpus(ctx)?;
    let tasks = injection::tasks(ctx)?;
    let mut rates = Vec::new();

    let probe = on_atr(&atr, &corpus)?.fit(&mut vectors, "fitted on ATR")?;
    md.push_str(&format!(
        "**Fitted on ATR, read on MCP-SafetyBench and real definitions** ({}).\n\n\
         | units | rules | probe |\n|---|---|---|\n",
        cell(&probe.provenance)
    ));
    let mut sb = [Count::default(); 2];
    for t in &tasks {
        let base = ToolSet::from_array(&t.base, &t.path, "")?;
        let head = ToolSet::from_array(&t.head, &t.path, "")?;
        let rules = !ScanSection::delta(&base, &head, &[]).introduced.is_empty();
        let new = introduced(t)?;
        let best = probe
            .unit_scores(&mut vectors, std::slice::from_ref(&new))?
            .first()
            .copied()
            .unwrap_or(0.0);
        sb[usize::from(t.held_out)].add(rules, best >= probe.threshold);
        rows.push(
            json!({"source": "probe", "fitted_on": "atr", "task": t.path,
                         "category": t.category, "rules": rules, "best": best}),
        );
    }
    md.push_str(&sb[0].row("MCP-SafetyBench tasks, seen half (rules read it)"));
    md.push_str(&sb[1].row("MCP-SafetyBench tasks, held-out half"));
    let both = Rate::new(sb[0].probe + sb[1].probe, sb[0].n + sb[1].n);
    rates.push(("safetybench probe flagged (fitted on atr)", both));
    let mut sets: Vec<(String, Vec<Vec<Value>>)> = vec![(
        "the corpus, held-out half".into(),
        corpus
            .iter()
            .filter(|(_, h, _)| *h)
            .flat_map(|(_, _, s)| s.clone())
            .collect(),
    )];
    for (name, s) in injection::benign_sets(ctx)? {
        if !name.starts_with("the corpus") {
            sets.push((name.to_string(), s));
        }
    }
    let mut benign = Count::default();
    for (name, s) in &sets {
        let defs = definitions(s, name)?;
        let scores = probe.unit_scores(&mut vectors, &defs)?;
        let mut c = Count::default();
        for (d, p) in defs.iter().zip(scores) {
            let flagged = p >= probe.threshold;
            c.add(false, flagged);
            benign.add(false, flagged);
            if flagged {
                rows.push(
                    json!({"source": "probe", "fitted_on": "atr", "benign": name,
                                 "sentences": d, "best": p}),
                );
            }
        }
        md.push_str(&format!(
            "| {name}: definitions (flagged = false alarm) | — | {} |\n",
            Rate::new(c.probe, c.n).cell()
        ));
    }
    rates.push((
        "benign probe flagged (fitted on atr)",
        Rate::new(benign.probe, benign.n),
    ));
    md.push('\n');

    let reverse =
        on_safetybench(&tasks, &corpus)?.fit(&mut vectors, "fitted on MCP-SafetyBench")?;
    md.push_str(&format!(
        "**Fitted on MCP-SafetyBench, read on ATR** ({}). Evasions are strings written to slip \
         past ATR's own rules.\n\n| ATR strings | rules | probe |\n|---|---|---|\n",
        cell(&reverse.provenance)
    ));
    let mut tab: BTreeMap<(&str, bool), Count> = BTreeMap::new();
    let all_units: Vec<Vec<String>> = atr.iter().map(|c| units(&atr_text(c))).collect();
    let scores = reverse.unit_scores(&mut vectors, &all_units)?;
    for (c, p) in atr.iter().zip(scores) {
        let set = ToolSet::from_array(std::slice::from_ref(&c.tool), "atr", "")?;
        let rules = !driftgate::injection::scan(&set).is_empty();
        tab.entry((c.kind, c.category == "tool-poisoning"))
            .or_default()
            .add(rules, p >= reverse.threshold);
    }
    for ((kind, tool), c) in &tab {
        let what = match *kind {
            "tp" => "true positives",
            "tn" => "true negatives (flagged = false alarm)",
            _ => "evasions",
        };
        let scope = if *tool {
            "tool-poisoning"
        } else {
            "other categories"
        };
        md.push_str(&c.row(&format!("{scope}, {what}")));
    }
    md.push('\n');
    let get = |k: &str| tab.get(&(k, true)).copied().unwrap_or_default();
    rates.push((
        "atr tool-poisoning probe flagged (fitted on safetybench)",
        Rate::new(get("tp").probe, get("tp").n),
    ));
    rates.push((
        "atr tool-poisoning true negatives probe flagged (fitted on safetybench)",
        Rate::new(get("tn").probe, get("tn").n),
    ));
    Ok((md, rates))
}

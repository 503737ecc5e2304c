//! Confusable pairs: tools of one server that an agent cannot tell apart.
//!
//! Three stages per pair, cheapest first:
//! 1. **Schema gate.** If the arguments meant for one tool cannot satisfy the other, the model
//!    has to pick by arguments, and text similarity is beside the point: the pair is dropped.
//! 2. **Affinity.** Name (edit distance, shared leading/trailing tokens, shared name terms weighted
//!    by rarity on this server), description words that are not the server's domain vocabulary,
//!    and the embedding cosine of the two descriptions.
//! 3. **Veto** ([`crate::text::verbs`]): opposing verbs (`read_x` / `write_x`), a reading against a
//!    mutating leading verb (`get_x` / `update_x`), or `readOnlyHint` true against false: such a
//!    pair is never confusable, whatever its score.
//!
//! Pairs above the threshold are flagged. Pairs the gate dropped but whose names say "the same
//! action at another scope" (`read_file` / `read_multiple_files`) become a lower-severity note.

use std::collections::BTreeSet;

use ndarray::Array2;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::embed::cosine;
use crate::text::terms::{self, name_terms, text_terms};
use crate::text::verbs;
use crate::tools::{Tool, ToolSet};

/// How the affinity parts are mixed, and where flagging starts. Tuned on the corpus: on every
/// 14-tool server-filesystem release the four known confusable pairs score above the threshold
/// and every other pair below it, with the gap pinned in `tests/lint.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Weights {
    pub name: f64,
    pub description: f64,
    pub embedding: f64,
    pub threshold: f64,
}

/// With the bundled embedding model (the default). The name carries most of the weight: what an
/// agent sees first, and on one server the descriptions share the domain vocabulary.
pub const WITH_EMBEDDING: Weights = Weights {
    name: 0.55,
    description: 0.15,
    embedding: 0.30,
    threshold: 0.40,
};

/// Without embeddings (`--no-embed`): words only.
pub const WITHOUT_EMBEDDING: Weights = Weights {
    name: 0.70,
    description: 0.30,
    embedding: 0.0,
    threshold: 0.39,
};

/// Mix of the name measures. Shared leading and trailing tokens weigh most: confusable names keep
/// both the action and the object and differ in a modifier (`read_text_file` / `read_media_file`),
/// while names that share only one end usually do different things (`create_directory` /
/// `list_directory`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NameParts {
    pub edit: f64,
    pub ends: f64,
    pub terms: f64,
}

pub const NAME_PARTS: NameParts = NameParts {
    edit: 0.30,
    ends: 0.45,
    terms: 0.25,
};

/// A first name token shared by at least this share of a server's tools (with at least
/// [`NAMESPACE_MIN_TOOLS`] tools) is a namespace (`git_`, `browser_`), not an action: it is set
/// aside before names are compared. A known verb is never a namespace: half of a server's tools
/// may well start with `get_`.
pub const NAMESPACE_SHARE: f64 = 0.8;
pub const NAMESPACE_MIN_TOOLS: usize = 3;

/// Why a pair passed or failed the schema gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gate {
    pub substitutable: bool,
    /// Required parameters of both, when substitutable; else the first reason it is not.
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Affinity {
    /// Combined name affinity in [0, 1] and its parts: edit similarity, shared leading and
    /// trailing tokens (each over the shorter name), rare shared terms.
    pub name: f64,
    pub name_edit: f64,
    pub name_prefix: f64,
    pub name_suffix: f64,
    pub name_terms: f64,
    /// TF-IDF cosine of the descriptions, domain words weighed down.
    pub description: f64,
    /// Embedding cosine of the descriptions (absent without an embedder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<f64>,
}

/// Why a pair can never be confusable, however alike it looks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Veto {
    /// Opposite actions from [`verbs::OPPOSING_VERBS`] (`read` / `write`).
    OpposingVerbs { verbs: [String; 2] },
    /// One name leads with a reading verb, the other with a mutating one (`get` / `update`).
    ReadVersusWrite { verbs: [String; 2] },
    /// The server itself says one only reads (`readOnlyHint: true`) and the other does not.
    ReadOnlyHint { read_only: String },
}

impl Veto {
    pub fn describe(&self) -> String {
        match self {
            Veto::OpposingVerbs { verbs } => format!("opposing verbs {}/{}", verbs[0], verbs[1]),
            Veto::ReadVersusWrite { verbs } => {
                format!("reads vs writes ({}/{})", verbs[0], verbs[1])
            }
            Veto::ReadOnlyHint { read_only } => {
                format!("only `{read_only}` is annotated readOnlyHint: true")
            }
        }
    }
}

/// Everything known about one pair that passed the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub score: f64,
    pub flagged: bool,
    pub gate: Gate,
    pub affinity: Affinity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub veto: Option<Veto>,
}

/// A pair the gate dropped whose names read as the same action at another scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScopeNote {
    pub a: String,
    pub b: String,
    /// Name terms only one of the two has (the scope words, e.g. `multiple`).
    pub extra_terms: Vec<String>,
    pub gate: Gate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairAnalysis {
    pub weights: Weights,
    /// The namespace token set aside before comparing names, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub total_pairs: usize,
    pub dropped_by_gate: usize,
    pub vetoed: usize,
    /// Pairs that passed the gate, highest score first.
    pub scored: Vec<Pair>,
    pub scope_notes: Vec<ScopeNote>,
}

impl PairAnalysis {
    pub fn flagged(&self) -> impl Iterator<Item = &Pair> {
        self.scored.iter().filter(|p| p.flagged)
    }
}

/// Index entries and pairs lint examines at most in a set of more than [`ALWAYS_PAIRED_TOOLS`]:
/// the candidate index makes the work follow the pairs that can pass the schema gate, and those
/// are the output, so a set where almost every pair passes (thousands of tools that require
/// nothing) is refused with this number instead of running out of memory: at most twice the pairs
/// the old limit allowed (all 2,000 × 1,999 / 2 of 2,000 tools that require nothing).
pub const MAX_PAIR_WORK: usize = 4_000_000;

/// Sets this small are always analysed, whatever their pairs cost (the limit lint had when it
/// scored every pair).
pub const ALWAYS_PAIRED_TOOLS: usize = 2_000;

/// A tool set whose candidate pairs exceed [`MAX_PAIR_WORK`].
#[derive(Debug, Clone, PartialEq)]
pub struct TooManyPairs {
    pub tools: usize,
}

impl std::fmt::Display for TooManyPairs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "lint scores the pairs of tools whose arguments are compatible and examines at most \
             {MAX_PAIR_WORK}; these {} tools have more (most of them take the same arguments, or \
             none)",
            self.tools
        )
    }
}

/// The pairs of a tool set worth visiting, from [`candidates`].
#[derive(Debug, Clone, PartialEq)]
pub struct Candidates(Vec<(usize, usize)>);

impl Candidates {
    /// Index `tools`; a set of more than [`ALWAYS_PAIRED_TOOLS`] whose candidates cost more than
    /// [`MAX_PAIR_WORK`] is refused.
    pub fn find(tools: &ToolSet) -> Result<Candidates, TooManyPairs> {
        let budget = if tools.len() <= ALWAYS_PAIRED_TOOLS {
            usize::MAX
        } else {
            MAX_PAIR_WORK
        };
        let (names, _) = server_names(&tools.tools);
        candidates(&tools.tools, &names, budget)
            .map(Candidates)
            .ok_or(TooManyPairs { tools: tools.len() })
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Analyse every pair of `tools`. `embeddings` holds one row per tool (its description), in
/// `tools` order; `threshold` overrides the weights' own. Only the `candidates` of `tools` are
/// visited: every other pair is one the schema gate drops without a scope note, so it is only
/// counted.
pub fn analyse(
    tools: &ToolSet,
    candidates: &Candidates,
    embeddings: Option<&Array2<f32>>,
    threshold: Option<f64>,
) -> PairAnalysis {
    let mut scan = Scan::new(tools, embeddings, threshold);
    let mut passed = 0;
    for &(i, j) in &candidates.0 {
        passed += usize::from(scan.visit(i, j));
    }
    scan.finish(passed)
}

/// Name and description-word affinity, and the veto, of any pairs `(i, j)` of `tools` — not only
/// those the schema gate passes: the shadowing check asks about pairs whose arguments differ by
/// construction. Weighted as a words-only pair score (the embedding is the caller's).
pub fn word_affinity(tools: &ToolSet, pairs: &[(usize, usize)]) -> Vec<(f64, Option<Veto>)> {
    let scan = Scan::new(tools, None, None);
    let w = WITHOUT_EMBEDDING;
    pairs
        .iter()
        .map(|&(i, j)| {
            let words = scan.words(i, j);
            let (a, b) = (&scan.ts[i], &scan.ts[j]);
            (
                round4(w.name * words.name + w.description * words.description),
                veto(a, b, &scan.names[i], &scan.names[j]),
            )
        })
        .collect()
}

/// Each tool's name terms, the server's namespace set aside (see [`namespace`]).
fn server_names(ts: &[Tool]) -> (Vec<Vec<String>>, Option<String>) {
    let mut names: Vec<Vec<String>> = ts.iter().map(|t| name_terms(&t.name)).collect();
    let namespace = namespace(&names);
    if let Some(ns) = &namespace {
        for n in names.iter_mut().filter(|n| n.len() > 1 && n[0] == *ns) {
            n.remove(0);
        }
    }
    (names, namespace)
}

/// The state of one analysis: per-tool terms and weights, and the output so far.
struct Scan<'a> {
    ts: &'a [Tool],
    embeddings: Option<&'a Array2<f32>>,
    names: Vec<Vec<String>>,
    descs: Vec<Vec<String>>,
    name_w: terms::Idf,
    desc_w: terms::Idf,
    out: PairAnalysis,
}

/// The word measures of one pair: the name's parts, their blend, and the description cosine.
struct Words {
    edit: f64,
    prefix: f64,
    suffix: f64,
    terms: f64,
    name: f64,
    description: f64,
}

impl<'a> Scan<'a> {
    fn new(
        tools: &'a ToolSet,
        embeddings: Option<&'a Array2<f32>>,
        threshold: Option<f64>,
    ) -> Self {
        let mut weights = if embeddings.is_some() {
            WITH_EMBEDDING
        } else {
            WITHOUT_EMBEDDING
        };
        if let Some(t) = threshold {
            weights.threshold = t;
        }
        let ts = &tools.tools;
        let (names, namespace) = server_names(ts);
        let descs: Vec<Vec<String>> = ts
            .iter()
            .map(|t| text_terms(t.description_text()))
            .collect();
        let name_w = terms::Idf::of(&names);
        let desc_w = terms::Idf::of(&descs);
        Scan {
            ts,
            embeddings,
            names,
            descs,
            name_w,
            desc_w,
            out: PairAnalysis {
                weights,
                namespace,
                total_pairs: ts.len() * ts.len().saturating_sub(1) / 2,
                dropped_by_gate: 0,
                vetoed: 0,
                scored: Vec::new(),
                scope_notes: Vec::new(),
            },
        }
    }

    /// Name affinity (and its parts) and description-word cosine of the pair.
    fn words(&self, i: usize, j: usize) -> Words {
        let names = &self.names;
        let edit = edit_similarity(&names[i], &names[j]);
        let (prefix, suffix) = affixes(&names[i], &names[j]);
        let terms = terms::weighted_jaccard(&names[i], &names[j], &self.name_w);
        let name = NAME_PARTS.edit * edit
            + NAME_PARTS.ends * (prefix + suffix).min(1.0)
            + NAME_PARTS.terms * terms;
        let description = terms::tfidf_cosine(&self.descs[i], &self.descs[j], &self.desc_w);
        Words {
            edit,
            prefix,
            suffix,
            terms,
            name,
            description,
        }
    }

    /// Gate, score or note the pair `i < j`; true when it passed the gate. Pairs must come in
    /// ascending order: scope notes are kept in the order they are found.
    fn visit(&mut self, i: usize, j: usize) -> bool {
        let (ts, names) = (self.ts, &self.names);
        let weights = self.out.weights;
        let (a, b) = (&ts[i], &ts[j]);
        let gate = gate(a, b);
        if !gate.substitutable {
            if let Some(extra) = scope_extra(&names[i], &names[j])
                && veto(a, b, &names[i], &names[j]).is_none()
            {
                self.out.scope_notes.push(ScopeNote {
                    a: a.name.clone(),
                    b: b.name.clone(),
                    extra_terms: extra,
                    gate,
                });
            }
            return false;
        }
        let w = self.words(i, j);
        let (names, out) = (&self.names, &mut self.out);
        let embedding = self.embeddings.map(|e| {
            if a.description_text().trim().is_empty() || b.description_text().trim().is_empty() {
                0.0
            } else {
                f64::from(cosine(e.row(i), e.row(j)))
            }
        });
        let score = weights.name * w.name
            + weights.description * w.description
            + weights.embedding * embedding.unwrap_or(0.0);
        let veto = veto(a, b, &names[i], &names[j]);
        if veto.is_some() {
            out.vetoed += 1;
        }
        out.scored.push(Pair {
            a: a.name.clone(),
            b: b.name.clone(),
            score: round4(score),
            flagged: veto.is_none() && score >= weights.threshold,
            gate,
            affinity: Affinity {
                name: round4(w.name),
                name_edit: round4(w.edit),
                name_prefix: round4(w.prefix),
                name_suffix: round4(w.suffix),
                name_terms: round4(w.terms),
                description: round4(w.description),
                embedding: embedding.map(round4),
            },
            veto,
        });
        true
    }

    /// Every pair not visited failed the gate without a note: `passed` of all passed.
    fn finish(mut self, passed: usize) -> PairAnalysis {
        self.out.dropped_by_gate = self.out.total_pairs - passed;
        self.out.scored.sort_by(|x, y| {
            y.score
                .total_cmp(&x.score)
                .then_with(|| (&x.a, &x.b).cmp(&(&y.a, &y.b)))
        });
        self.out
    }
}

// ---- candidate index ----------------------------------------------------------------------------

/// The pairs `(i, j)`, `i < j`, ascending, that can pass the schema gate or carry a scope note;
/// `None` when finding them would examine more than `budget` entries and pairs.
///
/// - Gate: a pair passes only if each tool has a property for every parameter the other requires.
///   Tools that require nothing pass with each other (all those pairs are output). A tool that
///   requires something is looked up in the index property name → tools, through its rarest
///   required parameter: only those tools can take its arguments.
/// - Scope note: the shorter name's terms are all in the longer one's, with the same first term.
///   A name is looked up in the index name term → tools through its rarest term.
///
/// The work is the index entries scanned: a tool's rarest required parameter (or name term) is
/// shared by few tools unless most of them pass, so it follows the output.
fn candidates(ts: &[Tool], names: &[Vec<String>], budget: usize) -> Option<Vec<(usize, usize)>> {
    let mut work = 0usize;
    let mut spend = |n: usize| {
        work = work.saturating_add(n);
        (work <= budget).then_some(())
    };
    let required: Vec<Vec<String>> = ts.iter().map(required).collect();
    let mut by_property: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, t) in ts.iter().enumerate() {
        if let Some(ps) = t.input_schema.get("properties").and_then(Value::as_object) {
            for p in ps.keys() {
                by_property.entry(p.as_str()).or_default().push(i);
            }
        }
    }
    let mut out = Vec::new();
    let free: Vec<usize> = (0..ts.len()).filter(|&i| required[i].is_empty()).collect();
    spend(free.len() * free.len().saturating_sub(1) / 2)?;
    for (k, &i) in free.iter().enumerate() {
        out.extend(free[k + 1..].iter().map(|&j| (i, j)));
    }
    for (i, req) in required.iter().enumerate() {
        let Some(rarest) = req
            .iter()
            .map(|p| by_property.get(p.as_str()).map_or(&[][..], Vec::as_slice))
            .min_by_key(|l| l.len())
        else {
            continue;
        };
        spend(rarest.len())?;
        for &j in rarest {
            // A pair of two tools that require something is found from both; keep it once.
            if j == i || (!required[j].is_empty() && j < i) {
                continue;
            }
            if req.iter().all(|p| property(&ts[j], p).is_some()) {
                out.push((i.min(j), i.max(j)));
            }
        }
    }
    let mut by_term: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, n) in names.iter().enumerate() {
        for t in n.iter().collect::<BTreeSet<_>>() {
            by_term.entry(t.as_str()).or_default().push(i);
        }
    }
    for (i, n) in names.iter().enumerate() {
        let Some(rarest) = n
            .iter()
            .map(|t| by_term[t.as_str()].as_slice())
            .min_by_key(|l| l.len())
        else {
            continue;
        };
        spend(rarest.len())?;
        for &j in rarest {
            if j != i && names[j].first() == n.first() && n.iter().all(|t| names[j].contains(t)) {
                out.push((i.min(j), i.max(j)));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The server-wide leading token, when enough tools share it (see [`NAMESPACE_SHARE`]).
fn namespace(names: &[Vec<String>]) -> Option<String> {
    if names.len() < NAMESPACE_MIN_TOOLS {
        return None;
    }
    let mut counts: std::collections::BTreeMap<&String, usize> = Default::default();
    for n in names.iter().filter(|n| n.len() > 1) {
        *counts.entry(&n[0]).or_default() += 1;
    }
    let (token, k) = counts.into_iter().max_by_key(|(_, k)| *k)?;
    let verb = verbs::READING_VERBS.contains(&token.as_str())
        || verbs::MUTATING_VERBS.contains(&token.as_str());
    (!verb && k as f64 >= NAMESPACE_SHARE * names.len() as f64).then(|| token.clone())
}

fn read_only(t: &Tool) -> Option<bool> {
    t.annotations.as_ref()?.get("readOnlyHint")?.as_bool()
}

fn veto(a: &Tool, b: &Tool, na: &[String], nb: &[String]) -> Option<Veto> {
    if let Some((x, y)) = verbs::opposed(na, nb) {
        return Some(Veto::OpposingVerbs { verbs: [x, y] });
    }
    if let Some((x, y)) = verbs::effect_differs(na, nb) {
        return Some(Veto::ReadVersusWrite { verbs: [x, y] });
    }
    match (read_only(a), read_only(b)) {
        (Some(true), Some(false)) => Some(Veto::ReadOnlyHint {
            read_only: a.name.clone(),
        }),
        (Some(false), Some(true)) => Some(Veto::ReadOnlyHint {
            read_only: b.name.clone(),
        }),
        _ => None,
    }
}

// ---- schema gate --------------------------------------------------------------------------------

fn required(t: &Tool) -> Vec<String> {
    let mut seen = BTreeSet::new();
    t.input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .filter(|s| seen.insert(s.to_string()))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn property<'a>(t: &'a Tool, name: &str) -> Option<&'a Value> {
    t.input_schema.get("properties")?.get(name)
}

/// The JSON types a property schema admits; empty when it does not say (then anything goes).
fn types(s: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    match s.get("type") {
        Some(Value::String(t)) => {
            out.insert(t.clone());
        }
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str).map(String::from)),
        _ => {
            for key in ["anyOf", "oneOf"] {
                if let Some(branches) = s.get(key).and_then(Value::as_array) {
                    let bt: Vec<BTreeSet<String>> = branches.iter().map(types).collect();
                    // A branch without a type admits anything, so the union does too.
                    if bt.iter().any(BTreeSet::is_empty) {
                        return BTreeSet::new();
                    }
                    out.extend(bt.into_iter().flatten());
                }
            }
        }
    }
    // An integer is a number; a number argument may well be integral.
    if out.contains("integer") {
        out.insert("number".into());
    }
    if out.contains("number") {
        out.insert("integer".into());
    }
    out
}

fn compatible(x: &Value, y: &Value) -> bool {
    let (a, b) = (types(x), types(y));
    a.is_empty() || b.is_empty() || !a.is_disjoint(&b)
}

/// Can arguments valid for one tool satisfy the other? Every parameter either one requires must
/// be a parameter of the other with a compatible type; otherwise the model picks by arguments.
pub fn gate(a: &Tool, b: &Tool) -> Gate {
    let (ra, rb) = (required(a), required(b));
    for (x, y, rx) in [(a, b, &ra), (b, a, &rb)] {
        for p in rx {
            let Some(py) = property(y, p) else {
                return Gate {
                    substitutable: false,
                    detail: format!(
                        "`{}` requires `{p}`, which `{}` does not take",
                        x.name, y.name
                    ),
                };
            };
            let px = property(x, p).unwrap_or(&Value::Null);
            if !compatible(px, py) {
                return Gate {
                    substitutable: false,
                    detail: format!(
                        "`{p}` is {} in `{}` but {} in `{}`",
                        type_text(px),
                        x.name,
                        type_text(py),
                        y.name
                    ),
                };
            }
        }
    }
    let mut req: Vec<String> = ra
        .into_iter()
        .chain(rb)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    req.sort();
    Gate {
        substitutable: true,
        detail: if req.is_empty() {
            "neither requires a parameter".into()
        } else {
            format!("both accept the required {}", list(&req))
        },
    }
}

fn type_text(s: &Value) -> String {
    match s.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ if types(s).is_empty() => "untyped".into(),
        _ => types(s).into_iter().collect::<Vec<_>>().join("|"),
    }
}

fn list(xs: &[String]) -> String {
    xs.iter()
        .map(|x| format!("`{x}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---- name affinity ------------------------------------------------------------------------------

/// 1 − Levenshtein / longer length, over the normalised names (`readFile` = `read_file`).
fn edit_similarity(a: &[String], b: &[String]) -> f64 {
    let (x, y) = (a.join("_"), b.join("_"));
    let longest = x.chars().count().max(y.chars().count());
    if longest == 0 {
        return 0.0;
    }
    1.0 - strsim::levenshtein(&x, &y) as f64 / longest as f64
}

/// Shared leading and shared trailing tokens, each over the shorter name's token count.
/// Identical term lists (`readFile` / `read_file`) share everything.
fn affixes(a: &[String], b: &[String]) -> (f64, f64) {
    let shortest = a.len().min(b.len());
    if shortest == 0 {
        return (0.0, 0.0);
    }
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let n = shortest as f64;
    (pre as f64 / n, suf as f64 / n)
}

/// When one name's terms are the other's plus scope words, with the same leading action
/// (`read_file` ⊂ `read_multiple_files`), the words only the longer one has.
fn scope_extra(a: &[String], b: &[String]) -> Option<Vec<String>> {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() || short.first() != long.first() {
        return None;
    }
    let sl: BTreeSet<&String> = long.iter().collect();
    if !short.iter().all(|t| sl.contains(t)) {
        return None;
    }
    let ss: BTreeSet<&String> = short.iter().collect();
    let extra: Vec<String> = long.iter().filter(|t| !ss.contains(t)).cloned().collect();
    (!extra.is_empty()).then_some(extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(v: Value) -> Tool {
        Tool::from_value(&v, "t", "").unwrap()
    }

    fn obj(props: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": props, "required": required})
    }

    fn set(tools: Vec<Value>) -> ToolSet {
        ToolSet::from_array(&tools, "t", "").unwrap()
    }

    /// Today's analysis by brute force: every pair visited, in order.
    fn all_pairs(tools: &ToolSet, e: Option<&Array2<f32>>, threshold: Option<f64>) -> PairAnalysis {
        let mut scan = Scan::new(tools, e, threshold);
        let n = tools.len();
        let mut passed = 0;
        for i in 0..n {
            for j in i + 1..n {
                passed += usize::from(scan.visit(i, j));
            }
        }
        scan.finish(passed)
    }

    /// The indexed analysis, checked against the brute force.
    fn run(tools: &ToolSet, e: Option<&Array2<f32>>, threshold: Option<f64>) -> PairAnalysis {
        let c = Candidates::find(tools).unwrap();
        let a = analyse(tools, &c, e, threshold);
        assert_eq!(a, all_pairs(tools, e, threshold));
        a
    }

    #[test]
    fn gate_needs_each_side_to_take_the_others_required_arguments() {
        let path = json!({"path": {"type": "string"}});
        let a = t(json!({"name": "a", "inputSchema": obj(path.clone(), &["path"])}));
        let b = t(
            json!({"name": "b", "inputSchema": obj(json!({"path": {"type": "string"},
            "head": {"type": "number"}}), &["path"])}),
        );
        assert!(
            gate(&a, &b).substitutable,
            "an extra optional argument is fine"
        );
        assert_eq!(gate(&a, &b).detail, "both accept the required `path`");
        let c = t(
            json!({"name": "c", "inputSchema": obj(json!({"path": {"type": "string"},
            "content": {"type": "string"}}), &["path", "content"])}),
        );
        let g = gate(&a, &c);
        assert!(!g.substitutable);
        assert_eq!(g.detail, "`c` requires `content`, which `a` does not take");
        // The other side's optional parameter is enough: arguments for `c` satisfy `d`, and `d`'s
        // required `path` is among them.
        let d = t(
            json!({"name": "d", "inputSchema": obj(json!({"path": {"type": "string"},
            "content": {"type": "string"}}), &["path"])}),
        );
        assert!(gate(&c, &d).substitutable);
        let n = t(
            json!({"name": "n", "inputSchema": obj(json!({"path": {"type": "integer"}}), &["path"])}),
        );
        assert_eq!(
            gate(&a, &n).detail,
            "`path` is string in `a` but integer in `n`"
        );
        let none1 = t(json!({"name": "x"}));
        let none2 = t(json!({"name": "y"}));
        assert_eq!(gate(&none1, &none2).detail, "neither requires a parameter");
        assert!(!gate(&none1, &a).substitutable);
    }

    #[test]
    fn compatible_types_are_lenient_where_the_schema_is_silent() {
        let s = |v: Value| v;
        assert!(compatible(
            &s(json!({"type": "integer"})),
            &s(json!({"type": "number"}))
        ));
        assert!(compatible(&s(json!({})), &s(json!({"type": "object"}))));
        assert!(compatible(
            &s(json!({"type": ["string", "null"]})),
            &s(json!({"anyOf": [{"type": "string"}, {"type": "array"}]}))
        ));
        assert!(!compatible(
            &s(json!({"type": "string"})),
            &s(json!({"type": "array"}))
        ));
        assert!(compatible(
            &s(json!({"anyOf": [{"type": "string"}, {}]})),
            &s(json!({"type": "array"}))
        ));
    }

    #[test]
    fn namespaces_are_set_aside_before_names_are_compared() {
        let n = |xs: &[&str]| -> Vec<Vec<String>> { xs.iter().map(|x| name_terms(x)).collect() };
        assert_eq!(
            namespace(&n(&["git_add", "git_log", "git_diff", "git_status"])),
            Some("git".into())
        );
        assert_eq!(
            namespace(&n(&[
                "git_add", "git_log", "git_show", "git_diff", "status"
            ])),
            Some("git".into())
        );
        assert_eq!(namespace(&n(&["git_add", "git_log", "status"])), None);
        assert_eq!(namespace(&n(&["get_a", "get_b", "get_c"])), None, "a verb");
        // Two tools sharing a first word is a coincidence, not a namespace.
        assert_eq!(
            namespace(&n(&["brave_web_search", "brave_local_search"])),
            None
        );
        let a = run(
            &set(vec![
                json!({"name": "browser_click", "description": "Click an element"}),
                json!({"name": "browser_hover", "description": "Hover over an element"}),
                json!({"name": "browser_close", "description": "Close the page"}),
            ]),
            None,
            None,
        );
        assert_eq!(a.namespace.as_deref(), Some("browser"));
        assert!(
            a.scored.iter().all(|p| p.affinity.name_prefix == 0.0),
            "{a:?}"
        );
    }

    #[test]
    fn vetoes_opposing_verbs_read_versus_write_and_read_only_hints() {
        let ro = |name: &str, b: bool| json!({"name": name, "description": "Work on the item.", "annotations": {"readOnlyHint": b}});
        let a = run(
            &set(vec![
                json!({"name": "read_query", "description": "Run a query."}),
                json!({"name": "write_query", "description": "Run a query."}),
                json!({"name": "get_issue", "description": "An issue."}),
                json!({"name": "update_issue", "description": "An issue."}),
                ro("item_view", true),
                ro("item_view_full", false),
            ]),
            None,
            Some(0.0),
        );
        let veto = |x: &str, y: &str| {
            a.scored
                .iter()
                .find(|p| (p.a == x && p.b == y) || (p.a == y && p.b == x))
                .and_then(|p| p.veto.clone())
        };
        assert_eq!(
            veto("read_query", "write_query"),
            Some(Veto::OpposingVerbs {
                verbs: ["read".into(), "write".into()]
            })
        );
        assert_eq!(
            veto("get_issue", "update_issue"),
            Some(Veto::ReadVersusWrite {
                verbs: ["get".into(), "update".into()]
            })
        );
        assert_eq!(
            veto("item_view", "item_view_full"),
            Some(Veto::ReadOnlyHint {
                read_only: "item_view".into()
            })
        );
        // Threshold 0 flags everything that is not vetoed, and nothing that is.
        assert!(a.scored.iter().all(|p| p.flagged == p.veto.is_none()));
        assert_eq!(
            a.vetoed,
            a.scored.iter().filter(|p| p.veto.is_some()).count()
        );
    }

    #[test]
    fn scope_notes_need_the_same_action_and_a_separating_gate() {
        let one = |name: &str, param: &str| {
            json!({"name": name, "description": "Read.", "inputSchema":
                {"type": "object", "properties": {param: {"type": "string"}}, "required": [param]}})
        };
        let a = run(
            &set(vec![
                one("read_file", "path"),
                one("read_multiple_files", "paths"),
                one("write_multiple_files", "files"),
                one("fetch_file", "url"),
            ]),
            None,
            None,
        );
        let notes: Vec<(&str, &str, &[String])> = a
            .scope_notes
            .iter()
            .map(|n| (n.a.as_str(), n.b.as_str(), n.extra_terms.as_slice()))
            .collect();
        assert_eq!(
            notes,
            vec![(
                "read_file",
                "read_multiple_files",
                &["multiple".to_string()][..]
            )]
        );
        assert_eq!(a.dropped_by_gate, 6);
        assert!(a.scored.is_empty());
    }

    #[test]
    fn name_measures() {
        let v = |s: &str| name_terms(s);
        assert_eq!(affixes(&v("read_file"), &v("read_text_file")), (0.5, 0.5));
        assert_eq!(
            affixes(&v("list_directory"), &v("list_directory_with_sizes")),
            (1.0, 0.0)
        );
        assert_eq!(
            affixes(&v("create_directory"), &v("list_directory")),
            (0.0, 0.5)
        );
        assert_eq!(affixes(&v("readFile"), &v("read-file")), (1.0, 1.0));
        assert_eq!(edit_similarity(&v("readFile"), &v("read_file")), 1.0);
        assert!(
            (edit_similarity(&v("read_file"), &v("read_text_file")) - 9.0 / 14.0).abs() < 1e-12
        );
    }

    #[test]
    fn without_descriptions_the_embedding_says_nothing() {
        let e = ndarray::array![[1.0f32, 0.0], [1.0, 0.0]];
        let a = run(
            &set(vec![
                json!({"name": "alpha_one"}),
                json!({"name": "beta_two", "description": "x"}),
            ]),
            Some(&e),
            None,
        );
        assert_eq!(a.scored[0].affinity.embedding, Some(0.0));
        assert_eq!(a.weights, WITH_EMBEDDING);
    }

    /// Every capture in `tests/fixtures/corpus`, parsed.
    fn corpus() -> Vec<(String, ToolSet)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
        let mut out = Vec::new();
        for server in std::fs::read_dir(&root).unwrap() {
            let dir = server.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(&dir).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "json") {
                    let text = std::fs::read_to_string(&f).unwrap();
                    let name = f.display().to_string();
                    out.push((
                        name.clone(),
                        crate::source::parse_text(&text, &name).unwrap().0,
                    ));
                }
            }
        }
        out.sort_by(|x, y| x.0.cmp(&y.0));
        assert!(out.len() > 50, "the corpus is there: {}", out.len());
        out
    }

    /// Rows for an embedding matrix that differ tool by tool, without a model.
    fn fake_embeddings(n: usize) -> Array2<f32> {
        Array2::from_shape_fn((n, 8), |(i, k)| ((i * 31 + k * 17) % 11) as f32 - 5.0)
    }

    #[test]
    fn the_index_finds_what_every_pair_finds_on_the_corpus() {
        let mut scored = 0;
        let mut notes = 0;
        for (name, tools) in corpus() {
            let e = fake_embeddings(tools.len());
            let a = run(&tools, None, None);
            let b = run(&tools, Some(&e), None);
            scored += a.scored.len() + b.scored.len();
            notes += a.scope_notes.len();
            assert_eq!(a.dropped_by_gate, b.dropped_by_gate, "{name}");
        }
        // The corpus exercises both kinds of candidate.
        assert!(scored > 500 && notes > 10, "{scored} scored, {notes} notes");
    }

    /// Tools recombined from the corpus the way a hostile or sloppy server might: names spliced
    /// from two tools (scope relations), parameters dropped or retyped, `required` lost, repeated,
    /// or not a list, `properties` not an object.
    fn recombined(n: usize) -> ToolSet {
        let pool: Vec<Tool> = corpus().into_iter().flat_map(|(_, t)| t.tools).collect();
        let mut x = 11u64;
        let mut next = |m: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize % m
        };
        let mut out = Vec::new();
        let mut taken = BTreeSet::new();
        for i in 0..n {
            let t = &pool[next(pool.len())];
            let mut v = t.to_value();
            let other = &pool[next(pool.len())].name;
            // Plain names and "_multiple" variants make scope relations; a taken name gets the
            // tool's index.
            let mut name = match next(6) {
                0 => format!("{}_{i}", t.name),
                1 => format!("{}_{}{i}", t.name, other),
                2 => format!("{other}_{i}_{}", t.name),
                3 => t.name.clone(),
                4 => format!("{}_multiple", t.name),
                _ => format!("{}{i}", t.name),
            };
            if !taken.insert(name.clone()) {
                name = format!("{name}_{i}");
                taken.insert(name.clone());
            }
            v["name"] = json!(name);
            let schema = &mut v["inputSchema"];
            match next(8) {
                0 => {
                    schema.as_object_mut().map(|o| o.remove("required"));
                }
                1 => {
                    if let Some(mut r) = schema.get("required").and_then(Value::as_array).cloned() {
                        r.extend(r.clone());
                        schema["required"] = Value::Array(r);
                    }
                }
                2 => schema["required"] = json!("path"),
                3 => schema["properties"] = json!(["path"]),
                4 => {
                    if let Some(p) = schema.get_mut("properties").and_then(Value::as_object_mut)
                        && let Some(k) = p.keys().next().cloned()
                    {
                        p.insert(k, json!({"type": ["integer", "null"]}));
                    }
                }
                5 => {
                    if let Some(p) = schema.get_mut("properties").and_then(Value::as_object_mut)
                        && let Some(k) = p.keys().next_back().cloned()
                    {
                        p.remove(&k);
                    }
                }
                _ => {}
            }
            out.push(v);
        }
        ToolSet::from_array(&out, "synthetic", "").unwrap()
    }

    #[test]
    fn the_index_finds_what_every_pair_finds_on_a_synthetic_set() {
        let tools = recombined(700);
        let a = run(&tools, None, Some(0.3));
        let e = fake_embeddings(tools.len());
        run(&tools, Some(&e), None);
        assert!(
            a.scored.len() > 1000 && !a.scope_notes.is_empty() && a.dropped_by_gate > 100_000,
            "{} scored, {} notes, {} dropped",
            a.scored.len(),
            a.scope_notes.len(),
            a.dropped_by_gate
        );
    }

    #[test]
    fn a_large_set_is_refused_only_when_its_pairs_are_too_many() {
        // 3,000 tools that require nothing: every pair passes the gate, 4.5 M of them.
        let free: Vec<Value> = (0..3_000)
            .map(|i| json!({"name": format!("tool_{i}")}))
            .collect();
        let free = set(free);
        assert_eq!(Candidates::find(&free), Err(TooManyPairs { tools: 3_000 }));
        // 20,000 tools that each require their own parameter: no pair can pass, nothing to do.
        let own: Vec<Value> = (0..20_000)
            .map(|i| {
                let p = format!("p{i}");
                json!({"name": format!("tool_{i}"), "inputSchema": obj(json!({p.clone(): {}}), &[&p])})
            })
            .collect();
        let own = set(own);
        let c = Candidates::find(&own).unwrap();
        assert!(c.is_empty());
        let a = analyse(&own, &c, None, None);
        assert_eq!(a.dropped_by_gate, a.total_pairs);
        assert_eq!(a.total_pairs, 20_000 * 19_999 / 2);
    }
}

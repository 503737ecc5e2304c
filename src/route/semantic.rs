//! The offline default router: embed the user message and each offered tool's text with the
//! bundled sentence embedder, add a lexical score (BM25 over the offered tools), and pick the best
//! tool; when the prompt reads more like small talk than like any tool (with `tool_choice: auto`)
//! answer with no call. Deterministic, no key, no network.
//!
//! It is a proxy for an LLM, not an LLM: it measures whether a description still *reads* like the
//! prompts meant for it, which is exactly what a wording change can break. Each choice below was
//! measured on five suites (docs/router.md, `bench/router.sh`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use ndarray::{Array1, Array2};

use super::{RouteRequest, RouteResponse, Router};
use crate::embed::{Embedder, cosine};
use crate::http::Failure;
use crate::llm::{Answer, ToolChoice};
use crate::text::tokens::sentences;
use crate::tools::Tool;

/// The cosine threshold the first semantic router used for "no call": kept for `--none-threshold`.
pub const DEFAULT_NONE_THRESHOLD: f32 = 0.25;

/// Prompts that want no tool. A prompt closer to one of these than to every offered tool (by a
/// margin) gets no call: a fixed reference, not a threshold fitted to any suite, so it moves with
/// the embedder rather than against it.
pub const SMALL_TALK: [&str; 10] = [
    "Thanks, that's all.",
    "Hello, how are you today?",
    "Tell me a joke.",
    "Write a short poem about the sea.",
    "What is the capital of France?",
    "Explain the difference between two concepts in general terms.",
    "Translate this sentence into Spanish.",
    "What's your opinion on this?",
    "Summarize what we discussed.",
    "Good morning!",
];

/// When `auto` answers with no call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoneRule {
    /// Never: always the best tool.
    Never,
    /// Below this cosine between prompt and its nearest tool.
    Threshold(f32),
    /// When the prompt's nearest [`SMALL_TALK`] line is closer than its nearest tool plus `margin`.
    SmallTalk { margin: f32 },
}

/// How the router scores; [`Options::default`] is the shipped router, the others are what
/// `bench/router.sh` compares it with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Besides the whole tool text, each description sentence (after the tool's name words) is a
    /// view of its own, and a tool scores its best view: a long description's one relevant
    /// sentence is not averaged away by mean pooling.
    pub sentences: bool,
    /// The words of names (`read_text_file` → "read text file") and parameter names instead of
    /// [`Tool::routing_text`] as the whole text.
    pub name_words: bool,
    /// Weight of BM25 over the offered tools (scaled to the best tool's 1.0), added to the cosine.
    pub lexical: f32,
    pub none: NoneRule,
    /// Sentence views start with the tool's name words. Off, a sentence is the description's
    /// own words: a rewritten purpose is not rescued by the name (docs/router.md § Sensitivity).
    pub named_sentences: bool,
    /// `0`: a tool scores its best view, the whole text being one of them. Above `0`: this
    /// weight of the whole text plus the rest of its best sentence, so an added restriction or
    /// a weakened sentence lowers the score instead of being outvoted by the best one.
    pub whole_weight: f32,
    /// A sentence that opens with a prohibition ("Do not …", "Never …") is not a view: its
    /// remainder's cosine, times this, is taken off the tool's score (MiniLM embeds "Do not
    /// schedule" beside "schedule", so as a view it would attract the prompts it turns away).
    pub repel: f32,
    /// Views without commas, semicolons (a sentence break) and final periods: meaning does not
    /// live in punctuation, and a router that moves on it reports noise as drift.
    pub plain: bool,
    /// The whole-text view lists the description's sentences in a fixed (sorted) order: moving
    /// a sentence does not change what a tool does, and with `whole_weight` the whole view
    /// counts on its own.
    pub sorted: bool,
    /// Views read the description's usage examples ("For example, …", "(e.g. …)"). Off, an
    /// example's file names and values do not pull other tools' prompts: an added example moved
    /// other tools' cases in four of the five hand-written batches (`text::examples`; the whole
    /// text of a router without name words is the tool's routing text, examples and all).
    pub examples: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options::hybrid4()
    }
}

/// The shipped option sets a user can pick (`--semantic-variant`, `[router] semantic_variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Two before: more accurate on Azure's 180 tools, feels fewer meaning changes.
    Hybrid2,
    /// The one before: reads usage examples as it reads the rest.
    Hybrid3,
    /// The default (docs/router.md).
    Hybrid4,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Hybrid2, Variant::Hybrid3, Variant::Hybrid4];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Hybrid2 => "hybrid2",
            Variant::Hybrid3 => "hybrid3",
            Variant::Hybrid4 => "hybrid4",
        }
    }

    pub fn options(self) -> Options {
        match self {
            Variant::Hybrid2 => Options::hybrid2(),
            Variant::Hybrid3 => Options::hybrid3(),
            Variant::Hybrid4 => Options::hybrid4(),
        }
    }
}

impl Options {
    /// The first router (v0.1): whole routing text, cosine only, a 0.25 threshold.
    pub fn first() -> Self {
        Options {
            sentences: false,
            name_words: false,
            lexical: 0.0,
            none: NoneRule::Threshold(DEFAULT_NONE_THRESHOLD),
            ..Options::hybrid2()
        }
    }

    /// The router fitted for accuracy on the five shipped suites (docs/router.md § Measured).
    pub fn hybrid2() -> Self {
        Options {
            sentences: true,
            name_words: true,
            lexical: 0.15,
            none: NoneRule::SmallTalk { margin: 0.05 },
            named_sentences: true,
            whole_weight: 0.0,
            repel: 0.0,
            plain: false,
            sorted: false,
            examples: true,
        }
    }

    /// hybrid2 with prohibitions that repel, punctuation-free views, and the whole text
    /// (sentences in a fixed order) weighed 0.3 beside the best sentence; chosen on the tune half
    /// of the edit benchmark for what it feels (docs/router.md).
    pub fn hybrid3() -> Self {
        Options {
            repel: 0.5,
            plain: true,
            whole_weight: 0.3,
            sorted: true,
            ..Options::hybrid2()
        }
    }

    /// The shipped router: hybrid3 reading descriptions without their usage examples; chosen
    /// on the first five hand-written batches' false alarms (docs/router.md).
    pub fn hybrid4() -> Self {
        Options {
            examples: false,
            ..Options::hybrid3()
        }
    }

    /// A short stable name, part of the router's model id (so of every cache key).
    pub fn label(&self) -> String {
        let none = match self.none {
            NoneRule::Never => "never".to_string(),
            NoneRule::Threshold(t) => format!("<{t}"),
            NoneRule::SmallTalk { margin } => format!("talk+{margin}"),
        };
        if *self == Options::first() {
            return format!("none<{DEFAULT_NONE_THRESHOLD}");
        }
        // The shipped router's short name, so the model id fits a terminal line; a test pins
        // it to these exact options (change them, rename it, or old cache entries would answer).
        if *self == Options::hybrid2() {
            return "hybrid2".into();
        }
        if *self == Options::hybrid3() {
            return "hybrid3".into();
        }
        if *self == Options::hybrid4() {
            return "hybrid4".into();
        }
        let mut label = format!(
            "{}{}bm25={}:none={none}",
            if self.name_words { "words:" } else { "" },
            if self.sentences { "sentences:" } else { "" },
            self.lexical
        );
        // Options hybrid2 did not have are named only when they differ from what it did.
        if self.sentences && !self.named_sentences {
            label.push_str(":bare");
        }
        if self.whole_weight > 0.0 {
            label.push_str(&format!(":whole={}", self.whole_weight));
        }
        if self.repel > 0.0 {
            label.push_str(&format!(":repel={}", self.repel));
        }
        if self.plain {
            label.push_str(":plain");
        }
        if self.sorted {
            label.push_str(":sorted");
        }
        if !self.examples {
            label.push_str(":no-examples");
        }
        label
    }
}

/// One embedding batch in flight, awaited by every case that needs one of its texts.
type Batch = Shared<BoxFuture<'static, Result<Arc<Array2<f32>>, String>>>;

enum Slot {
    Ready(Array1<f32>),
    /// Row `.1` of a batch still running.
    Pending(Batch, usize),
}

pub struct SemanticRouter {
    embedder: Arc<dyn Embedder>,
    model: String,
    options: Options,
    /// Tool texts recur in every case: embed each once per run. A text being embedded is a
    /// pending slot, so concurrent cases wait for that batch instead of embedding the same tool
    /// texts again (CPU-bound work that only oversubscribes the cores), while each case's own
    /// prompt is embedded without waiting for the others' (the lock is never held across an
    /// embedding).
    memo: Mutex<HashMap<String, Slot>>,
}

impl SemanticRouter {
    pub fn new(embedder: Arc<dyn Embedder>, options: Options) -> Self {
        let model = format!("{}@{}", embedder.id(), options.label());
        SemanticRouter {
            embedder,
            model,
            options,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// Embed whichever of `texts` no case has embedded or is embedding (one batch), and wait
    /// for those others are embedding.
    async fn ensure(&self, texts: &[String]) -> Result<(), Failure> {
        let (waits, mine) = {
            let mut memo = self.memo.lock().expect("memo lock");
            let mut missing: Vec<String> = texts
                .iter()
                .filter(|t| !memo.contains_key(*t))
                .cloned()
                .collect();
            missing.sort();
            missing.dedup();
            let mine = (!missing.is_empty()).then(|| {
                let embedder = self.embedder.clone();
                let batch = missing.clone();
                let run: Batch = async move {
                    embedder
                        .embed(&batch)
                        .await
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                }
                .boxed()
                .shared();
                for (i, t) in missing.iter().enumerate() {
                    memo.insert(t.clone(), Slot::Pending(run.clone(), i));
                }
                (run, missing)
            });
            let mut waits: Vec<Batch> = Vec::new();
            for t in texts {
                if let Some(Slot::Pending(b, _)) = memo.get(t)
                    && !waits.iter().any(|w| w.ptr_eq(b))
                {
                    waits.push(b.clone());
                }
            }
            (waits, mine)
        };
        let mut failed = None;
        for w in waits {
            if let Err(e) = w.await {
                failed = Some(e);
            }
        }
        if let Some(e) = failed {
            // Whoever started a failed batch forgets it, so a retry embeds it again.
            let mut memo = self.memo.lock().expect("memo lock");
            if let Some((_, texts)) = mine {
                for t in texts {
                    memo.remove(&t);
                }
            }
            return Err(Failure::Fatal(format!("embedding failed: {e}")));
        }
        Ok(())
    }

    /// The cosine of `texts[0]` against each of `texts[1..]`.
    async fn cosines(&self, texts: &[String]) -> Result<Vec<f32>, Failure> {
        self.ensure(texts).await?;
        let mut memo = self.memo.lock().expect("memo lock");
        for t in texts {
            let slot = memo.get_mut(t).expect("embedded or pending");
            if let Slot::Pending(b, i) = slot {
                let rows = b.peek().expect("awaited").as_ref().expect("succeeded");
                *slot = Slot::Ready(rows.row(*i).to_owned());
            }
        }
        let vector = |t: &String| match &memo[t] {
            Slot::Ready(v) => v.view(),
            Slot::Pending(..) => unreachable!("made ready above"),
        };
        let query = vector(&texts[0]);
        Ok(texts[1..]
            .iter()
            .map(|t| cosine(query, vector(t)))
            .collect())
    }
}

#[async_trait::async_trait]
impl Router for SemanticRouter {
    fn kind(&self) -> super::Kind {
        super::Kind::Semantic
    }
    fn model(&self) -> &str {
        &self.model
    }
    fn endpoint_host(&self) -> String {
        "local".into()
    }

    fn fills_arguments(&self) -> bool {
        false
    }
    /// Every prompt and tool text of the requests, embedded as one batch.
    async fn prepare(&self, requests: &[&RouteRequest]) {
        let mut texts: Vec<String> = Vec::new();
        for r in requests {
            texts.extend(plan(&self.options, r).texts);
        }
        // A failure comes back when the request is routed, and is reported there.
        let _ = self.ensure(&texts).await;
    }

    fn texts(&self, req: &RouteRequest) -> Option<Vec<String>> {
        Some(plan(&self.options, req).texts)
    }

    async fn route(&self, req: &RouteRequest) -> Result<RouteResponse, Failure> {
        let started = Instant::now();
        let plan = plan(&self.options, req);
        let cos = self.cosines(&plan.texts).await?;
        let n = req.tools.len();
        let (mut whole, mut best_sentence, mut repelled) = (
            vec![f32::NEG_INFINITY; n],
            vec![f32::NEG_INFINITY; n],
            vec![0.0f32; n],
        );
        let mut talk = f32::NEG_INFINITY;
        for (&c, view) in cos.iter().zip(&plan.views) {
            match *view {
                View::Whole(k) => whole[k] = whole[k].max(c),
                View::Sentence(k) => best_sentence[k] = best_sentence[k].max(c),
                View::Repel(k) => repelled[k] = repelled[k].max(c.max(0.0)),
                View::Talk => talk = talk.max(c),
            }
        }
        let w = self.options.whole_weight;
        // Each tool's cosine: its best view, or the whole text blended with its best sentence.
        let tool_cos: Vec<f32> = (0..n)
            .map(|k| {
                let pooled = match best_sentence[k] {
                    s if s == f32::NEG_INFINITY => whole[k],
                    s if w > 0.0 => w * whole[k] + (1.0 - w) * s,
                    s => whole[k].max(s),
                };
                pooled - self.options.repel * repelled[k]
            })
            .collect();
        let mut score = tool_cos.clone();
        if self.options.lexical > 0.0 {
            let lex = bm25(&plan.query, &plan.lexical_docs);
            let top = lex.iter().cloned().fold(0.0, f32::max);
            if top > 0.0 {
                for (s, l) in score.iter_mut().zip(lex) {
                    *s += self.options.lexical * l / top;
                }
            }
        }
        // Ties broken by offered order, which the caller made deterministic.
        let best = score
            .iter()
            .enumerate()
            .fold(None::<(usize, f32)>, |acc, (k, &s)| match acc {
                Some((_, bs)) if bs >= s => acc,
                _ => Some((k, s)),
            })
            .map(|(k, _)| k);
        let nearest = tool_cos.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let answer = match best {
            None => Answer::NoCall {
                text: "no tools offered".into(),
            },
            Some(k) => {
                let t = &req.tools[k];
                let none = req.tool_choice != ToolChoice::Required
                    && match self.options.none {
                        NoneRule::Never => false,
                        NoneRule::Threshold(th) => tool_cos[k] < th,
                        NoneRule::SmallTalk { margin } => talk > nearest + margin,
                    };
                if none {
                    Answer::NoCall {
                        text: match self.options.none {
                            NoneRule::SmallTalk { .. } => format!(
                                "reads as small talk ({talk:.3}) more than as any tool (best `{}` at {:.3})",
                                t.name, tool_cos[k]
                            ),
                            _ => format!(
                                "no tool close enough (best `{}` at {:.3})",
                                t.name, tool_cos[k]
                            ),
                        },
                    }
                } else {
                    Answer::bare_call(&t.name)
                }
            }
        };
        Ok(RouteResponse {
            answer,
            usage: None,
            latency_ms: started.elapsed().as_millis().max(1) as u64,
        })
    }
}

/// What a text of a [`Plan`] is to the offered tool `.0`.
#[derive(Clone, Copy)]
enum View {
    Whole(usize),
    Sentence(usize),
    /// A prohibition's remainder: pushes prompts away.
    Repel(usize),
    /// A [`SMALL_TALK`] line.
    Talk,
}

/// What one request embeds and scores.
struct Plan {
    query: String,
    /// The query, then each tool's views, then the small-talk lines.
    texts: Vec<String>,
    /// What each of `texts[1..]` is.
    views: Vec<View>,
    /// Per offered tool, the text BM25 scores.
    lexical_docs: Vec<String>,
}

/// What `req` embeds and scores under options `o`.
fn plan(o: &Options, req: &RouteRequest) -> Plan {
    let query = req
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let mut texts = vec![query.clone()];
    let mut views = Vec::new();
    let mut lexical_docs = Vec::new();
    for (k, t) in req.tools.iter().enumerate() {
        let description: std::borrow::Cow<str> = match o.examples {
            true => t.description_text().into(),
            false => crate::text::examples::without(t.description_text()).into(),
        };
        let whole = match (o.name_words, o.sorted) {
            (true, true) => {
                let mut parts = sentences(&description);
                parts.sort_unstable();
                word_text_with(t, &parts.join(" "))
            }
            (true, false) => word_text_with(t, &description),
            (false, _) => t.routing_text(),
        };
        let whole = if o.plain { plain(&whole) } else { whole };
        if o.sentences {
            let name = words(&t.name);
            let mut parts: Vec<&str> = sentences(&description);
            if o.plain {
                parts = parts.into_iter().flat_map(|s| s.split("; ")).collect();
            }
            for s in parts {
                let s = if o.plain { plain(s) } else { s.to_string() };
                match crate::text::cues::prohibition(&s).filter(|_| o.repel > 0.0) {
                    Some(rest) => {
                        texts.push(rest.to_string());
                        views.push(View::Repel(k));
                    }
                    None if o.named_sentences => {
                        texts.push(format!("{name}: {s}"));
                        views.push(View::Sentence(k));
                    }
                    None => {
                        texts.push(s);
                        views.push(View::Sentence(k));
                    }
                }
            }
        }
        texts.push(whole);
        views.push(View::Whole(k));
        if o.lexical > 0.0 {
            lexical_docs.push(word_text_with(t, &description));
        }
    }
    if matches!(o.none, NoneRule::SmallTalk { .. }) && req.tool_choice != ToolChoice::Required {
        for line in SMALL_TALK {
            texts.push(line.to_string());
            views.push(View::Talk);
        }
    }
    Plan {
        query,
        texts,
        views,
        lexical_docs,
    }
}

/// `text` without the punctuation meaning does not live in: commas and semicolons, and a period
/// that ends a sentence (one inside a word, `v1.2` or `README.md`, stays).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let ends = chars.peek().is_none_or(|n| n.is_whitespace());
        match c {
            ',' | ';' if ends => {}
            '.' if ends => {}
            _ => out.push(c),
        }
    }
    out.trim_end().to_string()
}

/// A name's words: `read_text_file`, `readTextFile`, `read-text-file` → "read text file" (the
/// project's one name tokenizer).
fn words(name: &str) -> String {
    crate::text::tokens::name_tokens(name).join(" ")
}

/// The tool as words: name words (title): `description` (the tool's, as the router reads it),
/// then its parameters' name words.
fn word_text_with(t: &Tool, description: &str) -> String {
    let mut s = words(&t.name);
    if let Some(title) = &t.title {
        s.push_str(&format!(" ({title})"));
    }
    s.push_str(": ");
    s.push_str(description);
    let params: Vec<String> = t.params().into_iter().map(|(p, _)| words(&p)).collect();
    if !params.is_empty() {
        s.push_str("\nparameters: ");
        s.push_str(&params.join(", "));
    }
    s
}

const STOP_WORDS: [&str; 25] = [
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "with", "by",
    "from", "this", "that", "it", "as", "at", "can", "you", "me", "my",
];

/// Lower-cased alphanumeric runs, stop words dropped, one ending cut ("ing", "ed", "es", "s").
/// Crude on purpose: query and tools go through the same cut, and a real stemmer (Snowball
/// English) measured worse on every suite (docs/router.md). Not `text::terms`: its plural-only
/// stem and longer stop list serve lint's term weights, and the router's parameters were fitted
/// to this tokenizer (changing it means re-measuring with bench/router.sh).
fn terms(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w) && *w != "i" && *w != "please")
        .map(|w| {
            for suffix in ["ing", "ed", "es", "s"] {
                if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
                    return w[..w.len() - suffix.len()].to_string();
                }
            }
            w.to_string()
        })
        .collect()
}

/// Okapi BM25 (k1 1.2, b 0.75) of `query` against each of `docs`, the documents being the
/// offered tools: a term every tool shares weighs almost nothing.
fn bm25(query: &str, docs: &[String]) -> Vec<f32> {
    let docs: Vec<Vec<String>> = docs.iter().map(|d| terms(d)).collect();
    let n = docs.len() as f32;
    if docs.is_empty() {
        return Vec::new();
    }
    let avg = (docs.iter().map(Vec::len).sum::<usize>() as f32 / n).max(1.0);
    let mut df: HashMap<&str, f32> = HashMap::new();
    for d in &docs {
        let mut seen: Vec<&str> = d.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *df.entry(w).or_default() += 1.0;
        }
    }
    let mut q = terms(query);
    q.sort_unstable();
    q.dedup();
    docs.iter()
        .map(|d| {
            let len = d.len() as f32;
            q.iter()
                .map(|w| {
                    let f = d.iter().filter(|x| *x == w).count() as f32;
                    if f == 0.0 {
                        return 0.0;
                    }
                    let df = df[w.as_str()];
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len / avg))
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_every_naming_style_the_same_way() {
        for name in [
            "read_text_file",
            "readTextFile",
            "read-text-file",
            "Read Text File",
        ] {
            assert_eq!(words(name), "read text file", "{name}");
        }
        assert_eq!(words("browser_tab_list2"), "browser tab list2");
        assert_eq!(words("get_PR_files"), "get pr files");
        assert_eq!(words("__x__"), "x");
        assert_eq!(words(""), "");
    }

    #[test]
    fn plain_views_drop_only_the_punctuation_meaning_does_not_live_in() {
        assert_eq!(
            plain("Read a file, then stop; see README.md for v1.2."),
            "Read a file then stop see README.md for v1.2"
        );
        assert_eq!(plain("a.b,c;d"), "a.b,c;d", "inside a word it stays");
        assert_eq!(plain(""), "");
        // A period toggled and a comma dropped (the edit benchmark's punctuation edit) read the same.
        assert_eq!(
            plain("Schedule a visit, at a time. Use it once"),
            plain("Schedule a visit at a time. Use it once.")
        );
    }

    #[test]
    fn terms_drop_stop_words_and_cut_one_ending() {
        assert_eq!(
            terms("Please list the files in my Directories, I'm searching"),
            ["list", "fil", "directori", "m", "search"]
        );
        // Short words keep their endings.
        assert_eq!(terms("bus uses tags"), ["bus", "use", "tag"]);
    }

    #[test]
    fn bm25_prefers_the_tool_with_the_rare_matching_term() {
        let docs = [
            "read file: read the contents of a file".to_string(),
            "write file: write contents to a file".to_string(),
            "move file: move or rename a file".to_string(),
        ];
        let s = bm25("rename this file please", &docs);
        assert_eq!(s.len(), 3);
        // "file" is in every tool, so it weighs little; "rename" decides.
        assert!(s[2] > s[0] && s[2] > s[1], "{s:?}");
        assert!(s[0] > 0.0, "a shared term still counts a little: {s:?}");
        assert_eq!(bm25("nothing in common", &docs), [0.0, 0.0, 0.0]);
        assert!(bm25("anything", &[]).is_empty());
        // A longer document with the same one match scores lower (length normalisation).
        let s = bm25(
            "rename",
            &[
                "rename".to_string(),
                "rename plus many other words here".to_string(),
            ],
        );
        assert!(s[0] > s[1], "{s:?}");
    }

    #[test]
    fn an_added_usage_example_is_not_read_by_the_shipped_router() {
        let tool = |description: &str| {
            let v = serde_json::json!({"name": "edit_file", "description": description,
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}});
            Tool::from_value(&v, "t", "").unwrap()
        };
        let base = "Make line-based edits to a text file. Returns a git-style diff.";
        let head = "Make line-based edits to a text file. For example, an edit can replace the \
                    line 'debug = false' with 'debug = true' in config.ini. Returns a git-style \
                    diff.";
        let texts = |o: &Options, d: &str| {
            let p = plan(
                o,
                &RouteRequest::single(&[], "change config.ini", vec![tool(d)]),
            );
            (p.texts, p.lexical_docs)
        };
        let shipped = Options::default();
        assert_eq!(texts(&shipped, head), texts(&shipped, base));
        // The option set before read it: a sentence view of its own, and in the whole text.
        let before = Options::hybrid3();
        let (with, _) = texts(&before, head);
        assert!(with.iter().any(|t| t.contains("config.ini")), "{with:?}");
        assert_ne!(texts(&before, head), texts(&before, base));
    }

    #[test]
    fn labels_name_each_option_and_keep_the_first_routers_id() {
        assert_eq!(Options::first().label(), "none<0.25");
        // The short names stand for exactly these options.
        let hybrid2 = Options {
            sentences: true,
            name_words: true,
            lexical: 0.15,
            none: NoneRule::SmallTalk { margin: 0.05 },
            named_sentences: true,
            whole_weight: 0.0,
            repel: 0.0,
            plain: false,
            sorted: false,
            examples: true,
        };
        assert_eq!(Options::hybrid2(), hybrid2);
        assert_eq!(Options::hybrid2().label(), "hybrid2");
        let hybrid3 = Options {
            repel: 0.5,
            plain: true,
            whole_weight: 0.3,
            sorted: true,
            ..hybrid2
        };
        assert_eq!(Options::hybrid3(), hybrid3);
        assert_eq!(Options::hybrid3().label(), "hybrid3");
        assert_eq!(
            Options::default(),
            Options {
                examples: false,
                ..hybrid3
            }
        );
        assert_eq!(Options::default().label(), "hybrid4");
        let talk_wider = Options {
            none: NoneRule::SmallTalk { margin: 0.1 },
            ..Options::hybrid2()
        };
        assert_eq!(
            talk_wider.label(),
            "words:sentences:bm25=0.15:none=talk+0.1"
        );
        let threshold = Options {
            none: NoneRule::Threshold(0.3),
            ..Options::default()
        };
        assert_eq!(
            threshold.label(),
            "words:sentences:bm25=0.15:none=<0.3:whole=0.3:repel=0.5:plain:sorted:no-examples"
        );
        let grid = Options {
            named_sentences: false,
            whole_weight: 0.3,
            ..Options::hybrid2()
        };
        assert_eq!(
            grid.label(),
            "words:sentences:bm25=0.15:none=talk+0.05:bare:whole=0.3"
        );
        let never = Options {
            none: NoneRule::Never,
            lexical: 0.0,
            sentences: false,
            name_words: false,
            ..Options::hybrid2()
        };
        assert_eq!(never.label(), "bm25=0:none=never");
    }
}

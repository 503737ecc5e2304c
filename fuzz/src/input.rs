//! What the renderer targets render: a report built from fuzzed tool sets, the way the gate
//! builds one (`job::check::diff_report`), or the calendar example's real `check` report with
//! fuzzed text in every field a reader sees (as `tests/it/hostile.rs` does by hand).
//!
//! An input is one of two shapes, told apart by its first byte:
//! - `[` or `{`: two tools documents (any shape the loader reads) separated by a NUL byte, base
//!   then head, parsed by `source::parse_text` — the committed seeds are real consecutive
//!   versions from `tests/fixtures/corpus`;
//! - anything else: the rest is read by `arbitrary` into [`Build`]: tool sets whose names,
//!   titles, descriptions and parameter names are strings glued from raw fuzzed text and hostile
//!   fragments, and a head made from the base by edits, renames, removals and additions.

use arbitrary::{Arbitrary, Result, Unstructured};
use driftgate::diff::Severity;
use driftgate::report::Report;
use driftgate::source::{self, Format, Loaded};
use driftgate::tools::ToolSet;
use serde_json::{Map, Value, json};

/// Pieces of text that mean something to a renderer, a terminal, GFM, GitHub or the runner.
pub const FRAGMENTS: &[&str] = &[
    "<!--",
    "-->",
    "<!-- driftgate:driftgate:gate -->",
    "@octocat",
    "@",
    "#1",
    "#",
    "owner/repo#12",
    "GH-34",
    "https://evil.example",
    "http://",
    "www.",
    "`",
    "``",
    "```",
    "~~~",
    "|",
    "\\",
    "\\|",
    "\n",
    "\r",
    "\r\n",
    "\t",
    " ",
    "    ",
    "\u{1b}[31m",
    "\u{1b}[0m",
    "\u{1b}]0;pwned\u{7}",
    "\u{1b}]8;;https://evil.example\u{1b}\\",
    "\u{1b}",
    "\u{7}",
    "\u{0}",
    "\u{8}",
    "\u{7f}",
    "\u{85}",
    "\u{9b}31m",
    "\u{202E}",
    "\u{2066}",
    "\u{2069}",
    "\u{200B}",
    "\u{FEFF}",
    "\u{2028}",
    "\u{2029}",
    "::",
    "::error file=x,line=1::forged",
    "::stop-commands::",
    "::add-mask::",
    "::set-output name=verdict::pass",
    "##[",
    "##[group]",
    "##[set-env name=A]",
    "%",
    "%0A",
    "%0D",
    "%25",
    "%3A",
    ":",
    ",",
    "=",
    "*",
    "**",
    "_",
    "~~",
    "$",
    "$$",
    "[",
    "]",
    "(",
    ")",
    "!",
    "<",
    ">",
    "&",
    "&amp;",
    "&#64;",
    "<details>",
    "</details>",
    "<summary>",
    "</summary>",
    "<sub>",
    "<img src=x onerror=alert(1)>",
    "<script>",
    "> ",
    "> [!WARNING]",
    "- ",
    "1. ",
    "- [ ] ",
    "[^1]",
    "[x](https://evil.example)",
    "![i](https://evil.example/i.png)",
    "<https://evil.example>",
    "---",
    "===",
    "| a | b |\n|---|---|\n",
    "é",
    "日本語",
    "🚀",
    "\u{301}",
    "read_file",
    "schedule_appointment",
    "description",
    "inputSchema",
];

/// Text glued from at most 8 pieces: raw fuzzed strings, fragments, and runs of a fragment (so
/// that long texts, and with them the size limits, are reached from short inputs). About 8 KB at
/// most: forty tools of that reach every size limit, and longer texts only slow each run.
#[derive(Debug, Clone)]
pub struct Text(pub String);

impl<'a> Arbitrary<'a> for Text {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let n = u.int_in_range(0..=8u8)?;
        let mut s = String::new();
        for _ in 0..n {
            match u.int_in_range(0..=9u8)? {
                0..=3 => s.push_str(<&str>::arbitrary(u)?),
                4..=8 => s.push_str(u.choose(FRAGMENTS)?),
                _ => {
                    let frag = u.choose(FRAGMENTS)?;
                    let times = u.int_in_range(1..=600u16)?;
                    s.push_str(&frag.repeat(times as usize));
                }
            }
            if s.len() > 8_000 {
                break;
            }
        }
        Ok(Text(s))
    }
}

#[derive(Debug, Arbitrary)]
pub struct Param {
    pub name: Text,
    pub description: Option<Text>,
    pub ty: u8,
    pub required: bool,
    pub enum_values: Option<Vec<Text>>,
}

#[derive(Debug, Arbitrary)]
pub struct FTool {
    pub name: Text,
    pub title: Option<Text>,
    pub description: Option<Text>,
    pub params: Vec<Param>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub extra: Option<(Text, Text)>,
}

const TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array"];

impl FTool {
    fn to_value(&self) -> Value {
        let mut props = Map::new();
        let mut required = Vec::new();
        for p in self.params.iter().take(8) {
            let mut schema = Map::new();
            schema.insert("type".into(), TYPES[p.ty as usize % TYPES.len()].into());
            if let Some(d) = &p.description {
                schema.insert("description".into(), d.0.clone().into());
            }
            if let Some(e) = &p.enum_values {
                let vals: Vec<Value> = e.iter().take(6).map(|t| t.0.clone().into()).collect();
                schema.insert("enum".into(), vals.into());
            }
            if p.required {
                required.push(Value::from(p.name.0.clone()));
            }
            props.insert(p.name.0.clone(), Value::Object(schema));
        }
        let mut t = Map::new();
        t.insert("name".into(), self.name.0.clone().into());
        if let Some(x) = &self.title {
            t.insert("title".into(), x.0.clone().into());
        }
        if let Some(x) = &self.description {
            t.insert("description".into(), x.0.clone().into());
        }
        let mut schema = json!({"type": "object", "properties": props});
        if !required.is_empty() {
            schema["required"] = required.into();
        }
        t.insert("inputSchema".into(), schema);
        let mut ann = Map::new();
        if let Some(b) = self.read_only {
            ann.insert("readOnlyHint".into(), b.into());
        }
        if let Some(b) = self.destructive {
            ann.insert("destructiveHint".into(), b.into());
        }
        if !ann.is_empty() {
            t.insert("annotations".into(), Value::Object(ann));
        }
        if let Some((k, v)) = &self.extra {
            if !driftgate::tools::KNOWN_FIELDS.contains(&k.0.as_str()) {
                t.insert(k.0.clone(), v.0.clone().into());
            }
        }
        Value::Object(t)
    }
}

/// How the head differs from the base, one step per base tool or addition.
#[derive(Debug, Arbitrary)]
pub enum Step {
    Keep(u8),
    Remove(u8),
    Describe(u8, Option<Text>),
    Rename(u8, Text),
    DropParam(u8, u8),
    Retype(u8, u8, u8),
    AddParam(u8, Param),
    Add(FTool),
}

/// Fuzzed text for the calendar report's reader-visible fields: the ones a pull request controls
/// (tool text, suite cases, file names, the router model named in its config, error messages
/// from its endpoints), as in `tests/it/hostile.rs`.
#[derive(Debug, Arbitrary)]
pub struct Calendar {
    /// New names for the calendar's tools (consistently, everywhere they appear).
    pub renames: Vec<(u8, Text)>,
    /// Free text put into the fields below, by index.
    pub texts: Vec<(u8, Text)>,
    pub lint_finding: Option<(Text, Text, Text)>,
    pub routing_error: Option<Text>,
}

#[derive(Debug, Arbitrary)]
pub enum Build {
    Diff {
        base: Vec<FTool>,
        steps: Vec<Step>,
        base_label: Text,
        head_label: Text,
        head_file: Option<Text>,
        fail_on: u8,
    },
    Calendar(Calendar),
}

/// The fuzz input's report (`None`: the input does not make one, e.g. a tools document that the
/// loader refuses).
pub fn report(data: &[u8]) -> Option<(Report, bool)> {
    let (first, rest) = data.split_first()?;
    if matches!(first, b'[' | b'{') {
        return pair(data).map(|r| (r, false));
    }
    let mut u = Unstructured::new(rest);
    let build = Build::arbitrary(&mut u).ok()?;
    let now_passes = first & 1 == 1;
    Some((from_build(build)?, now_passes))
}

fn pair(data: &[u8]) -> Option<Report> {
    let text = std::str::from_utf8(data).ok()?;
    let (base, head) = text.split_once('\0').unwrap_or(("[]", text));
    let load = |t: &str, label: &str| -> Option<Loaded> {
        let (tools, format) = source::parse_text(t, label).ok()?;
        Some(Loaded {
            tools,
            label: label.into(),
            format,
            file: Some(label.into()),
            text: Some(t.to_string()),
        })
    };
    let base = load(base, "base/tools.json")?;
    let head = load(head, "head/tools.json")?;
    Some(driftgate::job::check::diff_report(
        &base,
        &head,
        Severity::Warning,
    ))
}

fn set(tools: Vec<Value>, label: &str) -> ToolSet {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<Value> = tools
        .into_iter()
        .filter(|t| {
            let n = t["name"].as_str().unwrap_or_default().to_string();
            !n.trim().is_empty() && seen.insert(n)
        })
        .collect();
    ToolSet::from_array(&unique, label, "").expect("generated tools are valid")
}

fn from_build(b: Build) -> Option<Report> {
    match b {
        Build::Diff {
            base,
            steps,
            base_label,
            head_label,
            head_file,
            fail_on,
        } => {
            let base_values: Vec<Value> = base.iter().take(40).map(FTool::to_value).collect();
            let base_set = set(base_values.clone(), "base");
            let mut head: Vec<Value> = base_set.tools.iter().map(|t| t.to_value()).collect();
            for step in steps.into_iter().take(60) {
                apply(&mut head, step);
            }
            let head_set = set(head, "head");
            let loaded = |tools: ToolSet, label: Text, file: Option<String>| {
                let text = serde_json::to_string_pretty(&Value::Array(
                    tools.tools.iter().map(|t| t.to_value()).collect(),
                ))
                .ok();
                Loaded {
                    tools,
                    label: label.0,
                    format: Format::BareArray,
                    file,
                    text,
                }
            };
            let base = loaded(base_set, base_label, Some("tools.json".into()));
            let head = loaded(head_set, head_label, head_file.map(|t| t.0));
            let fail_on = [
                Severity::Info,
                Severity::Unknown,
                Severity::Warning,
                Severity::High,
                Severity::Breaking,
            ][fail_on as usize % 5];
            Some(driftgate::job::check::diff_report(&base, &head, fail_on))
        }
        Build::Calendar(c) => calendar(c),
    }
}

fn pick(head: &mut [Value], i: u8) -> Option<&mut Value> {
    let n = head.len();
    if n == 0 {
        return None;
    }
    head.get_mut(i as usize % n)
}

fn apply(head: &mut Vec<Value>, step: Step) {
    match step {
        Step::Keep(_) => {}
        Step::Remove(i) => {
            if !head.is_empty() {
                let n = head.len();
                head.remove(i as usize % n);
            }
        }
        Step::Describe(i, d) => {
            if let Some(t) = pick(head, i) {
                match d {
                    Some(d) => t["description"] = d.0.into(),
                    None => {
                        t.as_object_mut().map(|o| o.remove("description"));
                    }
                }
            }
        }
        Step::Rename(i, name) => {
            if let Some(t) = pick(head, i) {
                t["name"] = name.0.into();
            }
        }
        Step::DropParam(i, p) => {
            if let Some(props) =
                pick(head, i).and_then(|t| t["inputSchema"]["properties"].as_object_mut())
            {
                if let Some(k) = props.keys().nth(p as usize % props.len().max(1)).cloned() {
                    props.remove(&k);
                }
            }
        }
        Step::Retype(i, p, ty) => {
            if let Some(props) =
                pick(head, i).and_then(|t| t["inputSchema"]["properties"].as_object_mut())
            {
                let n = props.len().max(1);
                if let Some((_, v)) = props.iter_mut().nth(p as usize % n) {
                    v["type"] = TYPES[ty as usize % TYPES.len()].into();
                }
            }
        }
        Step::AddParam(i, p) => {
            if let Some(t) = pick(head, i) {
                let mut schema = json!({"type": TYPES[p.ty as usize % TYPES.len()]});
                if let Some(d) = &p.description {
                    schema["description"] = d.0.clone().into();
                }
                if let Some(props) = t["inputSchema"]["properties"].as_object_mut() {
                    props.insert(p.name.0.clone(), schema);
                }
                if p.required {
                    if let Some(req) = t["inputSchema"]["required"].as_array_mut() {
                        req.push(p.name.0.into());
                    } else {
                        t["inputSchema"]["required"] = json!([p.name.0]);
                    }
                }
            }
        }
        Step::Add(tool) => head.push(tool.to_value()),
    }
}

/// The calendar example's `check` report (a routing regression with flips, drift and a diff),
/// made by the real binary once and committed as `fuzz/data/calendar-check.json`.
const CALENDAR: &str = include_str!("../data/calendar-check.json");

const CALENDAR_TOOLS: &[&str] = &[
    "schedule_appointment",
    "reschedule_appointment",
    "cancel_appointment",
    "list_appointments",
    "find_available_slots",
    "get_appointment",
    "send_reminder",
    "add_appointment_note",
    "check_in_patient",
];

/// Replace `from` in every string and object key of a JSON tree.
fn rename(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) => {
            if s.contains(from) {
                *s = s.replace(from, to)
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rename(x, from, to)),
        Value::Object(o) => {
            let entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
            for (k, mut x) in entries {
                rename(&mut x, from, to);
                o.insert(k.replace(from, to), x);
            }
        }
        _ => {}
    }
}

fn calendar(c: Calendar) -> Option<Report> {
    static BASE: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let mut v = BASE
        .get_or_init(|| serde_json::from_str(CALENDAR).expect("calendar report"))
        .clone();
    for (i, name) in c.renames.into_iter().take(4) {
        let from = CALENDAR_TOOLS[i as usize % CALENDAR_TOOLS.len()];
        // A name that is blank, or already another tool's, would merge two tools: not a report
        // the gate can make.
        if name.0.trim().is_empty() || CALENDAR_TOOLS.iter().any(|t| name.0.contains(t)) {
            continue;
        }
        rename(&mut v, from, &name.0);
    }
    for (slot, text) in c.texts.into_iter().take(24) {
        let t = Value::from(text.0);
        let k = slot % 16;
        match k {
            0 => v["verdict"]["reason"] = t,
            1 => v["head"]["file"] = t,
            2 => v["head"]["source"] = t,
            3 => v["base"]["source"] = t,
            4 => v["router"]["model"] = t,
            // (Not `router.kind`: the gate writes it from its own vocabulary.)
            5 => v["diff"]["tools"][0]["changes"][1]["message"] = t,
            6 => v["suite"]["source"] = t,
            7 => v["notes"].as_array_mut()?.push(t),
            8..=12 => {
                let flips = v["routing"]["flips"].as_array_mut()?;
                let n = flips.len();
                let f = &mut flips[(slot as usize / 16) % n];
                let key = ["id", "prompt", "expect", "base", "head"][(k - 8) as usize];
                f[key] = t;
            }
            13 => v["diff"]["tools"][0]["changes"][0]["after"] = t,
            14 => v["diff"]["tools"][0]["changes"][0]["before"] = t,
            _ => v["diff"]["tools"][0]["changes"][0]["message"] = t,
        }
    }
    if let Some((a, b, message)) = c.lint_finding {
        v["lint"]["introduced"] = json!([{
            "rule": "confusable-pair",
            "level": "warning",
            "tools": [a.0, b.0],
            "message": message.0,
        }]);
    }
    if let Some(e) = c.routing_error {
        v["routing"]["errors"] = json!([e.0]);
    }
    Report::from_json(&v.to_string(), "calendar.json").ok()
}

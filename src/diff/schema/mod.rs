//! Structural comparison of JSON Schemas, emitting findings named by rules of the law.
//!
//! The walk decides the direction (narrowing vs widening) of: properties/required, type, enum
//! and const, numeric/length/item/contains bounds, pattern, multipleOf, additionalProperties,
//! items and tuples, `not`, dependencies. Local `$ref`s are followed (`refs`); `allOf`
//! conjuncts are laid together and `anyOf`/`oneOf` compared branch by branch, each branch
//! split by JSON type (`branches`). What stays undecided (a warning): conditionals, `format`,
//! remote references, conjuncts that bound one keyword differently, overlap inside a `oneOf`.

use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

mod branches;
mod refs;

use super::law::{RuleId, Severity};
use serde_json::{Map, Value};

/// One schema finding: rule id, JSON pointer (inside the tool definition), message, values.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule: RuleId,
    pub pointer: String,
    pub message: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

fn f(
    rule: RuleId,
    pointer: &str,
    message: String,
    before: Option<&Value>,
    after: Option<&Value>,
) -> Finding {
    Finding {
        rule,
        pointer: pointer.to_string(),
        message,
        before: before.cloned(),
        after: after.cloned(),
    }
}

/// Lower bounds: raising or adding them narrows. Upper bounds: lowering or adding them narrows.
/// (The numeric ones, minimum/maximum and their exclusive forms, are compared together by
/// `numeric_bound`.)
const LOWER: [&str; 4] = ["minLength", "minItems", "minProperties", "minContains"];
const UPPER: [&str; 4] = ["maxLength", "maxItems", "maxProperties", "maxContains"];

/// The largest integer JSON carries exactly (RFC 7493): an integer bound at or past it excludes
/// nothing a client can send.
const SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// One side's effective numeric bound: the value, whether it is exclusive, and the keyword that
/// set it. Draft 4's boolean `exclusiveMinimum: true` makes `minimum` exclusive; from draft 6 on
/// `exclusiveMinimum` is a number of its own, and the tighter of the two holds. On an integer an
/// exclusive bound is the next integer inclusive (`> 0` is `>= 1`).
fn numeric_bound(m: &Map<String, Value>, lower: bool) -> Option<(f64, bool, &'static str)> {
    let (incl, excl) = if lower {
        ("minimum", "exclusiveMinimum")
    } else {
        ("maximum", "exclusiveMaximum")
    };
    let draft4 = m.get(excl) == Some(&Value::Bool(true));
    let mut found: Vec<(f64, bool, &'static str)> = Vec::new();
    if let Some(v) = m.get(incl).and_then(Value::as_f64) {
        found.push((v, draft4, if draft4 { excl } else { incl }));
    }
    if let Some(v) = m.get(excl).and_then(Value::as_f64) {
        found.push((v, true, excl));
    }
    let integer = m.get("type").and_then(Value::as_str) == Some("integer");
    let normal = |(v, x, k): (f64, bool, &'static str)| match (integer, lower, x) {
        (false, ..) => (v, x, k),
        (true, true, true) => (v.floor() + 1.0, false, k),
        (true, true, false) => (v.ceil(), false, k),
        (true, false, true) => (v.ceil() - 1.0, false, k),
        (true, false, false) => (v.floor(), false, k),
    };
    found
        .into_iter()
        .map(normal)
        .reduce(|a, b| if tighter(b, a, lower) { b } else { a })
        .filter(|(v, _, _)| {
            !(integer
                && (if lower {
                    *v <= -SAFE_INTEGER
                } else {
                    *v >= SAFE_INTEGER
                }))
        })
}

/// Does bound `a` admit fewer values than `b`? Further in, or as far but exclusive.
fn tighter(a: (f64, bool, &str), b: (f64, bool, &str), lower: bool) -> bool {
    if a.0 == b.0 {
        a.1 && !b.1
    } else {
        (a.0 > b.0) == lower
    }
}

/// Compared whole; any change is undecidable (the combinators reach here only when their
/// branches disagree on a keyword, `$ref` only when it is remote or names nothing).
const OPAQUE: [&str; 9] = [
    "anyOf", "oneOf", "allOf", "not", "$ref", "if", "then", "else", "format",
];
/// Text the model reads, reported as parameter description changes.
const TEXT: [&str; 2] = ["description", "title"];
/// Keywords handled explicitly (everything else falls into the generic RuleId::SchemaChanged).
/// Definitions are judged where a `$ref` uses them; one nothing uses changes no call.
const HANDLED: [&str; 26] = [
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "type",
    "properties",
    "required",
    "enum",
    "const",
    "multipleOf",
    "additionalProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "pattern",
    "uniqueItems",
    "default",
    "$schema",
    "$defs",
    "definitions",
    "not",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "$comment",
];

/// Subschema pairs one comparison visits at most. References and branches multiply the walk
/// (each old branch is tried against each new one; a hostile `$ref` graph doubles per level);
/// past this the rest is one undecided warning.
const MAX_VISITS: usize = 20_000;
/// Comparisons nested in one another at most: deeper than any schema JSON's nesting limit
/// (128) allows through properties, shallow enough for a 2 MiB thread stack.
const MAX_DEPTH: usize = 96;
/// Bytes of subschema text one comparison serialises at most to remember its trials.
const MAX_DIGESTED: usize = 8 << 20;

/// `true`: what a missing `items`, `additionalItems` or dependency accepts.
static ANY: Value = Value::Bool(true);

/// Compare two schemas rooted at `ptr` (e.g. `/inputSchema`).
pub fn compare(old: &Value, new: &Value, ptr: &str) -> Vec<Finding> {
    if old == new {
        return Vec::new();
    }
    let refs = [refs::Refs::new(old), refs::Refs::new(new)];
    let mut w = Walker {
        root: ptr,
        refs_differ: refs[0].differ(&refs[1]),
        refs,
        expanding: Vec::new(),
        visits: 0,
        trials: HashMap::new(),
        refs_swapped: false,
        digested: 0,
        depth: 0,
    };
    let mut out = Vec::new();
    w.walk(old, new, ptr, &mut out);
    // A spent budget is said at the root whatever the trials made of it: a trial cut short
    // finds nothing, which would read as "accepts everything".
    if w.visits > MAX_VISITS
        && !out
            .iter()
            .any(|f| f.rule == RuleId::SchemaChanged && f.pointer == ptr)
    {
        out.push(spent(ptr));
    }
    out
}

fn spent(ptr: &str) -> Finding {
    f(
        RuleId::SchemaChanged,
        ptr,
        format!(
            "too large to compare (over {MAX_VISITS} subschema pairs, {MAX_DEPTH} nested \
             comparisons or {} MiB of trial text): the rest is undecided",
            MAX_DIGESTED >> 20
        ),
        None,
        None,
    )
}

/// One comparison's state: each side's references, the reference pairs being expanded (a
/// recursive schema repeats one), and the visit budget.
struct Walker<'a> {
    /// Where the compared schema sits in the tool: its own properties are the parameters.
    root: &'a str,
    refs: [refs::Refs<'a>; 2],
    refs_differ: bool,
    expanding: Vec<[Vec<String>; 2]>,
    visits: usize,
    /// Trial comparisons done, by (old digest, new digest, pointer, sides swapped).
    trials: HashMap<(u64, u64, String, bool), Vec<Finding>>,
    refs_swapped: bool,
    /// Bytes of trial sides serialised to remember them.
    digested: usize,
    /// Comparisons nested now (`node` in `node`).
    depth: usize,
}

impl Walker<'_> {
    fn walk(&mut self, old: &Value, new: &Value, ptr: &str, out: &mut Vec<Finding>) {
        if old == new && !self.refs_differ {
            return;
        }
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return; // said once, at the root (`compare`)
        }
        let (o, n) = (self.refs[0].resolve(old), self.refs[1].resolve(new));
        if let Some(r) = &n.missing {
            if o.missing.as_ref() != Some(r) {
                out.push(f(
                    RuleId::SchemaInvalid,
                    &format!("{ptr}/$ref"),
                    format!("`$ref` {r} names nothing in the new schema"),
                    old.get("$ref"),
                    new.get("$ref"),
                ));
            }
        }
        let key = [o.chain, n.chain];
        if key.iter().any(|c| !c.is_empty()) {
            // A recursive schema comes back to a pair already being compared: its change was
            // (or will be) found at the first expansion.
            if self.expanding.contains(&key) {
                return;
            }
            self.expanding.push(key);
            self.node(&o.value, &n.value, ptr, out);
            self.expanding.pop();
        } else {
            self.node(&o.value, &n.value, ptr, out);
        }
    }

    /// Compare two nodes whose own references are followed. Every comparison nests through
    /// here; past MAX_DEPTH (a conjunct or branch that refers back to its own schema lays itself
    /// in forever) the comparison is spent, and `compare` says so.
    fn node(&mut self, old: &Value, new: &Value, ptr: &str, out: &mut Vec<Finding>) {
        if old == new && !self.refs_differ {
            return;
        }
        if self.depth >= MAX_DEPTH {
            self.visits = MAX_VISITS + 1;
            return;
        }
        self.depth += 1;
        self.nested(old, new, ptr, out);
        self.depth -= 1;
    }

    fn nested(&mut self, old: &Value, new: &Value, ptr: &str, out: &mut Vec<Finding>) {
        // `true` is the empty schema: compared with one that says something, keyword by keyword.
        let empty = Map::new();
        let open = |v: &Value, other: &Value| v == &Value::Bool(true) && other.is_object();
        let o = if open(old, new) {
            Some(&empty)
        } else {
            old.as_object()
        };
        let n = if open(new, old) {
            Some(&empty)
        } else {
            new.as_object()
        };
        let (Some(o), Some(n)) = (o, n) else {
            // Boolean schemas or junk: `true` accepts everything, `false` nothing.
            let rule = match (old, new) {
                (a, b) if a == b => return,
                (Value::Bool(true), _) | (_, Value::Bool(false)) => RuleId::TypeNarrowed,
                (_, Value::Bool(true)) | (Value::Bool(false), _) => RuleId::TypeWidened,
                _ => RuleId::SchemaChanged,
            };
            out.push(f(rule, ptr, "schema replaced".into(), Some(old), Some(new)));
            return;
        };
        if (o.contains_key("allOf") || n.contains_key("allOf")) && self.conjunction(o, n, ptr, out)
        {
            return;
        }
        if (branches::sum_key(o).is_some() || branches::sum_key(n).is_some())
            && self.sum(o, n, ptr, out)
        {
            return;
        }
        self.keywords(o, n, ptr, out);
    }

    /// The same keywords compared on both sides, one rule each.
    fn keywords(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) {
        text(o, n, ptr, out);
        // A keyword whose new value is of the wrong kind is its own (breaking) finding; the
        // other comparisons see the old value there, so `type: 7` is not read as "any type"
        // (widening).
        let invalid = invalid_keywords(n);
        let mut fixed;
        let n = if invalid.is_empty() {
            n
        } else {
            fixed = n.clone();
            for (key, why) in invalid {
                if o.get(key) == n.get(key) {
                    continue;
                }
                out.push(f(
                    RuleId::SchemaInvalid,
                    &format!("{ptr}/{key}"),
                    format!("`{key}` is not valid JSON Schema: {why}"),
                    o.get(key),
                    n.get(key),
                ));
                match o.get(key) {
                    Some(v) => fixed.insert(key.to_string(), v.clone()),
                    None => fixed.remove(key),
                };
            }
            &fixed
        };
        types(o, n, ptr, out);
        properties(self, o, n, ptr, out);
        enums(o, n, ptr, out);
        bounds(o, n, ptr, out);
        additional(self, o, n, ptr, out);
        self.items(o, n, ptr, out);
        default(o, n, ptr, out);
        self.not(o, n, ptr, out);
        self.dependencies(o, n, ptr, out);
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys {
            let k = key.as_str();
            let handled = HANDLED.contains(&k)
                || TEXT.contains(&k)
                || LOWER.contains(&k)
                || UPPER.contains(&k);
            if !handled && o.get(k) != n.get(k) {
                let why = if OPAQUE.contains(&k) {
                    "cannot be decided statically"
                } else {
                    "unrecognised keyword"
                };
                out.push(f(
                    RuleId::SchemaChanged,
                    &format!("{ptr}/{}", escape(k)),
                    format!("`{k}` changed ({why})"),
                    o.get(k),
                    n.get(k),
                ));
            }
        }
    }

    /// One side's `$ref` resolution as an owned schema (a branch or conjunct laid in).
    fn resolver(&self, side: usize) -> impl Fn(&Value) -> Value {
        let refs = self.refs[side];
        move |v| refs.resolve(v).value.into_owned()
    }

    /// Compare `a` to `b` without reporting: what the walk would find. Remembered: nested
    /// sums ask the same inner pairs again from every outer pairing, which is exponential in
    /// the nesting otherwise. A trial the budget cut short is not remembered.
    fn trial(&mut self, a: &Value, b: &Value, ptr: &str) -> Vec<Finding> {
        if self.visits > MAX_VISITS {
            return Vec::new(); // spent: `compare` says so at the root
        }
        let (ta, tb) = (a.to_string(), b.to_string());
        // Remembering costs the text of both sides: past MAX_DIGESTED bytes the comparison is
        // too large to finish, and is spent like the visit budget.
        self.digested += ta.len() + tb.len();
        if self.digested > MAX_DIGESTED {
            self.visits = MAX_VISITS + 1;
            return Vec::new();
        }
        let digest = |t: &str| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            t.hash(&mut h);
            h.finish()
        };
        let key = (digest(&ta), digest(&tb), ptr.to_string(), self.refs_swapped);
        if let Some(found) = self.trials.get(&key) {
            return found.clone();
        }
        let mut found = Vec::new();
        self.walk(a, b, ptr, &mut found);
        if self.visits <= MAX_VISITS {
            self.trials.insert(key, found.clone());
        }
        found
    }

    /// `walk(b, a)`: `b` read against the new root, `a` against the old (for `not`, whose
    /// direction is reversed).
    fn reversed(&mut self, a: &Value, b: &Value, ptr: &str) -> Vec<Finding> {
        self.refs.swap(0, 1);
        self.refs_swapped = !self.refs_swapped;
        let found = self.trial(b, a, ptr);
        self.refs.swap(0, 1);
        self.refs_swapped = !self.refs_swapped;
        found
    }
}

/// How near a new branch is to an old one: worst severity, undecided-or-worse count, and
/// whether it sits elsewhere (a tie goes to the same place).
type Rank = (Option<Severity>, usize, bool);

/// How a trial came out: the worst severity found and how many findings undecided or worse.
fn score(found: &[Finding]) -> (Option<Severity>, usize) {
    let sev = |f: &Finding| f.rule.rule().severity;
    (
        found.iter().map(sev).max(),
        found.iter().filter(|f| sev(f) >= Severity::Warning).count(),
    )
}

/// Nothing in a trial is undecided or worse: everything the old accepted, the new accepts.
fn accepts_all(found: &[Finding]) -> bool {
    score(found).1 == 0
}

impl Walker<'_> {
    /// A side with `allOf`: its conjuncts laid into one schema on both sides, compared, and the
    /// findings put back where their keywords were written. `false` when the conjuncts
    /// disagree on a keyword (the keyword loop then calls the change undecided).
    fn conjunction(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) -> bool {
        let lay = |w: &Self, side: usize, m: &Map<String, Value>| {
            if !m.contains_key("allOf") {
                return Some((m.clone(), branches::here(m)));
            }
            branches::flatten(m, w.resolver(side))
        };
        let (Some((lo, oo)), Some((ln, on))) = (lay(self, 0, o), lay(self, 1, n)) else {
            return false;
        };
        let mut found = Vec::new();
        self.node(&Value::Object(lo), &Value::Object(ln), ptr, &mut found);
        branches::relocate(&mut found, ptr, ("", &on), ("", &oo));
        out.extend(found);
        true
    }

    /// A side with `anyOf`/`oneOf`: the new schema accepts what the old did when each old
    /// branch's values of each JSON type are accepted by some new branch. Each old branch's
    /// piece of a type is compared with every new piece of that type; one no new piece accepts
    /// reports the findings of its nearest (fewest undecided or breaking findings, the same
    /// position on a tie). A new branch no old piece was nearest to widens. `false` when a
    /// branch disagrees with its parent on a keyword.
    fn sum(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) -> bool {
        let split = |w: &Self, side: usize, m: &Map<String, Value>| {
            branches::distribute(m, w.resolver(side))
        };
        let (Some(ob), Some(nb)) = (split(self, 0, o), split(self, 1, n)) else {
            return false;
        };
        text(o, n, ptr, out);
        default(o, n, ptr, out);
        let split = |bs: &[branches::Branch]| -> Vec<(usize, &'static str, Value)> {
            bs.iter()
                .enumerate()
                .flat_map(|(i, b)| {
                    branches::pieces(&b.value)
                        .into_iter()
                        .map(move |(t, p)| (i, t, p))
                })
                .collect()
        };
        let (op, np) = (split(&ob), split(&nb));
        let mut found: Vec<Finding> = Vec::new();
        let mut matched = vec![false; nb.len()];
        let mut refused = Vec::new();
        for (i, t, a) in &op {
            // (rank, new branch, what the trial found): the nearest new piece so far.
            let mut best: Option<(Rank, usize, Vec<Finding>)> = None;
            for (j, u, b) in &np {
                if t != u && !(*t == "integer" && *u == "number") {
                    continue;
                }
                let trial = self.trial(a, b, ptr);
                let (worst, undecided) = score(&trial);
                let rank = (worst, undecided, ob[*i].at != nb[*j].at);
                if best.as_ref().is_none_or(|(r, ..)| rank < *r) {
                    best = Some((rank, *j, trial));
                }
            }
            let Some((_, j, mut trial)) = best else {
                refused.push((*i, *t));
                continue;
            };
            // The new branch an old one is nearest to took its values over (narrowed or not):
            // it is no new branch.
            matched[j] = true;
            let (a, b) = (&ob[*i], &nb[j]);
            branches::relocate(&mut trial, ptr, (&b.at, &b.origins), (&a.at, &a.origins));
            found.extend(trial);
        }
        for (b, matched) in nb.iter().zip(matched) {
            if !matched && !ob.is_empty() {
                found.push(f(
                    RuleId::TypeWidened,
                    &format!("{ptr}{}", b.at),
                    "a branch accepts values no old branch did".into(),
                    None,
                    None,
                ));
            }
        }
        // The types a node's own `type` lost or gained are judged over the union of branches;
        // a type no new branch accepts at all is said once, there or per branch.
        let mut union = Vec::new();
        types(o, n, ptr, &mut union);
        if union.is_empty() {
            for (i, t) in refused {
                found.push(f(
                    RuleId::TypeNarrowed,
                    &format!("{ptr}{}", ob[i].at),
                    format!("no branch of the new schema accepts the {t} values this one did"),
                    None,
                    None,
                ));
            }
        } else {
            let at = format!("{ptr}/type");
            let typed = [
                RuleId::TypeNarrowed,
                RuleId::TypeWidened,
                RuleId::TypeChanged,
            ];
            found.retain(|f| !(f.pointer == at && typed.contains(&f.rule)));
            found.extend(union);
        }
        let (ok, nk) = (branches::sum_key(o), branches::sum_key(n));
        // Two branches can both accept a value only if they accept a common type.
        let overlap = np
            .iter()
            .any(|(j, t, _)| np.iter().any(|(k, u, _)| j < k && t == u));
        if nk == Some("oneOf") && overlap && (ok != nk || nb.len() > ob.len()) {
            // oneOf accepts a value only when exactly one branch does: a new branch that
            // overlaps another refuses what both accept. Whether they overlap within a type is
            // not decided here.
            found.push(f(
                RuleId::SchemaChanged,
                &format!("{ptr}/oneOf"),
                "`oneOf` gained a branch: a value two branches accept is refused".into(),
                o.get("oneOf").or(o.get("anyOf")),
                n.get("oneOf"),
            ));
        }
        let mut seen = BTreeSet::new();
        found.retain(|f| seen.insert((f.rule, f.pointer.clone(), f.message.clone())));
        out.extend(found);
        true
    }

    /// `items` as one schema for every element, or as a tuple (`prefixItems` + `items` from
    /// 2020-12, a list of `items` + `additionalItems` before): compared position by position,
    /// a position one side leaves to its rest schema compared with that.
    fn items(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) {
        let (to, tn) = (Tuple::of(o), Tuple::of(n));
        if !to.tuple && !tn.tuple {
            if o.get("additionalItems") != n.get("additionalItems") {
                out.push(f(
                    RuleId::SchemaChanged,
                    &format!("{ptr}/additionalItems"),
                    "`additionalItems` changed (ignored: `items` is not a list)".into(),
                    o.get("additionalItems"),
                    n.get("additionalItems"),
                ));
            }
            match (to.rest, tn.rest) {
                (Some(a), Some(b)) => self.walk(a, b, &format!("{ptr}/items"), out),
                (None, None) => {}
                (a, b) => out.push(f(
                    if b.is_some() {
                        RuleId::TypeNarrowed
                    } else {
                        RuleId::TypeWidened
                    },
                    &format!("{ptr}/items"),
                    "items schema added or removed".into(),
                    a,
                    b,
                )),
            }
            return;
        }
        for i in 0..to.prefix.len().max(tn.prefix.len()) {
            let a = to.prefix.get(i).or(to.rest).unwrap_or(&ANY);
            let b = tn.prefix.get(i).or(tn.rest).unwrap_or(&ANY);
            let key = if i < tn.prefix.len() {
                tn.prefix_key
            } else {
                to.prefix_key
            };
            self.walk(a, b, &format!("{ptr}/{key}/{i}"), out);
        }
        let key = if n.contains_key(tn.rest_key) {
            tn.rest_key
        } else {
            to.rest_key
        };
        let (a, b) = (to.rest.unwrap_or(&ANY), tn.rest.unwrap_or(&ANY));
        self.walk(a, b, &format!("{ptr}/{key}"), out);
    }

    /// `not`: the new schema accepts what the old did when it excludes no more than before,
    /// so its `not` is compared the other way round.
    fn not(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) {
        let (a, b) = (o.get("not"), n.get("not"));
        if a == b {
            return;
        }
        let p = format!("{ptr}/not");
        let (rule, message) = match (a, b) {
            (Some(x), Some(y)) => {
                if accepts_all(&self.reversed(x, y, &p)) {
                    (RuleId::TypeWidened, "`not` excludes no more than it did")
                } else {
                    (
                        RuleId::TypeNarrowed,
                        "`not` now excludes values it admitted",
                    )
                }
            }
            (None, _) => (
                RuleId::TypeNarrowed,
                "`not` added: the values it names are refused",
            ),
            (_, None) => (RuleId::TypeWidened, "`not` removed"),
        };
        out.push(f(rule, &p, message.into(), a, b));
    }

    /// Dependencies: `dependentRequired` (and `dependencies`' list form) names properties a
    /// present one requires; `dependentSchemas` (and the schema form) a schema it imposes.
    /// Requiring more, or a new schema, narrows.
    fn dependencies(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) {
        let empty = Map::new();
        for key in ["dependentRequired", "dependentSchemas", "dependencies"] {
            if o.get(key) == n.get(key) {
                continue;
            }
            let (Some(a), Some(b)) = (
                o.get(key).map_or(Some(&empty), Value::as_object),
                n.get(key).map_or(Some(&empty), Value::as_object),
            ) else {
                out.push(f(
                    RuleId::SchemaChanged,
                    &format!("{ptr}/{key}"),
                    format!("`{key}` changed (not an object)"),
                    o.get(key),
                    n.get(key),
                ));
                continue;
            };
            let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for name in names {
                let p = format!("{ptr}/{key}/{}", escape(name));
                let (x, y) = (a.get(name), b.get(name));
                fn list(v: Option<&Value>) -> Option<BTreeSet<&str>> {
                    match v {
                        None => Some(BTreeSet::new()),
                        Some(Value::Array(l)) => Some(l.iter().filter_map(Value::as_str).collect()),
                        Some(_) => None,
                    }
                }
                if let (Some(lx), Some(ly)) = (list(x), list(y)) {
                    for added in ly.difference(&lx) {
                        let message = format!("when `{name}` is sent, `{added}` is now required");
                        out.push(f(RuleId::BoundTightened, &p, message, x, y));
                    }
                    for gone in lx.difference(&ly) {
                        let message =
                            format!("when `{name}` is sent, `{gone}` is no longer required");
                        out.push(f(RuleId::BoundLoosened, &p, message, x, y));
                    }
                    continue;
                }
                match (x, y) {
                    (Some(x), Some(y)) if x.is_array() == y.is_array() => self.walk(x, y, &p, out),
                    (Some(x), Some(y)) => {
                        let message = format!("`{name}`'s dependency changed form");
                        out.push(f(RuleId::SchemaChanged, &p, message, Some(x), Some(y)));
                    }
                    (None, y) => {
                        let message = format!("a schema is imposed when `{name}` is sent");
                        out.push(f(RuleId::TypeNarrowed, &p, message, None, y));
                    }
                    (x, None) => {
                        let message = format!("no schema is imposed when `{name}` is sent");
                        out.push(f(RuleId::TypeWidened, &p, message, x, None));
                    }
                }
            }
        }
    }
}

/// One side's array items: the positional schemas of a tuple and the schema for the rest.
struct Tuple<'m> {
    tuple: bool,
    prefix: &'m [Value],
    prefix_key: &'static str,
    rest: Option<&'m Value>,
    rest_key: &'static str,
}

impl<'m> Tuple<'m> {
    fn of(m: &'m Map<String, Value>) -> Self {
        // With no rest schema of its own, a tuple's `unevaluatedItems` takes the rest.
        let rest = |key: &'static str| match m.get(key) {
            Some(v) => (Some(v), key),
            None => (m.get("unevaluatedItems"), "unevaluatedItems"),
        };
        if let Some(Value::Array(p)) = m.get("prefixItems") {
            let (rest, rest_key) = rest("items");
            Tuple {
                tuple: true,
                prefix: p,
                prefix_key: "prefixItems",
                rest,
                rest_key,
            }
        } else if let Some(Value::Array(p)) = m.get("items") {
            let (rest, rest_key) = rest("additionalItems");
            Tuple {
                tuple: true,
                prefix: p,
                prefix_key: "items",
                rest,
                rest_key,
            }
        } else {
            Tuple {
                tuple: false,
                prefix: &[],
                prefix_key: "items",
                rest: m.get("items"),
                rest_key: "items",
            }
        }
    }
}

/// The description, title and dialect of a node, each its own finding.
fn text(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    for key in TEXT {
        if o.get(key) != n.get(key) {
            out.push(f(
                RuleId::ParamDescriptionChanged,
                &format!("{ptr}/{key}"),
                format!("{key} changed"),
                o.get(key),
                n.get(key),
            ));
        }
    }
    if o.get("$schema") != n.get("$schema") {
        out.push(f(
            RuleId::SchemaDialectChanged,
            &format!("{ptr}/$schema"),
            "$schema dialect changed".into(),
            o.get("$schema"),
            n.get("$schema"),
        ));
    }
}

fn default(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    if o.get("default") != n.get("default") {
        out.push(f(
            RuleId::DefaultChanged,
            &format!("{ptr}/default"),
            "default changed".into(),
            o.get("default"),
            n.get("default"),
        ));
    }
}

/// RFC 6901 escaping of a pointer segment.
pub fn escape(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
}

/// JSON Schema's type names.
const TYPE_NAMES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// The keywords of `m` whose values are of the wrong kind for JSON Schema, with what was
/// expected.
fn invalid_keywords(m: &Map<String, Value>) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    let type_ok = |v: &Value| match v {
        Value::String(s) => TYPE_NAMES.contains(&s.as_str()),
        Value::Array(a) => {
            !a.is_empty()
                && a.iter()
                    .all(|t| t.as_str().is_some_and(|s| TYPE_NAMES.contains(&s)))
        }
        _ => false,
    };
    if m.get("type").is_some_and(|v| !type_ok(v)) {
        out.push(("type", "expected a type name or a list of them"));
    }
    if m.get("required")
        .is_some_and(|v| !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
    {
        out.push(("required", "expected a list of property names"));
    }
    if m.get("properties").is_some_and(|v| {
        !v.as_object()
            .is_some_and(|p| p.values().all(|s| s.is_object() || s.is_boolean()))
    }) {
        out.push(("properties", "expected an object of schemas"));
    }
    if m.get("enum").is_some_and(|v| !v.is_array()) {
        out.push(("enum", "expected a list of values"));
    }
    out
}

/// The JSON type of a value, as `type` names it.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The values a schema is pinned to: its `enum`, or its `const` as an enum of one.
fn values(m: &Map<String, Value>) -> Option<Vec<Value>> {
    match (m.get("enum"), m.get("const")) {
        (Some(Value::Array(a)), _) => Some(a.clone()),
        (None, Some(c)) => Some(vec![c.clone()]),
        _ => None,
    }
}

/// The types a schema accepts: its `type`, else the types of its pinned values, else the union
/// of its `anyOf`/`oneOf` branches' (when every branch says); `None` = any type.
fn type_set(m: &Map<String, Value>) -> Option<BTreeSet<String>> {
    let mut s: BTreeSet<String> = match m.get("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        Some(_) => return None,
        None => {
            if let Some(vs) = values(m) {
                vs.iter().map(|v| json_type(v).to_string()).collect()
            } else if let Some(branches) = m.get("allOf").and_then(Value::as_array) {
                // Every branch applies: the types the branches that say agree on.
                let mut said = branches
                    .iter()
                    .filter_map(|b| b.as_object().and_then(type_set));
                let first = said.next()?;
                said.fold(first, |acc, t| acc.intersection(&t).cloned().collect())
            } else {
                let branches = ["anyOf", "oneOf"]
                    .iter()
                    .find_map(|k| m.get(*k).and_then(Value::as_array))?;
                let mut all = BTreeSet::new();
                for b in branches {
                    all.extend(type_set(b.as_object()?)?);
                }
                if all.is_empty() {
                    return None;
                }
                all
            }
        }
    };
    // "number" accepts every integer.
    if s.contains("number") {
        s.insert("integer".into());
    }
    Some(s)
}

fn types(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    // An old side whose types hide behind `$ref`, `not` or a conditional is not "any type": what
    // it accepted is undecided (its keyword's own `schema-changed` says so), not narrowed.
    let hidden = ["$ref", "not", "if"].iter().any(|k| o.contains_key(*k));
    let rule = match (type_set(o), type_set(n)) {
        (None, None) => return,
        (None, Some(_)) if hidden => return,
        (None, Some(_)) => RuleId::TypeNarrowed,
        (Some(_), None) => RuleId::TypeWidened,
        (Some(a), Some(b)) if a == b => return, // e.g. "string" vs ["string"]
        (Some(a), Some(b)) if b.is_subset(&a) => RuleId::TypeNarrowed,
        (Some(a), Some(b)) if a.is_subset(&b) => RuleId::TypeWidened,
        _ => RuleId::TypeChanged,
    };
    out.push(f(
        rule,
        &format!("{ptr}/type"),
        "type changed".into(),
        o.get("type"),
        n.get("type"),
    ));
}

fn required(m: &Map<String, Value>) -> BTreeSet<String> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn properties(
    w: &mut Walker,
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let empty = Map::new();
    let op = o
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let np = n
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let (or, nr) = (required(o), required(n));
    for (name, schema) in op {
        let p = format!("{ptr}/properties/{}", escape(name));
        match np.get(name) {
            // A property whose schema is `false` could never be sent: removing it breaks no call.
            None if schema == &Value::Bool(false) => out.push(f(
                RuleId::BoundLoosened,
                &p,
                format!("property `{name}` (schema `false`: never accepted) removed"),
                Some(schema),
                None,
            )),
            None => out.push(f(
                RuleId::PropertyRemoved,
                &p,
                format!("property `{name}` removed"),
                Some(schema),
                None,
            )),
            Some(ns) => w.walk(schema, ns, &p, out),
        }
    }
    // An argument's own object that declared no properties is a free-form map: callers put
    // any key in it, so a property declared there constrains keys they may already send. (The
    // tool's arguments themselves are not: a client sends only the parameters declared.)
    let free = ptr != w.root
        && op.is_empty()
        && !o.contains_key("patternProperties")
        && o.get("additionalProperties") != Some(&Value::Bool(false));
    let governed = o.get("additionalProperties").unwrap_or(&ANY);
    for (name, schema) in np {
        if op.contains_key(name) {
            continue;
        }
        let p = format!("{ptr}/properties/{}", escape(name));
        if nr.contains(name) {
            out.push(f(
                RuleId::PropertyAddedRequired,
                &p,
                format!("required property `{name}` added"),
                None,
                Some(schema),
            ));
        } else if free && !accepts_all(&w.trial(governed, schema, &p)) {
            out.push(f(
                RuleId::TypeNarrowed,
                &p,
                format!(
                    "`{name}` was a free key of an object that declared none; \
                     its values are now constrained"
                ),
                None,
                Some(schema),
            ));
        } else {
            out.push(f(
                RuleId::PropertyAddedOptional,
                &p,
                format!("optional property `{name}` added"),
                None,
                Some(schema),
            ));
        }
    }
    // Required-ness of properties that exist on both sides (new ones were judged above).
    for name in nr.difference(&or) {
        if op.contains_key(name) || !np.contains_key(name) {
            out.push(f(
                RuleId::PropertyBecameRequired,
                &format!("{ptr}/required"),
                format!("`{name}` became required"),
                None,
                Some(&Value::String(name.clone())),
            ));
        }
    }
    for name in or.difference(&nr) {
        if np.contains_key(name) || !op.contains_key(name) {
            out.push(f(
                RuleId::PropertyBecameOptional,
                &format!("{ptr}/required"),
                format!("`{name}` is no longer required"),
                Some(&Value::String(name.clone())),
                None,
            ));
        }
    }
}

fn enums(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    // `const` is an enum of one; the pointer names the keyword the new side uses.
    let key = |m: &Map<String, Value>| {
        if m.contains_key("enum") {
            "enum"
        } else {
            "const"
        }
    };
    let (va, vb) = (values(o), values(n));
    if va == vb {
        return;
    }
    let p = format!("{ptr}/{}", key(if vb.is_some() { n } else { o }));
    let (a, b) = (o.get(key(o)), n.get(key(n)));
    let rule = match (va.as_ref(), vb.as_ref()) {
        (None, Some(_)) => RuleId::EnumAdded,
        (Some(_), None) => RuleId::EnumRemoved,
        (Some(x), Some(y)) => {
            let removed = x.iter().any(|v| !y.contains(v));
            let added = y.iter().any(|v| !x.contains(v));
            match (removed, added) {
                (true, _) => RuleId::EnumNarrowed,
                (false, true) => RuleId::EnumWidened,
                (false, false) => return, // reordered only
            }
        }
        (None, None) => RuleId::SchemaChanged,
    };
    out.push(f(rule, &p, "enum changed".into(), a, b));
}

fn bounds(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    for lower in [true, false] {
        let (a, b) = (numeric_bound(o, lower), numeric_bound(n, lower));
        let rule = match (a, b) {
            (None, None) => continue,
            (None, Some(_)) => RuleId::BoundTightened,
            (Some(_), None) => RuleId::BoundLoosened,
            (Some(x), Some(y)) if (x.0, x.1) == (y.0, y.1) => continue,
            (Some(x), Some(y)) => {
                if tighter(y, x, lower) {
                    RuleId::BoundTightened
                } else {
                    RuleId::BoundLoosened
                }
            }
        };
        let k = b.or(a).map(|(_, _, k)| k).expect("one side has a bound");
        let side = if lower { "lower" } else { "upper" };
        out.push(f(
            rule,
            &format!("{ptr}/{k}"),
            format!("the {side} bound changed"),
            a.and_then(|(_, _, k)| o.get(k)),
            b.and_then(|(_, _, k)| n.get(k)),
        ));
    }
    let num = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_f64);
    for (keys, lower) in [(LOWER, true), (UPPER, false)] {
        for k in keys {
            let (a, b) = (num(o, k), num(n, k));
            let rule = match (a, b) {
                (None, None) => continue,
                (None, Some(_)) => RuleId::BoundTightened,
                (Some(_), None) => RuleId::BoundLoosened,
                (Some(x), Some(y)) if x == y => continue,
                (Some(x), Some(y)) => {
                    if (y > x) == lower {
                        RuleId::BoundTightened
                    } else {
                        RuleId::BoundLoosened
                    }
                }
            };
            out.push(f(
                rule,
                &format!("{ptr}/{k}"),
                format!("`{k}` changed"),
                o.get(k),
                n.get(k),
            ));
        }
    }
    let (a, b) = (o.get("pattern"), n.get("pattern"));
    if a != b {
        let rule = match (a, b) {
            (None, Some(_)) => RuleId::BoundTightened,
            (Some(_), None) => RuleId::BoundLoosened,
            _ => RuleId::PatternChanged,
        };
        out.push(f(
            rule,
            &format!("{ptr}/pattern"),
            "`pattern` changed".into(),
            a,
            b,
        ));
    }
    let (a, b) = (o.get("multipleOf"), n.get("multipleOf"));
    if a != b {
        // Every multiple of the old divisor stays a multiple of the new one iff new divides old.
        let divides = |old: f64, new: f64| {
            let q = old / new;
            new > 0.0 && (q - q.round()).abs() < 1e-9 * q.abs().max(1.0)
        };
        let rule = match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
            (_, None) => RuleId::BoundLoosened,
            (Some(x), Some(y)) if divides(x, y) => RuleId::BoundLoosened,
            _ => RuleId::BoundTightened,
        };
        out.push(f(
            rule,
            &format!("{ptr}/multipleOf"),
            "`multipleOf` changed".into(),
            a,
            b,
        ));
    }
    let uniq = |m: &Map<String, Value>| m.get("uniqueItems") == Some(&Value::Bool(true));
    if uniq(o) != uniq(n) {
        let rule = if uniq(n) {
            RuleId::BoundTightened
        } else {
            RuleId::BoundLoosened
        };
        out.push(f(
            rule,
            &format!("{ptr}/uniqueItems"),
            "`uniqueItems` changed".into(),
            o.get("uniqueItems"),
            n.get("uniqueItems"),
        ));
    }
}

fn additional(
    w: &mut Walker,
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let (a, b) = (o.get("additionalProperties"), n.get("additionalProperties"));
    if a == b {
        return;
    }
    let p = format!("{ptr}/additionalProperties");
    let closed = |v: Option<&Value>| v == Some(&Value::Bool(false));
    let open = |v: Option<&Value>| v.is_none() || v == Some(&Value::Bool(true));
    let rule = if closed(b) && !closed(a) {
        RuleId::AdditionalPropertiesClosed
    } else if closed(a) && !closed(b) || open(b) {
        RuleId::AdditionalPropertiesOpened
    } else if let (Some(x), Some(y)) = (a, b) {
        // Both are schemas for the extra keys: compare them like any schema.
        w.walk(x, y, &p, out);
        return;
    } else {
        RuleId::SchemaChanged
    };
    out.push(f(rule, &p, "additionalProperties changed".into(), a, b));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bound_rules(old: serde_json::Value, new: serde_json::Value) -> Vec<(RuleId, String)> {
        compare(&old, &new, "/s")
            .into_iter()
            .map(|f| (f.rule, f.pointer))
            .collect()
    }

    /// Numeric bounds are compared by the values they admit, not keyword by keyword (found on
    /// mcp-server-fetch 2026.8.18 → 2026.10.10: `exclusiveMinimum: 0` → `minimum: 1` on an
    /// integer was rated a breaking tightening).
    #[test]
    fn numeric_bounds_compare_by_the_values_they_admit() {
        let typed = |t: &str, extra: serde_json::Value| {
            let mut o = json!({ "type": t });
            o.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            o
        };
        let int = |extra| typed("integer", extra);
        let num = |extra| typed("number", extra);
        // The same integers, spelled otherwise: nothing to report.
        assert_eq!(
            bound_rules(
                int(json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1000000})),
                int(json!({"minimum": 1, "maximum": 999999}))
            ),
            []
        );
        assert_eq!(
            bound_rules(int(json!({"minimum": 0.5})), int(json!({"minimum": 1}))),
            []
        );
        // On a number the same spelling excludes 0 < x < 1: tightened, once.
        assert_eq!(
            bound_rules(
                num(json!({"exclusiveMinimum": 0})),
                num(json!({"minimum": 1}))
            ),
            [(RuleId::BoundTightened, "/s/minimum".to_string())]
        );
        // Inclusive → exclusive at the same value excludes it; the reverse admits it.
        assert_eq!(
            bound_rules(
                num(json!({"minimum": 1})),
                num(json!({"exclusiveMinimum": 1}))
            ),
            [(RuleId::BoundTightened, "/s/exclusiveMinimum".to_string())]
        );
        assert_eq!(
            bound_rules(
                num(json!({"exclusiveMaximum": 9})),
                num(json!({"maximum": 9}))
            ),
            [(RuleId::BoundLoosened, "/s/maximum".to_string())]
        );
        // Draft 4's boolean exclusiveMinimum modifies minimum.
        assert_eq!(
            bound_rules(
                num(json!({"minimum": 1})),
                num(json!({"minimum": 1, "exclusiveMinimum": true}))
            ),
            [(RuleId::BoundTightened, "/s/exclusiveMinimum".to_string())]
        );
        // An integer bound at the edge of JSON's exact integers (2^53 − 1) excludes nothing a
        // client can send exactly (RFC 7493): no tightening.
        assert_eq!(
            bound_rules(int(json!({})), int(json!({"maximum": 9007199254740991u64}))),
            []
        );
        assert_eq!(
            bound_rules(
                int(json!({})),
                int(json!({"minimum": -9007199254740991i64}))
            ),
            []
        );
        assert_eq!(
            bound_rules(int(json!({})), int(json!({"maximum": 100}))),
            [(RuleId::BoundTightened, "/s/maximum".to_string())]
        );
        assert_eq!(
            bound_rules(int(json!({"minimum": 3})), int(json!({}))),
            [(RuleId::BoundLoosened, "/s/minimum".to_string())]
        );
        // Length bounds stay per keyword.
        assert_eq!(
            bound_rules(
                json!({"type": "string"}),
                json!({"type": "string", "maxLength": 5})
            ),
            [(RuleId::BoundTightened, "/s/maxLength".to_string())]
        );
    }

    #[test]
    fn values_of_the_wrong_kind_are_invalid_not_widening() {
        let base =
            json!({"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]});
        for (new, at) in [
            (
                json!({"type": "object", "properties": {"p": {"type": 7}}, "required": ["p"]}),
                "/s/properties/p/type",
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string"}}, "required": "p"}),
                "/s/required",
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string"}}, "required": {"p": true}}),
                "/s/required",
            ),
            (
                json!({"type": "thing", "properties": {"p": {"type": "string"}}, "required": ["p"]}),
                "/s/type",
            ),
        ] {
            let found = compare(&base, &new, "/s");
            let rules: Vec<(RuleId, &str)> =
                found.iter().map(|f| (f.rule, f.pointer.as_str())).collect();
            assert_eq!(rules, [(RuleId::SchemaInvalid, at)], "{new}");
        }
        // A valid list of types is no finding of this kind.
        let ok = json!({"type": ["string", "null"]});
        assert!(invalid_keywords(ok.as_object().unwrap()).is_empty());
    }

    fn rules_of(old: serde_json::Value, new: serde_json::Value) -> Vec<RuleId> {
        bound_rules(old, new).into_iter().map(|(r, _)| r).collect()
    }

    /// Found by the evidence bench (docs/evidence.md: Confluent and sentry pairs): `const` was
    /// "cannot be decided" (a warning), so a parameter pinned to one value, or pinned to another,
    /// passed the gate. It is an enum of one.
    #[test]
    fn const_is_an_enum_of_one() {
        let s = json!({"type": "string"});
        let a = json!({"type": "string", "const": "a"});
        let b = json!({"type": "string", "const": "b"});
        assert_eq!(rules_of(s.clone(), a.clone()), [RuleId::EnumAdded]);
        assert_eq!(rules_of(a.clone(), b), [RuleId::EnumNarrowed]);
        assert_eq!(rules_of(a.clone(), s), [RuleId::EnumRemoved]);
        let e = json!({"type": "string", "enum": ["a", "c"]});
        assert_eq!(rules_of(a, e), [RuleId::EnumWidened]);
    }

    /// Found by the evidence bench (sentry's any_of/to_equivalent_type, type/extend_from_const):
    /// a schema whose types live in `anyOf`/`oneOf` branches or in a `const`/`enum` was read as
    /// "any type", so writing the same types as `type` was rated a breaking narrowing.
    #[test]
    fn types_are_read_through_branches_and_values() {
        let branches = json!({"anyOf": [{"type": "string"}, {"type": "number"}]});
        let same = json!({"type": ["string", "number"]});
        let rules = rules_of(branches.clone(), same);
        assert!(!rules.contains(&RuleId::TypeNarrowed), "{rules:?}");
        let wider = json!({"type": ["string", "number", "boolean"]});
        assert!(!rules_of(branches.clone(), wider).contains(&RuleId::TypeNarrowed));
        let narrower = json!({"type": "string"});
        assert!(rules_of(branches, narrower).contains(&RuleId::TypeNarrowed));
        // allOf → anyOf with the same types (Confluent's combined-schema pairs), and a `$ref`
        // inlined (its target's types are not followed), are no narrowing either.
        let all = json!({"allOf": [{"type": "string"}, {"maxLength": 5}]});
        let any = json!({"anyOf": [{"type": "string"}, {"maxLength": 5, "type": "string"}]});
        assert!(!rules_of(all, any).contains(&RuleId::TypeNarrowed));
        let by_ref = json!({"$ref": "#/definitions/s", "definitions": {"s": {"type": "string"}}});
        assert!(!rules_of(by_ref, json!({"type": "string"})).contains(&RuleId::TypeNarrowed));
        let pinned = json!({"const": "x"});
        let rules = rules_of(pinned, json!({"type": "string"}));
        assert!(!rules.contains(&RuleId::TypeNarrowed), "{rules:?}");
    }

    /// Found by the evidence bench (both checkers call these breaking): a changed `pattern` and
    /// a changed `multipleOf` were "cannot be decided" warnings.
    #[test]
    fn a_changed_pattern_or_divisor_is_breaking_unless_it_admits_the_old() {
        let p = |re: &str| json!({"type": "string", "pattern": re});
        assert_eq!(rules_of(p("^a"), p("^b")), [RuleId::PatternChanged]);
        let m = |d: f64| json!({"type": "number", "multipleOf": d});
        assert_eq!(rules_of(m(2.0), m(4.0)), [RuleId::BoundTightened]);
        assert_eq!(rules_of(m(2.0), m(3.0)), [RuleId::BoundTightened]);
        assert_eq!(rules_of(m(4.0), m(2.0)), [RuleId::BoundLoosened]);
        assert_eq!(rules_of(m(0.5), m(0.25)), [RuleId::BoundLoosened]);
        assert_eq!(
            rules_of(json!({"type": "number"}), m(2.0)),
            [RuleId::BoundTightened]
        );
        assert_eq!(
            rules_of(m(2.0), json!({"type": "number"})),
            [RuleId::BoundLoosened]
        );
    }

    /// Found by the evidence bench (Confluent: removing false from a closed content model): a
    /// property whose schema is `false` could never be sent; removing it breaks no call.
    #[test]
    fn removing_a_property_no_call_could_send_is_not_breaking() {
        let old = json!({"type": "object", "additionalProperties": false,
                         "properties": {"a": {"type": "string"}, "foo": false}});
        let new = json!({"type": "object", "additionalProperties": false,
                         "properties": {"a": {"type": "string"}}});
        let rules = rules_of(old, new);
        assert!(!rules.contains(&RuleId::PropertyRemoved), "{rules:?}");
        assert!(
            rules
                .iter()
                .all(|r| r.rule().severity < crate::diff::law::Severity::High),
            "{rules:?}"
        );
    }

    fn pointed(old: serde_json::Value, new: serde_json::Value) -> Vec<(RuleId, String)> {
        bound_rules(old, new)
    }

    fn breaking(found: &[(RuleId, String)]) -> bool {
        found
            .iter()
            .any(|(r, _)| r.rule().severity == crate::diff::law::Severity::Breaking)
    }

    /// Found by the evidence bench (Confluent's reference schemas, sentry's
    /// factor_out_definitions_and_change): a change behind a `$ref` was "cannot be decided".
    /// References are followed and the change is said where the argument uses it.
    #[test]
    fn a_change_behind_a_reference_is_judged_where_it_is_used() {
        let side = |t: &str| {
            json!({"type": "object", "properties": {"when": {"$ref": "#/$defs/Slot"}},
                   "$defs": {"Slot": {"type": "object", "properties": {"at": {"type": t}}}}})
        };
        assert_eq!(
            pointed(side("string"), side("integer")),
            [(
                RuleId::TypeChanged,
                "/s/properties/when/properties/at/type".into()
            )]
        );
        // The same content under another definition's name is no change.
        let renamed = json!({"type": "object", "properties": {"when": {"$ref": "#/definitions/S"}},
            "definitions": {"S": {"type": "object", "properties": {"at": {"type": "string"}}}}});
        assert_eq!(pointed(side("string"), renamed), []);
        // Inlined: no change either; a reference to nothing is an invalid schema.
        let inlined = json!({"type": "object", "properties": {"when":
            {"type": "object", "properties": {"at": {"type": "string"}}}}});
        assert_eq!(pointed(side("string"), inlined), []);
        let dangling = json!({"type": "object", "properties": {"when": {"$ref": "#/$defs/Gone"}}});
        let found = pointed(side("string"), dangling);
        assert!(
            found.contains(&(RuleId::SchemaInvalid, "/s/properties/when/$ref".into())),
            "{found:?}"
        );
    }

    /// A recursive schema ends, and a reference graph that doubles per level is bounded.
    #[test]
    fn recursive_and_exploding_references_end() {
        let tree = |t: &str| {
            json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {
                "label": {"type": t}, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}})
        };
        assert_eq!(
            pointed(tree("string"), tree("number")),
            [(RuleId::TypeChanged, "/s/properties/label/type".into())]
        );
        let laughs = |leaf: &str| {
            let mut defs = serde_json::Map::new();
            for i in 0..40 {
                let next = format!("#/$defs/d{}", i + 1);
                defs.insert(
                    format!("d{i}"),
                    json!({"type": "object", "properties": {
                        "a": {"$ref": next}, "b": {"$ref": next}}}),
                );
            }
            defs.insert("d40".into(), json!({"type": leaf}));
            json!({"$ref": "#/$defs/d0", "$defs": defs})
        };
        let start = std::time::Instant::now();
        let found = pointed(laughs("string"), laughs("number"));
        assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
        assert!(
            found.iter().any(|(r, _)| *r == RuleId::SchemaChanged),
            "the budget's end is said: {found:?}"
        );
    }

    /// Found by the evidence bench (Confluent's composed schemas, sentry's any_of fixtures):
    /// `anyOf`/`oneOf` were compared whole, so a narrowed branch was only a warning.
    #[test]
    fn sums_are_compared_branch_by_branch() {
        let any = |bs: serde_json::Value| json!({"anyOf": bs});
        // A branch's bound tightened: breaking, at that branch.
        let found = pointed(
            any(json!([{"type": "string"}, {"type": "integer", "maximum": 10}])),
            any(json!([{"type": "string"}, {"type": "integer", "maximum": 5}])),
        );
        assert_eq!(
            found,
            [(RuleId::BoundTightened, "/s/anyOf/1/maximum".into())]
        );
        // Reordered: nothing; a branch added: widened, not breaking.
        let ab = any(json!([{"type": "string"}, {"type": "null"}]));
        assert_eq!(
            pointed(
                ab.clone(),
                any(json!([{"type": "null"}, {"type": "string"}]))
            ),
            []
        );
        let wider = pointed(
            json!({"type": "string", "description": "d"}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"}),
        );
        assert!(!breaking(&wider), "pydantic's Optional added: {wider:?}");
        // Optional removed: the null values are refused.
        let narrower = pointed(ab, json!({"type": "string"}));
        assert!(breaking(&narrower), "{narrower:?}");
        // A value is accepted by a sum if any branch takes it: `{properties: …}` takes every
        // string, so a branch that took strings is still covered (sentry's any_of/objects_1).
        let old =
            any(json!([{"properties": {"foo": {}}}, {"properties": {"t": {"const": "bar"}}}]));
        let new = any(json!([{"type": "object", "properties": {"foo": {}}},
                             {"properties": {"t": {"const": "bar"}}}]));
        assert!(!breaking(&pointed(old, new.clone())));
        // oneOf gaining a branch may refuse values two branches take: said, as a warning.
        let one = |bs: serde_json::Value| json!({"oneOf": bs});
        let found = pointed(
            one(json!([{"type": "string"}])),
            one(json!([{"type": "string"}, {"type": "string", "maxLength": 3}])),
        );
        assert!(
            found.contains(&(RuleId::SchemaChanged, "/s/oneOf".into())),
            "{found:?}"
        );
        // Branches of different types cannot both take a value (github-mcp-server's labels:
        // a name, or an object with a name and a rationale): no warning.
        let found = pointed(
            json!({"type": "string"}),
            one(json!([{"type": "string"}, {"type": "object", "required": ["name"]}])),
        );
        assert!(
            found.iter().all(|(r, _)| *r == RuleId::TypeWidened),
            "{found:?}"
        );
    }

    /// Found by the evidence bench (Confluent's allOf pairs): conjuncts are laid together and
    /// compared; two that bound one keyword differently stay undecided.
    #[test]
    fn conjunctions_are_laid_together() {
        let found = pointed(
            json!({"allOf": [{"type": "string"}, {"enum": ["red"]}]}),
            json!({"allOf": [{"type": "string"}, {"enum": ["blue"]}]}),
        );
        assert_eq!(found, [(RuleId::EnumNarrowed, "/s/allOf/1/enum".into())]);
        let found = pointed(
            json!({"type": "object", "properties": {"p": {"allOf": [{"type": "string"}]}}}),
            json!({"type": "object", "properties": {"p": {"allOf": [{"enum": ["a"]}, {"type": "string"}]}}}),
        );
        assert!(breaking(&found), "{found:?}");
        let clash = json!({"allOf": [{"maxLength": 3}, {"maxLength": 5}]});
        let found = pointed(json!({"type": "string"}), clash);
        assert!(
            found.contains(&(RuleId::SchemaChanged, "/s/allOf".into())),
            "{found:?}"
        );
    }

    /// Found by the evidence bench: tuples, `not` and dependencies were "cannot be decided".
    #[test]
    fn tuples_not_and_dependencies_are_decided() {
        let tuple = |third: serde_json::Value| {
            json!({"type": "array", "prefixItems": [{"type": "string"}, third],
                   "items": {"type": "string"}})
        };
        assert_eq!(
            pointed(
                tuple(json!({"type": "string"})),
                tuple(json!({"type": "number"}))
            ),
            [(RuleId::TypeChanged, "/s/prefixItems/1/type".into())]
        );
        // A position added that its old rest schema already allowed the same way: nothing.
        let found = pointed(
            json!({"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "number"}}),
            json!({"type": "array", "items": [{"type": "string"}, {"type": "number"}],
                   "additionalItems": {"type": "number"}}),
        );
        assert_eq!(found, []);
        // `not` reads the other way: excluding more narrows, excluding less widens.
        let not = |t: serde_json::Value| json!({"not": {"type": t}});
        assert_eq!(
            pointed(not(json!("string")), not(json!(["string", "number"]))),
            [(RuleId::TypeNarrowed, "/s/not".into())]
        );
        assert_eq!(
            pointed(not(json!(["string", "number"])), not(json!("string"))),
            [(RuleId::TypeWidened, "/s/not".into())]
        );
        let dep = |d: serde_json::Value| json!({"type": "object", "dependentRequired": d});
        assert_eq!(
            pointed(dep(json!({"a": ["b"]})), dep(json!({"a": ["b", "c"]}))),
            [(RuleId::BoundTightened, "/s/dependentRequired/a".into())]
        );
        let found = pointed(
            json!({"type": "object"}),
            json!({"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}}),
        );
        assert!(breaking(&found), "{found:?}");
    }

    /// Found by the evidence bench (sentry's add_property_in_array): an argument's own object
    /// with no declared properties is a free-form map; declaring a key's type there constrains
    /// what callers may already send. The tool's parameters themselves are not such a map.
    #[test]
    fn a_key_constrained_in_a_free_form_argument_narrows() {
        let meta = |m: serde_json::Value| json!({"type": "object", "properties": {"meta": m}});
        let found = pointed(
            meta(json!({"type": "object"})),
            meta(json!({"type": "object", "properties": {"id": {"type": "string"}}})),
        );
        assert_eq!(
            found,
            [(
                RuleId::TypeNarrowed,
                "/s/properties/meta/properties/id".into()
            )]
        );
        // A key described but unconstrained, and a new parameter of the tool: info only.
        let found = pointed(
            meta(json!({"type": "object"})),
            meta(json!({"type": "object", "properties": {"id": {"description": "any"}}})),
        );
        assert!(!breaking(&found), "{found:?}");
        let found = pointed(
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        );
        assert_eq!(
            found,
            [(RuleId::PropertyAddedOptional, "/s/properties/id".into())]
        );
    }

    /// Found probing nested sums: six levels of `anyOf` (57 KB) spent the visit budget inside
    /// trial comparisons, whose empty results then read as "accepts everything": a changed
    /// bound came out as no change at all. Trials are remembered, and a spent budget is said
    /// at the root whatever the trials returned.
    #[test]
    fn nested_sums_are_compared_once_and_a_spent_budget_is_never_silent() {
        let nest = |depth: usize, max: u64| {
            let mut s = json!({"type": "string", "maxLength": max});
            for _ in 0..depth {
                s = json!({"anyOf": [s.clone(), {"type": "object", "properties": {"a": s.clone()}},
                                     {"allOf": [s, {"maxLength": 3}]}]});
            }
            s
        };
        let found = pointed(nest(6, 5), nest(6, 4));
        assert!(
            breaking(&found),
            "a tightened bound six sums deep: {found:?}"
        );
        let start = std::time::Instant::now();
        let found = pointed(nest(8, 5), nest(8, 4));
        assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
        assert!(!found.is_empty(), "eight sums deep: never silent");
    }

    /// Found reviewing the change: a conjunct or branch that refers back to the schema itself
    /// (`allOf: [{$ref: "#"}]`) was laid in again and again until the stack overflowed — a
    /// crash a pull request could cause. The nesting of comparisons is bounded and said.
    #[test]
    fn self_referencing_combinators_end_and_say_so() {
        for key in ["allOf", "anyOf", "oneOf"] {
            let side = |t: &str| {
                json!({"type": "object", key: [{"$ref": "#"}, {"type": "object"}],
                       "properties": {"a": {"type": t}}})
            };
            let found = pointed(side("string"), side("number"));
            assert!(!found.is_empty(), "{key}: {found:?}");
        }
    }
}

//! Verbs, as data: the one table of verb pairs (opposites and near-misses), reading and mutating
//! verbs, and first words that are not verbs. Two tools whose names carry opposite actions
//! (`read_x` / `write_x`) look alike on every lexical measure yet are never interchangeable.

/// How the two verbs of a pair relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Each undoes or mirrors the other (`read`/`write`): two tools apart only by these are never
    /// interchangeable, so lint vetoes the pair.
    Mirror,
    /// Different actions on the same thing that agents confuse (`schedule`/`reschedule`): not
    /// opposites, but a swap an edit can make.
    Near,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerbPair {
    pub a: &'static str,
    pub b: &'static str,
    pub relation: Relation,
    /// Used by `stress`'s inverted-polarity edit; table order is its order of preference.
    pub perturb: bool,
}

const fn pair(a: &'static str, b: &'static str, relation: Relation, perturb: bool) -> VerbPair {
    VerbPair {
        a,
        b,
        relation,
        perturb,
    }
}

use Relation::{Mirror, Near};

/// The one table of verb pairs, read by lint (mirrors) and stress (the perturbing pairs, in
/// order). Order inside a pair does not matter; tokens are compared after
/// [`crate::text::terms::stem`], so list singular base forms.
pub const VERB_PAIRS: &[VerbPair] = &[
    pair("schedule", "reschedule", Near, true),
    pair("schedule", "cancel", Near, true),
    pair("book", "cancel", Near, true),
    pair("add", "remove", Mirror, true),
    pair("create", "delete", Mirror, true),
    pair("insert", "delete", Mirror, true),
    pair("read", "write", Mirror, true),
    pair("get", "set", Mirror, true),
    pair("open", "close", Mirror, true),
    pair("enable", "disable", Mirror, true),
    pair("start", "stop", Mirror, true),
    pair("lock", "unlock", Mirror, true),
    pair("upload", "download", Mirror, true),
    pair("import", "export", Mirror, true),
    pair("push", "pull", Mirror, true),
    pair("send", "receive", Mirror, true),
    pair("show", "hide", Mirror, true),
    pair("include", "exclude", Mirror, true),
    pair("allow", "deny", Mirror, true),
    pair("attach", "detach", Mirror, true),
    pair("subscribe", "unsubscribe", Mirror, true),
    pair("archive", "unarchive", Mirror, true),
    pair("move", "copy", Near, true),
    pair("create", "destroy", Mirror, false),
    pair("create", "remove", Mirror, false),
    pair("add", "delete", Mirror, false),
    pair("encrypt", "decrypt", Mirror, false),
    pair("encode", "decode", Mirror, false),
    pair("compress", "decompress", Mirror, false),
    pair("serialize", "deserialize", Mirror, false),
    pair("get", "put", Mirror, false),
    pair("start", "end", Mirror, false),
    pair("begin", "end", Mirror, false),
    pair("pause", "resume", Mirror, false),
    pair("activate", "deactivate", Mirror, false),
    pair("connect", "disconnect", Mirror, false),
    pair("follow", "unfollow", Mirror, false),
    pair("mount", "unmount", Mirror, false),
    pair("install", "uninstall", Mirror, false),
    pair("grant", "revoke", Mirror, false),
    pair("approve", "reject", Mirror, false),
    pair("accept", "decline", Mirror, false),
    pair("accept", "reject", Mirror, false),
    pair("increase", "decrease", Mirror, false),
    pair("increment", "decrement", Mirror, false),
    pair("login", "logout", Mirror, false),
    pair("stage", "unstage", Mirror, false),
    pair("pin", "unpin", Mirror, false),
    pair("block", "unblock", Mirror, false),
    pair("link", "unlink", Mirror, false),
    pair("assign", "unassign", Mirror, false),
    pair("select", "deselect", Mirror, false),
    pair("check", "uncheck", Mirror, false),
    pair("expand", "collapse", Mirror, false),
    pair("maximize", "minimize", Mirror, false),
    pair("save", "load", Mirror, false),
    pair("join", "leave", Mirror, false),
    pair("merge", "split", Mirror, false),
    pair("freeze", "unfreeze", Mirror, false),
    pair("mute", "unmute", Mirror, false),
    pair("star", "unstar", Mirror, false),
    pair("like", "unlike", Mirror, false),
    pair("register", "unregister", Mirror, false),
    pair("register", "deregister", Mirror, false),
];

/// Pairs whose verbs undo or mirror each other.
pub fn mirrors() -> impl Iterator<Item = (&'static str, &'static str)> {
    VERB_PAIRS
        .iter()
        .filter(|p| p.relation == Mirror)
        .map(|p| (p.a, p.b))
}

/// Pairs `stress` swaps to invert a description's polarity, in order of preference.
pub fn perturbing() -> impl Iterator<Item = (&'static str, &'static str)> {
    VERB_PAIRS.iter().filter(|p| p.perturb).map(|p| (p.a, p.b))
}

/// Prefixes that negate any verb (`hide` / `unhide`), for verbs the table does not list. Only
/// `un`: `dis`/`de` make false pairs of ordinary words (`patch` / `dispatch`, `sign` / `design`),
/// so their real pairs are listed in the table instead.
pub const NEGATING_PREFIXES: &[&str] = &["un"];

/// Actions that only look. A tool leading with one of these and a tool leading with a
/// [`MUTATING_VERBS`] one differ in effect (`get_issue` / `update_issue`), however alike the rest.
pub const READING_VERBS: &[&str] = &[
    "get", "list", "read", "search", "find", "fetch", "query", "show", "view", "describe",
    "lookup", "retrieve", "browse", "inspect", "count", "download", "export", "status", "log",
    "diff",
];

/// Actions that change state.
pub const MUTATING_VERBS: &[&str] = &[
    "create",
    "update",
    "delete",
    "write",
    "set",
    "edit",
    "modify",
    "remove",
    "add",
    "put",
    "patch",
    "merge",
    "move",
    "rename",
    "push",
    "insert",
    "upload",
    "commit",
    "reset",
    "cancel",
    "send",
    "post",
    "fork",
    "install",
    "uninstall",
    "drop",
    "clear",
    "replace",
    "upsert",
    "save",
    "import",
    "append",
    "checkout",
    "toggle",
];

/// Verbs that name the same action in tool descriptions: writing one for another keeps the
/// meaning ("Add a comment" / "Create a comment"). Stems, as `terms::stem` leaves them.
pub const SAME_ACTION: &[&[&str]] = &[
    &["add", "create", "insert", "make", "new", "append"],
    &[
        "get", "fetch", "retrieve", "obtain", "read", "return", "load", "access", "download",
    ],
    &["list", "show", "display", "enumerate", "view", "browse"],
    &["find", "search", "locate", "look", "query", "lookup"],
    &[
        "update", "modify", "change", "edit", "set", "alter", "patch",
    ],
    &["delete", "remove", "erase", "drop", "clear", "destroy"],
    &[
        "run", "execute", "invoke", "call", "perform", "launch", "start",
    ],
    &["send", "post", "submit", "publish"],
    &["write", "save", "store", "persist"],
    &["describe", "explain", "summarize", "detail"],
    &["check", "verify", "validate", "test", "inspect"],
    &["navigate", "open", "go", "visit"],
];

/// Whether two verb stems name the same action (equal, or in one `SAME_ACTION` group).
pub fn same_action(a: &str, b: &str) -> bool {
    a == b || SAME_ACTION.iter().any(|g| g.contains(&a) && g.contains(&b))
}

/// First words that are not verbs: a description starting with them has no leading verb to move.
pub const NOT_VERBS: &[&str] = &[
    "a",
    "an",
    "the",
    "this",
    "these",
    "that",
    "those",
    "it",
    "its",
    "for",
    "in",
    "to",
    "with",
    "when",
    "if",
    "use",
    "all",
    "each",
    "every",
    "some",
    "any",
    "one",
    "tool",
    "note",
    "deprecated",
];

/// When one name leads with a reading verb and the other with a mutating one, the two verbs.
pub fn effect_differs(a: &[String], b: &[String]) -> Option<(String, String)> {
    let (x, y) = (a.first()?, b.first()?);
    let reads = |v: &String| READING_VERBS.contains(&v.as_str());
    let writes = |v: &String| MUTATING_VERBS.contains(&v.as_str());
    ((reads(x) && writes(y)) || (writes(x) && reads(y))).then(|| (x.clone(), y.clone()))
}

/// The first opposing pair found between the two token lists (each token of `a` against each
/// of `b`), as `(a's verb, b's verb)`. A token both names share is not a difference, so it
/// cannot oppose: `get_or_set` vs `set` is not vetoed on `get`/`set`.
pub fn opposed(a: &[String], b: &[String]) -> Option<(String, String)> {
    let only_a: Vec<&String> = a.iter().filter(|t| !b.contains(t)).collect();
    let only_b: Vec<&String> = b.iter().filter(|t| !a.contains(t)).collect();
    for x in &only_a {
        for y in &only_b {
            if is_opposed(x, y) {
                return Some(((*x).clone(), (*y).clone()));
            }
        }
    }
    None
}

fn is_opposed(x: &str, y: &str) -> bool {
    if mirrors().any(|(p, q)| (x == p && y == q) || (x == q && y == p)) {
        return true;
    }
    // A remainder this short is not a verb ("unit" is not "un" + "it").
    let negates = |long: &str, short: &str| {
        short.len() >= 3
            && NEGATING_PREFIXES
                .iter()
                .any(|p| long.strip_prefix(p) == Some(short))
    };
    negates(x, y) || negates(y, x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        s.split('_').map(String::from).collect()
    }

    #[test]
    fn table_pairs_oppose_in_either_order() {
        for (p, q) in mirrors() {
            let (p1, q1) = (toks(p), toks(q));
            assert!(opposed(&p1, &q1).is_some(), "{p}/{q} not opposed");
            assert!(is_opposed(q, p), "{q}/{p}");
        }
        assert_eq!(
            opposed(&toks("read_file"), &toks("write_file")),
            Some(("read".into(), "write".into()))
        );
        assert_eq!(
            opposed(&toks("decrypt_blob"), &toks("encrypt_blob")),
            Some(("decrypt".into(), "encrypt".into()))
        );
    }

    #[test]
    fn negating_prefixes_cover_unlisted_verbs() {
        assert!(opposed(&toks("hide_panel"), &toks("unhide_panel")).is_some());
        // A two-letter remainder is not a verb: "unit" does not negate "it".
        assert!(!is_opposed("unit", "it"));
        // Ordinary words that merely start like a negation are not opposites.
        assert!(!is_opposed("dispatch", "patch"));
        assert!(!is_opposed("design", "sign"));
    }

    #[test]
    fn reading_and_mutating_leads_differ_in_effect() {
        assert_eq!(
            effect_differs(&toks("get_issue"), &toks("update_issue")),
            Some(("get".into(), "update".into()))
        );
        assert_eq!(
            effect_differs(&toks("list_issues"), &toks("get_issue")),
            None
        );
        assert_eq!(
            effect_differs(&toks("create_issue"), &toks("update_issue")),
            None
        );
        // Only the leading verb counts: `update` later in a name is an object, not the action.
        assert_eq!(
            effect_differs(&toks("get_update"), &toks("list_updates")),
            None
        );
        for v in READING_VERBS {
            assert!(!MUTATING_VERBS.contains(v), "{v} in both lists");
        }
    }

    #[test]
    fn unrelated_or_shared_verbs_do_not_oppose() {
        assert_eq!(opposed(&toks("read_file"), &toks("read_text_file")), None);
        assert_eq!(
            opposed(&toks("list_directory"), &toks("create_directory")),
            None
        );
        // `set` is in both names, so it is not what tells them apart.
        assert_eq!(opposed(&toks("get_or_set"), &toks("set_value")), None);
    }
}

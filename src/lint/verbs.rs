//! Opposing verbs, as data. Two tools whose names carry opposite actions (`read_x` / `write_x`)
//! look alike on every lexical measure yet are never interchangeable: the pair is vetoed.

/// Pairs of actions that undo or mirror each other. Order inside a pair does not matter; tokens
/// are compared after [`super::text::stem`], so list singular base forms.
pub const OPPOSING_VERBS: &[(&str, &str)] = &[
    ("read", "write"),
    ("create", "delete"),
    ("create", "destroy"),
    ("create", "remove"),
    ("insert", "delete"),
    ("add", "remove"),
    ("add", "delete"),
    ("encrypt", "decrypt"),
    ("encode", "decode"),
    ("compress", "decompress"),
    ("serialize", "deserialize"),
    ("get", "set"),
    ("get", "put"),
    ("open", "close"),
    ("start", "stop"),
    ("start", "end"),
    ("begin", "end"),
    ("pause", "resume"),
    ("lock", "unlock"),
    ("enable", "disable"),
    ("activate", "deactivate"),
    ("show", "hide"),
    ("push", "pull"),
    ("upload", "download"),
    ("import", "export"),
    ("attach", "detach"),
    ("connect", "disconnect"),
    ("subscribe", "unsubscribe"),
    ("follow", "unfollow"),
    ("mount", "unmount"),
    ("install", "uninstall"),
    ("grant", "revoke"),
    ("approve", "reject"),
    ("accept", "decline"),
    ("accept", "reject"),
    ("allow", "deny"),
    ("increase", "decrease"),
    ("increment", "decrement"),
    ("login", "logout"),
    ("send", "receive"),
    ("stage", "unstage"),
    ("archive", "unarchive"),
    ("pin", "unpin"),
    ("block", "unblock"),
    ("link", "unlink"),
    ("assign", "unassign"),
    ("select", "deselect"),
    ("check", "uncheck"),
    ("expand", "collapse"),
    ("maximize", "minimize"),
    ("save", "load"),
    ("join", "leave"),
    ("merge", "split"),
    ("freeze", "unfreeze"),
    ("mute", "unmute"),
    ("star", "unstar"),
    ("like", "unlike"),
    ("register", "unregister"),
    ("register", "deregister"),
];

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
    if OPPOSING_VERBS
        .iter()
        .any(|&(p, q)| (x == p && y == q) || (x == q && y == p))
    {
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
        for &(p, q) in OPPOSING_VERBS {
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

//! Cue words that change what a description says a tool does: negations (read anywhere, by
//! `diff::shift`) and the openings that make a sentence a prohibition (read at a sentence's
//! start, by the semantic router). Two lists on purpose: "does not exist yet" negates a fact
//! about the tool, "Do not use this to …" forbids a use.

/// Words that negate what follows. Contractions are split first ("don't" → "do not").
pub const NEGATIONS: &[&str] = &[
    "not", "never", "no", "none", "nothing", "neither", "nor", "without",
];

/// Openings that turn a sentence into a prohibition.
pub const PROHIBITIONS: [&str; 7] = [
    "do not ",
    "don't ",
    "never ",
    "must not ",
    "should not ",
    "not for ",
    "avoid ",
];

/// What a sentence that opens with a prohibition forbids ("Do not use this to delete files." →
/// "use this to delete files."); `None` for any other sentence.
pub fn prohibition(sentence: &str) -> Option<&str> {
    let t = sentence.trim_start();
    PROHIBITIONS.iter().find_map(|p| {
        let head = t.get(..p.len())?;
        head.eq_ignore_ascii_case(p)
            .then(|| t[p.len()..].trim_start())
            .filter(|rest| !rest.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prohibition_is_what_it_forbids_and_nothing_else_is_one() {
        assert_eq!(
            prohibition("Do not use this to delete files."),
            Some("use this to delete files.")
        );
        assert_eq!(
            prohibition("  NEVER returns secrets"),
            Some("returns secrets")
        );
        assert_eq!(prohibition("Don't guess paths"), Some("guess paths"));
        assert_eq!(
            prohibition("Not for archived notes"),
            Some("archived notes")
        );
        // A negation inside the sentence is a fact about the tool, not a prohibition.
        assert_eq!(
            prohibition("Use this when the visit does not exist yet."),
            None
        );
        assert_eq!(prohibition("Nothing is deleted."), None);
        assert_eq!(prohibition("Do not "), None, "nothing left to forbid");
        assert_eq!(prohibition("Dö not x"), None);
    }
}

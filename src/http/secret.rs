//! Secrets (API keys, tokens): never printed.
//!
//! A key lives in a `Secret`, whose `Debug`/`Display` print `***`, so a stray `{:?}` of a client
//! or a request cannot leak it. Servers are less careful: some echo request headers back in error
//! bodies, so every message built from a response goes through `redact` (or `clean_message`)
//! first. This is the one redaction: routers, drafting, embeddings, GitHub and live MCP servers
//! all mask with it.

use std::fmt;

/// What a secret is replaced with wherever it would be shown.
pub const MASK: &str = "***";

/// A credential. Deliberately not `Serialize` and not `PartialEq` with strings.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Surrounding whitespace is dropped: a key read from a file via `$(cat key)` often ends in a
    /// newline, which is not allowed in an HTTP header.
    pub fn new(value: impl Into<String>) -> Secret {
        let value = value.into();
        let trimmed = value.trim();
        if trimmed.len() == value.len() {
            Secret(value)
        } else {
            Secret(trimmed.to_string())
        }
    }

    /// The key itself, for the one place that needs it: the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

/// `text` with every occurrence of every secret replaced by `***`.
///
/// Longer secrets are replaced first so that a secret containing another is masked whole.
pub fn redact(text: &str, secrets: &[Secret]) -> String {
    let mut sorted: Vec<&str> = secrets
        .iter()
        .map(Secret::expose)
        .filter(|s| !s.is_empty())
        .collect();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for s in sorted {
        if out.contains(s) {
            out = out.replace(s, MASK);
        }
    }
    out
}

/// The shortest piece of a secret masked where a cut left only part of it.
const MIN_PIECE: usize = 6;

/// `redact`, and also a piece of a secret that a cut left at either end of `text` (a tail of
/// stderr may start in the middle of one, a bounded message end in one): the last characters of
/// a secret at the very start, its first characters at the very end, six or more of them.
pub fn redact_cut(text: &str, secrets: &[Secret]) -> String {
    let mut out = redact(text, secrets);
    for s in secrets.iter().map(Secret::expose) {
        let chars: Vec<(usize, char)> = s.char_indices().collect();
        // Longest piece first, so the whole visible part is masked.
        for k in (MIN_PIECE..chars.len()).rev() {
            let prefix = &s[..chars[k].0];
            if out.ends_with(prefix) {
                out.truncate(out.len() - prefix.len());
                out.push_str(MASK);
                break;
            }
        }
        for k in 1..chars.len().saturating_sub(MIN_PIECE - 1) {
            let suffix = &s[chars[k].0..];
            if suffix.chars().count() >= MIN_PIECE && out.starts_with(suffix) {
                out = format!("{MASK}{}", &out[suffix.len()..]);
                break;
            }
        }
    }
    out
}

/// Messages shown to users are cut to this many characters: an HTML error page or a long echo
/// helps nobody in a report.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// A message fit for a report: secrets masked first (so a cut can never leave half a key), then
/// control characters and runs of whitespace collapsed to one space, then cut to
/// `MAX_MESSAGE_CHARS` with a trailing `…`.
pub fn clean_message(text: &str, secrets: &[Secret]) -> String {
    let redacted = redact(text, secrets);
    let one_line = redacted
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    match one_line.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_show_the_key() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(format!("{:?}", Some(s.clone())), "Some(***)");
        assert_eq!(s.expose(), "sk-live-123");
    }

    #[test]
    fn surrounding_whitespace_is_dropped() {
        assert_eq!(Secret::new("  k\n").expose(), "k");
    }

    #[test]
    fn redact_masks_every_occurrence_of_every_secret() {
        let a = Secret::new("sk-abc");
        let b = Secret::new("token-9");
        let text = "Bearer sk-abc rejected; key sk-abc / token-9";
        assert_eq!(redact(text, &[a, b]), "Bearer *** rejected; key *** / ***");
    }

    #[test]
    fn redact_masks_the_longer_of_overlapping_secrets_whole() {
        let short = Secret::new("abc");
        let long = Secret::new("abcdef");
        assert_eq!(redact("x abcdef y abc", &[short, long]), "x *** y ***");
    }

    #[test]
    fn redact_ignores_empty_secrets_and_leaves_other_text_alone() {
        assert_eq!(redact("nothing here", &[Secret::new("")]), "nothing here");
        assert_eq!(redact("nothing here", &[]), "nothing here");
    }

    #[test]
    fn pieces_of_a_secret_left_by_a_cut_are_masked() {
        let key = Secret::new("sk-live-0123456789");
        // A stderr tail that starts inside the key, and a message that ends inside it.
        assert_eq!(
            redact_cut("0123456789 was rejected", std::slice::from_ref(&key)),
            "*** was rejected"
        );
        assert_eq!(
            redact_cut("token: sk-live-01", std::slice::from_ref(&key)),
            "token: ***"
        );
        // Short coincidences are left alone.
        assert_eq!(
            redact_cut("789 ok sk-", std::slice::from_ref(&key)),
            "789 ok sk-"
        );
        assert_eq!(redact_cut("a sk-live-0123456789 b", &[key]), "a *** b");
    }

    #[test]
    fn clean_message_redacts_before_cutting_and_keeps_one_line() {
        let key = Secret::new("sk-0123456789");
        // The key straddles the cut: redacting after cutting would leave "sk-01234" visible.
        let text = format!("{}\n\t{}", "é".repeat(MAX_MESSAGE_CHARS - 6), key.expose());
        let cleaned = clean_message(&text, &[key]);
        assert_eq!(
            cleaned,
            format!("{} ***", "é".repeat(MAX_MESSAGE_CHARS - 6))
        );
        assert_eq!(clean_message("a\r\n  b\u{0}c", &[]), "a b c");
        let long = "x".repeat(2 * MAX_MESSAGE_CHARS);
        let cut = clean_message(&long, &[]);
        assert_eq!(cut.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}

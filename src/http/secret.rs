//! Secrets (API keys, tokens): never printed.
//!
//! A key lives in a `Secret`, whose `Debug`/`Display` print `***`, so a stray `{:?}` of a client
//! or a request cannot leak it. Servers are less careful: some echo request headers back in error
//! bodies, so every message built from a response goes through `redact` (or `clean_message`)
//! first. This is the one redaction: routers, drafting, embeddings, GitHub and live MCP servers
//! all mask with it.
//!
//! Text we hold no secret for (prompts read from production logs by `suite import`) is masked by
//! shape instead: [`scrub`] replaces what looks like an email address, a key or token, or a long
//! run of digits (a phone, card or account number), and says how many of each it replaced.

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

/// Shorter values are not held for output masking: a 3-letter value would garble every word it
/// occurs in, and is no credential.
const MIN_HELD: usize = 6;

/// The process's credentials, for masking everything it writes (like the runner's
/// `::add-mask::`): every key it loaded, every configured header, every environment value whose
/// name says it is a credential. Registered by `app` as it reads them.
static HELD: std::sync::RwLock<Vec<Secret>> = std::sync::RwLock::new(Vec::new());

/// Mask `secrets` in everything this process writes from now on: each value as it is, and as
/// base64 (standard, unpadded, URL-safe) and hex, the encodings a server that wants a token out
/// would reach for first.
pub fn hold(secrets: impl IntoIterator<Item = Secret>) {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let mut held = HELD.write().unwrap_or_else(|e| e.into_inner());
    for s in secrets {
        if s.expose().chars().count() < MIN_HELD || held.contains(&s) {
            continue;
        }
        let raw = s.expose().as_bytes();
        let encodings = [
            STANDARD.encode(raw),
            STANDARD_NO_PAD.encode(raw),
            URL_SAFE_NO_PAD.encode(raw),
            hex::encode(raw),
        ];
        held.push(s);
        for e in encodings {
            let e = Secret::new(e);
            if !held.contains(&e) {
                held.push(e);
            }
        }
    }
}

/// `text` with every held credential masked (see [`hold`]); borrowed when there is none in it.
/// A credential with invisible characters threaded through it (`g\u{200B}h\u{200B}s_…`, which
/// every renderer shows as visible escapes a reader could strip) is masked whole, invisible
/// characters and all.
pub fn mask_held(text: &str) -> std::borrow::Cow<'_, str> {
    let held = HELD.read().unwrap_or_else(|e| e.into_inner());
    if held.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = std::borrow::Cow::Borrowed(text);
    if held.iter().any(|s| text.contains(s.expose())) {
        out = std::borrow::Cow::Owned(redact(text, &held));
    }
    if crate::text::unicode::has_hidden(&out)
        && let Some(m) = mask_threaded(&out, &held)
    {
        out = std::borrow::Cow::Owned(m);
    }
    out
}

/// `text` with each held secret that occurs once its hidden characters are skipped masked over
/// its whole span in the original; `None` when there is none.
fn mask_threaded(text: &str, held: &[Secret]) -> Option<String> {
    // The visible characters, each with its byte range in `text`.
    let mut visible = String::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (i, c) in text.char_indices() {
        // A tag character spells its ASCII letter invisibly: read as that letter.
        let seen = match crate::text::unicode::tag_ascii(c) {
            Some(a) => Some(a),
            None if crate::text::unicode::hidden(c).is_some() => None,
            None => Some(c),
        };
        if let Some(v) = seen {
            visible.push(v);
            for _ in 0..v.len_utf8() {
                spans.push((i, i + c.len_utf8()));
            }
        }
    }
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for s in held.iter().map(Secret::expose) {
        for (at, _) in visible.match_indices(s) {
            cut.push((spans[at].0, spans[at + s.len() - 1].1));
        }
    }
    if cut.is_empty() {
        return None;
    }
    cut.sort();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (a, b) in cut {
        if a < pos {
            pos = pos.max(b);
            continue;
        }
        out.push_str(&text[pos..a]);
        out.push_str(MASK);
        pos = b;
    }
    out.push_str(&text[pos..]);
    Some(out)
}

/// Whether any held credential occurs in `text`.
pub fn holds_any(text: &str) -> bool {
    matches!(mask_held(text), std::borrow::Cow::Owned(_))
}

/// Every string of `v` (keys too) with held credentials masked; how many strings held one.
pub fn mask_value(v: &mut serde_json::Value) -> usize {
    use serde_json::Value;
    match v {
        Value::String(s) => match mask_held(s) {
            std::borrow::Cow::Owned(m) => {
                *s = m;
                1
            }
            std::borrow::Cow::Borrowed(_) => 0,
        },
        Value::Array(a) => a.iter_mut().map(mask_value).sum(),
        Value::Object(o) => {
            let mut n = 0;
            let keys: Vec<String> = o.keys().filter(|k| holds_any(k)).cloned().collect();
            for k in keys {
                let v = o.remove(&k).expect("listed");
                o.insert(mask_held(&k).into_owned(), v);
                n += 1;
            }
            n + o.values_mut().map(mask_value).sum::<usize>()
        }
        _ => 0,
    }
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

/// What [`scrub`] recognises by shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pii {
    Email,
    /// API keys, tokens, bearer credentials, JWTs, long mixed letter-and-digit strings.
    Key,
    /// Nine or more digits in a row, or grouped like a phone or card number.
    Digits,
}

impl Pii {
    pub const ALL: [Pii; 3] = [Pii::Email, Pii::Key, Pii::Digits];

    pub fn name(self) -> &'static str {
        match self {
            Pii::Email => "email",
            Pii::Key => "key",
            Pii::Digits => "digits",
        }
    }

    /// What replaces a match: says what was there, never any of it.
    pub fn placeholder(self) -> &'static str {
        match self {
            Pii::Email => "[redacted email]",
            Pii::Key => "[redacted key]",
            Pii::Digits => "[redacted digits]",
        }
    }
}

/// The shapes, in the order they are masked: an email before the digits in it, a key before
/// the digits in it. Each pattern is linear-time (Rust's regex), so hostile text costs its length.
fn pii_patterns() -> &'static [(Pii, regex::Regex)] {
    static PATTERNS: std::sync::LazyLock<Vec<(Pii, regex::Regex)>> = std::sync::LazyLock::new(
        || {
            let re = |s: &str| regex::Regex::new(s).expect("a valid pattern");
            vec![
                (
                    Pii::Email,
                    re(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
                ),
                (
                    Pii::Key,
                    re(concat!(
                        // A PEM block (a private key pasted into a prompt), whole, or to the end
                        // of the text when a cut took its last line.
                        r"(?s:-----BEGIN [A-Z0-9 ]{1,40}-----.*?(?:-----END [A-Z0-9 ]{1,40}-----|\z))",
                        r"|(?i:bearer)\s+[A-Za-z0-9._~+/-]{12,}=*",
                        r"|(?i:basic)\s+[A-Za-z0-9+/]{8,}={0,2}",
                        // user:password@ in a URL.
                        r"|\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@",
                        r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}",
                        r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}",
                        r"|\bxox[abprs]-[A-Za-z0-9-]{10,}",
                        r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
                        r"|\bAIza[0-9A-Za-z_-]{35}",
                        r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
                    )),
                ),
                // Grouped (+44 20 7946 0958, 555-123-4567, 4111 1111 1111 1111; not 2025-05-14) or a bare run.
                (
                    Pii::Digits,
                    re(r"(?:\+\d{1,3}[ .-]?)?\(?\b\d{2,4}\)?(?:[ .-]\d{3,4}){2,}\b|\b\d{9,}\b"),
                ),
            ]
        },
    );
    &PATTERNS
}

/// A string of 32 or more letters, digits, `_` and `-` with both letters and digits in it: a
/// key of no known prefix (hex or base64url). Words and paths do not qualify.
fn generic_key(word: &str) -> bool {
    word.len() >= 32
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// A base64 secret of no known prefix (an AWS secret access key is 40 of them): 32 or more
/// letters, digits, `+` and `/`, with upper- and lower-case letters, a digit and a `+` or `/`,
/// whose characters switch between upper case, lower case and digits at least every third
/// character on average. Random base64 switches at about 6 of 10; a path of CamelCase names
/// (`Documents/Projects/QuarterlyReport2024`) at under 2 of 10.
fn base64_key(word: &str) -> bool {
    let b = word.trim_end_matches('=').as_bytes();
    if b.len() < 32
        || !(b.contains(&b'+') || b.contains(&b'/'))
        || b.starts_with(b"/")
        || word.contains("//")
    {
        return false;
    }
    let class = |c: u8| match c {
        b'A'..=b'Z' => 1,
        b'a'..=b'z' => 2,
        b'0'..=b'9' => 3,
        _ => 0,
    };
    let classes: Vec<u8> = b.iter().map(|c| class(*c)).filter(|c| *c > 0).collect();
    let has = |k: u8| classes.contains(&k);
    let switches = classes.windows(2).filter(|w| w[0] != w[1]).count();
    has(1) && has(2) && has(3) && switches * 10 >= classes.len() * 3
}

/// `text` with every email, key-looking and long-digit token replaced by its [`Pii::placeholder`],
/// and how many of each kind were replaced (kinds with none are absent).
pub fn scrub(text: &str) -> (String, Vec<(Pii, usize)>) {
    let mut out = text.to_string();
    let mut found = Vec::new();
    for (kind, re) in pii_patterns() {
        let mut n = re.find_iter(&out).count();
        if n > 0 {
            out = re.replace_all(&out, kind.placeholder()).into_owned();
        }
        if *kind == Pii::Key {
            static WORD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
                regex::Regex::new(r"[A-Za-z0-9_-]{32,}").expect("valid")
            });
            static BASE64: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
                regex::Regex::new(r"[A-Za-z0-9+/]{32,}={0,2}").expect("valid")
            });
            for (word, is_key) in [
                (&*BASE64, base64_key as fn(&str) -> bool),
                (&*WORD, generic_key),
            ] {
                let before = out.clone();
                out = word
                    .replace_all(&before, |c: &regex::Captures<'_>| {
                        if is_key(&c[0]) {
                            n += 1;
                            Pii::Key.placeholder().to_string()
                        } else {
                            c[0].to_string()
                        }
                    })
                    .into_owned();
            }
        }
        if n > 0 {
            found.push((*kind, n));
        }
    }
    (out, found)
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

    #[test]
    fn scrub_masks_emails_keys_and_long_digits_by_shape() {
        let (out, found) = scrub(
            "Mail ana.lopez+q3@example.co.uk, key sk-proj-abcdefghijklmnop1234 and \
             Bearer eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl; call +1 415-555-0132 or card \
             4111 1111 1111 1111; account 123456789012; ghp_0123456789abcdefghijABCDEFGHIJ",
        );
        assert_eq!(
            out,
            "Mail [redacted email], key [redacted key] and [redacted key]; call [redacted digits] \
             or card [redacted digits]; account [redacted digits]; [redacted key]"
        );
        assert_eq!(found, [(Pii::Email, 1), (Pii::Key, 3), (Pii::Digits, 3)]);
    }

    #[test]
    fn held_secrets_are_masked_encoded_and_threaded_with_hidden_characters() {
        hold([Secret::new("ghs_heldTOKENvalue0042")]);
        let plain = "token ghs_heldTOKENvalue0042 end";
        assert_eq!(mask_held(plain), "token *** end");
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode("ghs_heldTOKENvalue0042");
        assert_eq!(mask_held(&format!("b64 {b64}.")), "b64 ***.");
        let hex = hex::encode("ghs_heldTOKENvalue0042");
        assert_eq!(mask_held(&format!("hex {hex}")), "hex ***");
        let threaded = "x g\u{200B}hs_held\u{2060}TOKENvalue\u{FE0F}0042 y";
        assert_eq!(mask_held(threaded), "x *** y");
        // Spelled in tag characters (invisible ASCII), whole or in part.
        let tags: String = "ghs_heldTOKEN"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        assert_eq!(mask_held(&format!("x {tags}value0042 y")), "x *** y");
        // Short values are never held: they would garble every word they occur in.
        hold([Secret::new("abc")]);
        assert_eq!(mask_held("abc abc"), "abc abc");
        let mut v =
            serde_json::json!({"ghs_heldTOKENvalue0042": ["ok", "a ghs_heldTOKENvalue0042"]});
        assert_eq!(mask_value(&mut v), 2);
        assert_eq!(v, serde_json::json!({"***": ["ok", "a ***"]}));
    }

    #[test]
    fn scrub_masks_aws_secret_keys_pem_bodies_basic_and_url_credentials() {
        let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----";
        let (out, found) = scrub(&format!(
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY and \
             also 9drTJvcXLB89EXAMPLEKEYtxYC+8ba9uF3kEXAMPLE1; here:\n{pem}\nthanks. \
             Authorization: Basic dXNlcjpwYXNzd29yZA== then https://ana:s3cr3tpw@db.example.com/x"
        ));
        assert_eq!(
            out,
            "aws_secret_access_key = [redacted key] and also [redacted key]; here:\n[redacted key]\nthanks. \
             Authorization: [redacted key] then https://ana:[redacted email]/x"
        );
        // The URL's password went with what looked like an email (`s3cr3tpw@db.example.com`).
        assert_eq!(found, [(Pii::Email, 1), (Pii::Key, 4)]);
        let (out, _) = scrub("dsn https://ana:s3cr3t@10.0.0.7:5432/db");
        assert_eq!(out, "dsn [redacted key]10.0.0.7:5432/db");
        // A cut that took the END line still masks the rest of the block.
        let (out, _) = scrub("key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7");
        assert_eq!(out, "key:\n[redacted key]");
    }

    #[test]
    fn scrub_costs_the_length_of_hostile_text() {
        // Near-misses of every shape, repeated: linear-time patterns finish at once.
        let text = "a.b@c 4111-11 sk-short eyJx.y ".repeat(40_000);
        let started = std::time::Instant::now();
        let (out, found) = scrub(&text);
        assert_eq!((out.len(), found.len()), (text.len(), 0));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn scrub_leaves_ordinary_text_dates_and_paths_alone() {
        for text in [
            "Book a room for 2024-05-17 at 10:30 for 12 people",
            "Read src/components/ButtonGroup/index.tsx and order #4521",
            "version 1.2.3, port 8080, zip 94103",
            "the_quick_brown_fox_jumps_over_the_lazy_dog_again",
            "Open /home/runner/work/driftgate/driftgate/src/app/settings.rs please",
            "Move Documents/Projects/QuarterlyReport2024/Summary.docx to Archive",
            "It is basically fine; the basic plan costs less",
        ] {
            assert_eq!(scrub(text), (text.to_string(), vec![]), "{text}");
        }
        // A hex key of no known prefix is a key; a sha of a commit looks the same (masked too).
        let (out, found) = scrub("token 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b");
        assert_eq!(out, "token [redacted key]");
        assert_eq!(found, [(Pii::Key, 1)]);
    }
}
